"""The EventStore port on SQLAlchemy: one append transaction stores the events and folds the read model."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, Engine, bindparam, func, insert, select, text
from sqlalchemy.exc import DBAPIError, IntegrityError

from blackboard.application.ports import ConcurrencyConflict, EventStore, Recorded, StoreUnavailable
from blackboard.domain.events import BlackboardEvent
from blackboard.domain.signals import AgentSignal
from blackboard.infrastructure.persistence import bulk, projection
from blackboard.infrastructure.persistence.codec import event_from_row, event_row, recorded_from_row
from blackboard.infrastructure.persistence.engine import held_connection, held_transaction, read_connection, write_transaction
from blackboard.infrastructure.persistence.tables import EVENTS
from blackboard.infrastructure.persistence.writer_lock import WriterBusy

# One round trip before an append: the board's version, the log's last position, the read model's.
STATE = select(
    select(func.coalesce(func.max(EVENTS.c.version), 0))
    .where(EVENTS.c.stream_id == bindparam("stream"))
    .scalar_subquery(),
    select(func.coalesce(func.max(EVENTS.c.position), 0)).scalar_subquery(),
    select(projection.CHECKPOINTS.c.position)
    .where(projection.CHECKPOINTS.c.name == projection.NAME)
    .scalar_subquery(),
)
# PostgreSQL: any number of events in one INSERT from one JSON document (bulk.py), one statement text
# whatever the count. SQLite: a few events in one INSERT ... RETURNING; more as an executemany and
# then the positions in one query (a long multi-row INSERT ... RETURNING is parsed anew every time).
FEW = 4
INSERT_RETURNING = insert(EVENTS).returning(EVENTS.c.position, sort_by_parameter_order=True)
INSERT = insert(EVENTS)
POSITIONS = (
    select(EVENTS.c.position)
    .where(EVENTS.c.stream_id == bindparam("stream"), EVENTS.c.version.between(bindparam("first"), bindparam("last")))
    .order_by(EVENTS.c.version)
)
LOAD = (
    select(EVENTS)
    .where(EVENTS.c.stream_id == bindparam("stream"), EVENTS.c.version > bindparam("after"))
    .order_by(EVENTS.c.version)
)
LAST_POSITION = select(func.coalesce(func.max(EVENTS.c.position), 0))
APPEND_LOCK = 0x626C6B62  # PostgreSQL advisory lock that makes positions follow commit order
NOTIFY_CHANNEL = "blackboard_events"  # see persistence/notifier.py
BOARD_LOCKS = 0x626C  # PostgreSQL advisory lock class for one board (two-key form: its own key space)
# one round trip for both; PostgreSQL evaluates a target list left to right, so the order holds
LOCK_BOARD_AND_LOG = text("SELECT pg_advisory_xact_lock(:kind, hashtext(:board)), pg_advisory_xact_lock(:key)")


class SqlAlchemyEventStore(EventStore):
    """Appends are serialised (SQLite's write lock, PostgreSQL's advisory lock), so positions are
    handed out in commit order and a reader following `read_all` never skips a late commit.

    While the read model is live (its checkpoint is the last position) each append also folds its
    events into it, in the same transaction; during a rebuild it leaves them to the rebuilder.
    """

    def __init__(self, engine: Engine, project: bool = True) -> None:
        self._engine = engine
        self._project = project
        self._serialise = engine.dialect.name == "postgresql"

    def append(
        self,
        blackboard_id: str,
        expected_version: int,
        events: Sequence[BlackboardEvent],
        metadata: Mapping[str, Any] | None = None,
        resulting: Mapping[str, AgentSignal] | None = None,
    ) -> list[Recorded]:
        if not events:
            return []
        if any(e.blackboard_id != blackboard_id for e in events):
            raise ValueError(f"every appended event must belong to {blackboard_id}")
        now, meta = datetime.now(UTC), dict(metadata or {})
        meta_json = json.dumps(meta, separators=(",", ":"))
        rows = [event_row(e, meta, now, meta_json) for e in events]
        try:
            with write_transaction(self._engine) as conn:
                if self._serialise:  # this board's lock first, then the log's: one order everywhere
                    conn.execute(LOCK_BOARD_AND_LOG, {"kind": BOARD_LOCKS, "board": blackboard_id, "key": APPEND_LOCK})
                current, last, folded_to = conn.execute(STATE, {"stream": blackboard_id}).one()
                follows = [e.version for e in events] == list(range(expected_version + 1, expected_version + 1 + len(events)))
                if current != expected_version or not follows:
                    if self._all_stored(conn, events):
                        return []
                    raise ConcurrencyConflict(blackboard_id, expected_version)
                if bulk.supported(conn):
                    positions = bulk.insert(conn, EVENTS, rows, returning="position", key="event_id")
                elif len(rows) <= FEW:
                    positions = conn.scalars(INSERT_RETURNING, rows).all()
                else:
                    conn.execute(INSERT, rows)
                    positions = conn.scalars(
                        POSITIONS, {"stream": blackboard_id, "first": events[0].version, "last": events[-1].version}
                    ).all()
                recorded = [Recorded(p, e, now, meta) for p, e in zip(positions, events, strict=True)]
                if self._serialise:  # delivered on commit: listeners wake as soon as the events are visible
                    conn.execute(text("SELECT pg_notify(:channel, :position)"),
                                 {"channel": NOTIFY_CHANNEL, "position": str(positions[-1])})
                if self._project and (folded_to or 0) == last:  # the read model is live: keep it so
                    if resulting is not None:  # the caller's aggregate already folded them: write its rows
                        projection.write_resulting(conn, recorded, resulting)
                    else:
                        projection.fold(conn, recorded, after=last)
                    recorded = [replace(r, projected=True) for r in recorded]
                return recorded
        except IntegrityError as exc:  # a unique (stream, version) or event id taken by a racing writer
            raise ConcurrencyConflict(blackboard_id, expected_version) from exc
        except DBAPIError as exc:
            raise StoreUnavailable(f"could not append to {blackboard_id}: {exc.orig}") from exc
        except OSError as exc:  # the writer lock file: WriterBusy, or a file that cannot be opened
            raise StoreUnavailable(f"could not append to {blackboard_id}: {exc}") from exc

    @contextmanager
    def exclusive(self, blackboard_id: str) -> Iterator[None]:
        """Hold one write transaction (SQLite: the database's write lock; PostgreSQL: this board's
        advisory lock) that the loads and the append made inside it join."""
        try:
            with held_transaction(self._engine) as conn:
                if self._serialise:
                    self._lock_board(conn, blackboard_id)
                yield
        except DBAPIError as exc:
            raise StoreUnavailable(f"could not lock {blackboard_id}: {exc.orig}") from exc
        except OSError as exc:  # the writer lock file: WriterBusy, or a file that cannot be opened
            raise StoreUnavailable(f"could not lock {blackboard_id}: {exc}") from exc

    def load(self, blackboard_id: str, after_version: int = 0) -> list[BlackboardEvent]:
        with self._reading() as conn:
            return [event_from_row(row) for row in conn.execute(LOAD, {"stream": blackboard_id, "after": after_version})]

    def read_all(self, after: int = 0, limit: int | None = None) -> list[Recorded]:
        query = select(EVENTS).where(EVENTS.c.position > after).order_by(EVENTS.c.position).limit(limit)
        with self._reading() as conn:
            return [recorded_from_row(row) for row in conn.execute(query)]

    def last_position(self) -> int:
        with self._reading() as conn:
            return conn.scalar(LAST_POSITION) or 0

    @contextmanager
    def _reading(self) -> Iterator[Connection]:
        if (held := held_connection(self._engine)) is not None:
            yield held
            return
        try:
            with read_connection(self._engine) as conn:
                yield conn
        except DBAPIError as exc:
            raise StoreUnavailable(f"could not read the event store: {exc.orig}") from exc

    @staticmethod
    def _lock_board(conn: Connection, blackboard_id: str) -> None:
        conn.execute(
            text("SELECT pg_advisory_xact_lock(:kind, hashtext(:board))"),
            {"kind": BOARD_LOCKS, "board": blackboard_id},
        )

    @staticmethod
    def _all_stored(conn: Connection, events: Sequence[BlackboardEvent]) -> bool:
        ids = [e.event_id for e in events]
        return conn.scalar(select(func.count()).where(EVENTS.c.event_id.in_(ids))) == len(ids)
