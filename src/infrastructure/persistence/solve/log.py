"""The SolveLog port on SQLAlchemy: a solve run's events in its own stream (`<board>\\x1e<run>`).

An append holds the run's stream (PostgreSQL: an advisory lock on it, as an entry key's; never the board's)
and goes through `commit_in`, as every command does: the log's lock, the append, and the fold, which
leaves the rows as they are (a run's events change no signal nor entry) and moves the read model's
checkpoint with the log, so the read model stays live. Reading a run is reading its stream.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Engine, select

from blackboard.application.ports import Recorded
from blackboard.application.solve.solver import SolveLog
from blackboard.domain.events import SOLVE_SEPARATOR, SolveEvent, solve_stream_id
from blackboard.infrastructure.persistence import fold
from blackboard.infrastructure.persistence.codec import recorded_from_row
from blackboard.infrastructure.persistence.dialect import dialect_of
from blackboard.infrastructure.persistence.engine import read_connection, write_transaction
from blackboard.infrastructure.persistence.event_store import translated
from blackboard.infrastructure.persistence.prefix import starts_with
from blackboard.infrastructure.persistence.tables import EVENTS
from blackboard.infrastructure.persistence.unit_of_work import commit_in


class SqlSolveLog(SolveLog):
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def append(self, events: Sequence[SolveEvent], metadata: Mapping[str, Any]) -> list[Recorded]:
        if not events:
            return []
        stream = events[0].stream_id
        with translated(f"could not record solve run {events[0].run_id}", stream, events[0].version - 1):
            with write_transaction(self._engine) as conn:
                dialect_of(self._engine).hold_entry(conn, stream)
                # a controller's run: commit_in locks the budget's row before the log's, as for every writer
                return commit_in(conn, stream, events, metadata, fold.FoldCache())

    def history(self, blackboard_id: str, run_id: str, upto: int | None = None) -> list[Recorded]:
        query = select(EVENTS).where(EVENTS.c.stream_id == solve_stream_id(blackboard_id, run_id))
        if upto is not None:
            query = query.where(EVENTS.c.position <= upto)
        with translated("could not read the event store"), read_connection(self._engine) as conn:
            return [recorded_from_row(row) for row in conn.execute(query.order_by(EVENTS.c.version))]

    def runs(self, blackboard_id: str) -> list[str]:
        prefix = blackboard_id + SOLVE_SEPARATOR
        query = (
            select(EVENTS.c.stream_id)
            .where(starts_with(EVENTS.c.stream_id, prefix), EVENTS.c.version == 1)
            .order_by(EVENTS.c.position)
        )
        with translated("could not read the event store"), read_connection(self._engine) as conn:
            return [s.removeprefix(prefix) for s in conn.scalars(query)]
