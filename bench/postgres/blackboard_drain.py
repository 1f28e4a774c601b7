"""blackboard in section (g): its backlog, its workers, what its event log says after a drain, and its wake-up.

The backlog is posted one signal at a time through the application's service (built by its
container, bench/common.py `wired`), before any worker runs. The workers are `blackboard worker
--agent bench-noop --concurrency C` processes (bench/fleet.py), the agent's handler an `entrypoint`
by default (a Python function in the worker, like the queues' tasks) or a `command` (`true`, a
process per signal). Done = the read model shows the signal COMPLETED.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.drain import BLACKBOARD_PROGRESS_SQL
from bench.fleet import HANDLERS, POST_TIMEOUT_S, agents_dir, worker_command, worker_env
from bench.postgres.systems import System

if TYPE_CHECKING:
    from bench.postgres.databases import Databases

BOARD = "ps-pg-bench"


def post(i: int, what: str, board: str = BOARD) -> Any:
    from blackboard.application.commands import PostSignal

    return PostSignal(
        signal_type="RESEARCH", ps_id=board, entry_id=f"e-{i}", topic=f"{what} {i}", prompt="nothing to do"
    )


def system_name(boards: int, before: bool = False) -> str:
    """`blackboard`, `blackboard-4boards`; `before`, `before-4boards` for the build of BENCH_PG_BEFORE."""
    base = "before" if before else "blackboard"
    return base if boards == 1 else f"{base}-{boards}boards"


class BlackboardSystem(System):
    name = "blackboard"
    unit = "signals"
    progress_sql = BLACKBOARD_PROGRESS_SQL

    def __init__(
        self,
        handler: str = "entrypoint",
        worker_args: Sequence[str] = (),
        boards: int = 1,
        before: str | None = None,
    ) -> None:
        """`boards`: the backlog spread over that many boards, signal i on board i mod boards (the
        workers serve every board). `before`: a folder holding another build's `blackboard` package
        (the code before a change), put first on the workers' PYTHONPATH, so its workers drain the same
        backlog side by side with this build's in one run."""
        self.handler = handler
        self.worker_args = list(worker_args)
        self.boards = boards
        self.before = before
        self.name = system_name(boards, before is not None)
        self.post_seconds = 0.0

    def prepare(self, dbs: Databases, root: Path, n: int) -> str:
        from bench.common import wired

        name = dbs.create(f"bb_template_{n}_{self.boards}b")
        boards = [BOARD] if self.boards == 1 else [f"{BOARD}-{b}" for b in range(self.boards)]
        with wired(
            dbs.sqlalchemy_url(name), agents_dir=agents_dir(root, self.handler), post_timeout=POST_TIMEOUT_S
        ) as container:
            service = container.service()
            started = time.perf_counter()
            for i in range(n):
                service.post_signal(post(i, "backlog", boards[i % len(boards)]))
            self.post_seconds = time.perf_counter() - started
        return name

    def command(self) -> list[str]:
        return worker_command(self.worker_args)

    def env(self, dbs: Databases, db: str, root: Path) -> dict[str, str]:
        env = worker_env(dbs.sqlalchemy_url(db), agents_dir(root, self.handler))
        if self.before:
            env["PYTHONPATH"] = os.pathsep.join((self.before, env["PYTHONPATH"]))
        return env

    def analyse(self, dbs: Databases, db: str, n: int) -> dict[str, Any]:
        """From the event log: claims per worker, exactly once, and where a worker's time goes."""
        from bench.common import wired
        from bench.drain import log_figures

        with wired(dbs.sqlalchemy_url(db)) as container:
            records = container.event_store().read_all()
        return log_figures(records, n)

    def setup_note(self) -> str:
        return (
            (f"the build at {self.before}: " if self.before else "") + f"{self.boards} board(s); "
            f"`blackboard worker --agent bench-noop {' '.join(self.worker_args)}` ({HANDLERS[self.handler]}); "
            f"the backlog posted through BlackboardService ({self.post_seconds:.1f} s)"
        )


def empty_template(dbs: Databases) -> str:
    """A database with blackboard's schema and nothing else (the container opens it: schema created)."""
    from bench.common import wired

    name = dbs.create("bb_template_empty")
    with wired(dbs.sqlalchemy_url(name)) as container:
        container.engine()
    return name


def wakeup(
    dbs: Databases,
    root: Path,
    template: str,
    handler: str,
    n: int,
    gap: tuple[float, float],
    label: str = "defaults",
    worker_args: Sequence[str] = (),
    before: str | None = None,
) -> dict[str, Any]:
    """bench/wakeup.py with one idle worker (its defaults, but for `worker_args`) on a clone of `template`;
    `before`: the worker of that build (BENCH_PG_BEFORE), the poster still this build's."""
    from bench.common import wired
    from bench.drain import blackboard_progress
    from bench.fleet import fleet
    from bench.wakeup import wakeup as measure

    db = dbs.create(f"wake_{label}", template=template)
    url, agents = dbs.sqlalchemy_url(db), agents_dir(root, handler)
    env = worker_env(url, agents)
    if before:
        env["PYTHONPATH"] = os.pathsep.join((before, env["PYTHONPATH"]))
    with (
        wired(url, agents_dir=agents, post_timeout=POST_TIMEOUT_S) as container,
        fleet(root, f"wakeup-{label}", env) as running,
    ):
        result = measure(
            running,
            container,
            blackboard_progress(container.engine()),
            command=worker_command(worker_args),
            k=1,
            n=n,
            board=BOARD,
            gap=gap,
            seed=n,
            settle_s=0.5,
        )
    return {"variant": label, "worker_args": list(worker_args), **result, "processes": running.results}
