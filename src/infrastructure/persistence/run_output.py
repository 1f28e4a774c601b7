"""Runs' output on SQLAlchemy: the RunOutputStore port over the `run_output` table.

A worker writes a batch of lines in a write transaction of its own (one INSERT of many rows), never in a
board's; a follower reads a signal's lines after its cursor on the primary key."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import Engine, and_, delete, func, or_, select
from sqlalchemy.engine import Row
from sqlalchemy.exc import IntegrityError

from blackboard.application.output import PAGE, Cursor, OutputLine, RunOutputStore, Stream
from blackboard.infrastructure.persistence.engine import read_connection, write_transaction
from blackboard.infrastructure.persistence.event_store import translated
from blackboard.infrastructure.persistence.tables import RUN_OUTPUT


class LinesTaken(RuntimeError):
    """A batch numbered as lines already kept (two runs of one attempt at once): dropped, never retried."""


ORDER = (RUN_OUTPUT.c.attempt, RUN_OUTPUT.c.sequence)


class SqlRunOutputStore(RunOutputStore):
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def append(self, lines: Sequence[OutputLine]) -> None:
        if not lines:
            return
        rows = [_row(line) for line in lines]
        with translated("could not keep a run's output", None), write_transaction(self._engine) as conn:
            try:
                conn.execute(RUN_OUTPUT.insert(), rows)
            except IntegrityError as taken:  # a second run of one attempt numbered alike: not an outage
                raise LinesTaken(f"{lines[0].signal_id}: its lines are numbered already") from taken

    def after(self, signal_id: str, cursor: Cursor, limit: int = PAGE) -> list[OutputLine]:
        later = or_(
            RUN_OUTPUT.c.attempt > cursor.attempt,
            and_(RUN_OUTPUT.c.attempt == cursor.attempt, RUN_OUTPUT.c.sequence > cursor.sequence),
        )
        query = (
            select(RUN_OUTPUT).where(RUN_OUTPUT.c.signal_id == signal_id, later).order_by(*ORDER).limit(limit)
        )
        with translated("could not read a run's output", None), read_connection(self._engine) as conn:
            return [_line(r) for r in conn.execute(query)]

    def last(self, signal_id: str, attempt: int) -> int:
        query = select(func.max(RUN_OUTPUT.c.sequence)).where(
            RUN_OUTPUT.c.signal_id == signal_id, RUN_OUTPUT.c.attempt == attempt
        )
        with translated("could not read a run's output", None), read_connection(self._engine) as conn:
            return int(conn.execute(query).scalar() or 0)

    def forget(self, before: datetime) -> int:
        with translated("could not drop old run output", None), write_transaction(self._engine) as conn:
            return conn.execute(delete(RUN_OUTPUT).where(RUN_OUTPUT.c.at < before)).rowcount


def _row(line: OutputLine) -> dict[str, object]:
    return {
        "signal_id": line.signal_id,
        "attempt": line.attempt,
        "sequence": line.sequence,
        "at": line.at,
        "stream": str(line.stream),
        "text": storable(line.text),
    }


def storable(text: str) -> str:
    """Text both databases keep: no NUL (PostgreSQL refuses it) and no lone surrogate (not UTF-8)."""
    text = text.replace("\x00", "\ufffd")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", errors="replace").decode("utf-8")
    return text


def _line(row: Row[tuple[object, ...]]) -> OutputLine:
    m = row._mapping
    return OutputLine(
        signal_id=m["signal_id"],
        attempt=m["attempt"],
        sequence=m["sequence"],
        at=m["at"],
        stream=Stream(m["stream"]),
        text=m["text"],
    )
