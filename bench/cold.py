"""(c) One cold command, in the process that runs this module: what a new CLI process pays for board size.

`python -m bench.cold URL SIGNAL_ID`: after the imports, build the application through its container
(engine, schema check, service), claim the signal, and print the timings as one JSON line, with what
the claim read: the SQL statements it ran, the signals its decision loaded (the unit of work's rows)
and the events it replayed (only while the read model is behind the log). Section (c) runs it on a
board of 10 signals and on one of 100,000 signals and 1,000,000 events, side by side, and times the whole process too.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import blackboard.infrastructure.composition.container  # noqa: F401 - imported before the clock starts, like the rest
from bench.common import AGENT, bench_container
from blackboard.application.commands import ClaimSignal
from blackboard.application.ports import BoardTransaction, Hold
from blackboard.infrastructure.persistence.unit_of_work import SqlUnitOfWork


class CountingUnitOfWork(SqlUnitOfWork):
    """The container's unit of work, noting what each decision read: the signals it loaded, and the
    events it replayed when the rows could not be trusted (below the port, for the figures only)."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.loaded: list[int] = []
        self.replayed: list[int] = []

    @contextmanager
    def board(self, blackboard_id: str, hold: Hold = Hold.BOARD) -> Iterator[BoardTransaction]:
        with super().board(blackboard_id, hold) as tx:
            history = tx.history

            def counted() -> list[Any]:
                events = history()
                self.replayed.append(len(events))
                return events

            tx.history = counted  # type: ignore[method-assign]
            yield tx
            self.loaded.append(len(tx.loaded))


def main(url: str, signal_id: str) -> dict[str, Any]:
    from dependency_injector import providers
    from sqlalchemy import event

    started = time.perf_counter()
    container = bench_container(url)
    container.unit_of_work.override(providers.Singleton(CountingUnitOfWork, container.engine))
    service = container.service()  # the engine, the schema check, the service
    built = time.perf_counter()
    statements: list[str] = []
    event.listen(
        container.engine(),
        "before_cursor_execute",
        lambda _conn, _cursor, sql, *_: statements.append(" ".join(sql.split())[:80]),
    )
    service.claim_signal(ClaimSignal(signal_id=signal_id, agent_id=AGENT.agent_id))
    claimed = time.perf_counter()
    uow = container.unit_of_work()
    container.engine().dispose()
    return {
        "build_s": built - started,
        "claim_s": claimed - built,
        "command_s": claimed - started,
        "statements": len(statements),
        "sql": statements,
        "signals_loaded": sum(uow.loaded),
        "events_replayed": sum(uow.replayed),
    }


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2])), flush=True)
