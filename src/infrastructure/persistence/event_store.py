"""The EventStore port on SQLAlchemy: appends in the log's commit order, loads and reads back. It writes
nothing but the log: the read model's rows are the unit of work's (unit_of_work.py) and the projector's."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, Engine, bindparam, func, select
from sqlalchemy.exc import DBAPIError, IntegrityError

from blackboard.application.ports import (
    ConcurrencyConflict,
    EventStore,
    ImportedRange,
    Recorded,
    StoredEvent,
    StoreUnavailable,
)
from blackboard.domain.events import BlackboardEvent
from blackboard.infrastructure.persistence import lean
from blackboard.infrastructure.persistence.codec import event_from_row, event_row, recorded_from_row
from blackboard.infrastructure.persistence.dialect import dialect_of, insert_values
from blackboard.infrastructure.persistence.engine import read_connection, write_transaction
from blackboard.infrastructure.persistence.tables import EVENTS, SIGNALS

VERSION = select(func.coalesce(func.max(EVENTS.c.version), 0)).where(
    EVENTS.c.stream_id == bindparam("stream")
)
LOST_RACE = ("40P01", "40001")  # PostgreSQL: deadlock_detected, serialization_failure
LAST_POSITION = select(func.coalesce(func.max(EVENTS.c.position), 0))
LOAD = (
    select(EVENTS)
    .where(EVENTS.c.stream_id == bindparam("stream"), EVENTS.c.version > bindparam("after"))
    .order_by(EVENTS.c.version)
)


def append_in(
    conn: Connection,
    stream_id: str,
    expected_version: int,
    events: Sequence[BlackboardEvent],
    metadata: Mapping[str, Any],
    version: int | None = None,
    notify: bool = True,
) -> list[Recorded]:
    """Append in `conn`'s write transaction, which holds the stream, and notify the log's listeners;
    returns the events as recorded ([] when every one of them was stored already). Only appends: the
    read model's rows are the caller's (the unit of work folds them in the same transaction). `version`
    is the stream's version read by a caller that already holds the log (unit_of_work.hold_log);
    without it the log is held here, to the commit, so positions follow commit order, and the version
    read under it. `notify=False`: the caller tells the listeners itself. Raises ConcurrencyConflict,
    storing nothing, if the stream is not at `expected_version`."""
    if any(e.stream_id != stream_id for e in events):  # a board's stream, or an entry key's
        raise ValueError(f"every appended event must belong to stream {stream_id!r}")
    dialect = dialect_of(conn.engine)
    if version is None:
        dialect.hold_log(conn)
        version = conn.scalar(VERSION, {"stream": stream_id})
    follows = [e.version for e in events] == list(
        range(expected_version + 1, expected_version + 1 + len(events))
    )
    if version != expected_version or not follows:
        if _all_stored(conn, events):
            return []
        raise ConcurrencyConflict(stream_id, expected_version)
    now, meta, rows = _rows(events, metadata)
    positions = dialect.insert_many(conn, EVENTS, rows, returning="position", key="event_id")
    if notify:  # else the caller notifies before its commit
        dialect.notify(conn, positions[-1], events)
    return [Recorded(p, e, now, meta) for p, e in zip(positions, events, strict=True)]


def _rows(
    events: Sequence[BlackboardEvent], metadata: Mapping[str, Any]
) -> tuple[datetime, dict[str, Any], list[dict[str, Any]]]:
    now, meta = datetime.now(UTC), dict(metadata)
    meta_json = json.dumps(meta, separators=(",", ":"))
    return now, meta, [event_row(e, meta, now, meta_json) for e in events]


def append_one_after(
    conn: Connection,
    stream_id: str,
    event: BlackboardEvent,
    metadata: Mapping[str, Any],
    reads: Sequence[Any],
) -> tuple[list[Any], Recorded]:
    """`append_in` of one event (notifying no one), sent in one round trip after `reads` (lean.py's steps: the
    log's hold and the reads under it, which the insert need not wait for); what they read, and the event
    as recorded. The last of `reads` gives the stream's version first: the event must follow it, as
    `append_in` checks, or ConcurrencyConflict, raised once the insert has run, or by the insert itself
    (the stream's unique versions), the caller's transaction then rolled back with it."""
    if event.stream_id != stream_id:
        raise ValueError(f"every appended event must belong to stream {stream_id!r}")
    now, meta, (row,) = _rows([event], metadata)
    insert = insert_values(EVENTS, tuple(row), "position")
    *found, inserted = lean.run_all(conn, [*reads, (insert, row)])
    ((version, *_),) = found[-1]
    if version != event.version - 1:
        raise ConcurrencyConflict(stream_id, event.version - 1)
    ((position,),) = inserted
    return found, Recorded(position, event, now, meta)


# two unique indexes: the signal's row by its key, its post's event by the event_id the row names
POST_METADATA = (
    select(EVENTS.c.metadata)
    .select_from(SIGNALS.join(EVENTS, EVENTS.c.event_id == SIGNALS.c.post_event_id))
    .where(SIGNALS.c.signal_id == bindparam("signal_id"), SIGNALS.c.blackboard_id == bindparam("board"))
)


class SqlAlchemyEventStore(EventStore):
    """Appends are serialised (SQLite's write lock, PostgreSQL's advisory lock), so positions are
    handed out in commit order and a reader following `read_all` never skips a late commit."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def append(
        self,
        blackboard_id: str,
        expected_version: int,
        events: Sequence[BlackboardEvent],
        metadata: Mapping[str, Any] | None = None,
    ) -> list[Recorded]:
        if not events:
            return []
        with translated(f"could not append to {blackboard_id}", blackboard_id, expected_version):
            with write_transaction(self._engine) as conn:
                dialect_of(self._engine).hold_board(conn, blackboard_id)
                return append_in(conn, blackboard_id, expected_version, events, metadata or {})

    def load(self, blackboard_id: str, after_version: int = 0) -> list[BlackboardEvent]:
        with translated("could not read the event store"), read_connection(self._engine) as conn:
            return load_in(conn, blackboard_id, after_version)

    def read_all(self, after: int = 0, limit: int | None = None) -> list[Recorded]:
        query = select(EVENTS).where(EVENTS.c.position > after).order_by(EVENTS.c.position).limit(limit)
        with translated("could not read the event store"), read_connection(self._engine) as conn:
            return [recorded_from_row(row) for row in conn.execute(query)]

    def last_position(self) -> int:
        with translated("could not read the event store"), read_connection(self._engine) as conn:
            return conn.scalar(LAST_POSITION) or 0

    def posted_with(self, correlation_id: str, blackboard_id: str | None = None) -> list[tuple[str, str]]:
        """One scan of the posts whose metadata holds the id as written (json.dumps, compact), each
        checked once parsed: a bulk cancel is rare, and no column is worth keeping for it."""
        written = '"correlation_id":' + json.dumps(correlation_id)
        escaped = written.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        query = (
            select(EVENTS.c.stream_id, EVENTS.c.data, EVENTS.c.metadata)
            .where(
                EVENTS.c.event_type == "AgentSignalPosted",
                EVENTS.c.metadata.like(f"%{escaped}%", escape="\\"),
            )
            .order_by(EVENTS.c.position)
        )
        if blackboard_id is not None:
            query = query.where(EVENTS.c.stream_id == blackboard_id)
        with translated("could not read the event store"), read_connection(self._engine) as conn:
            rows = conn.execute(query).all()
        return [
            (stream, json.loads(data)["signal_id"])
            for stream, data, meta in rows
            if json.loads(meta).get("correlation_id") == correlation_id
        ]

    def completion_of(self, blackboard_id: str, signal_id: str) -> BlackboardEvent | None:
        """The board's events walked back from its end by the (stream, version) index, the completions
        whose data holds the signal's quoted id (a case-sensitive substring test: `instr`, `strpos`;
        SQLite's LIKE ignores case), decoded one at a time until one is the signal's own (a completion
        to tell again is a recent one, so the walk is short). The id is matched quoted, not as
        `"signal_id":...`, so that data written with other separators (an older release, an import)
        still matches; a result that merely mentions the id is passed over."""
        quoted = json.dumps(signal_id)
        within = func.instr if self._engine.dialect.name == "sqlite" else func.strpos
        query = (
            select(EVENTS)
            .where(
                EVENTS.c.stream_id == blackboard_id,
                EVENTS.c.event_type == "AgentSignalCompleted",
                within(EVENTS.c.data, quoted) > 0,
            )
            .order_by(EVENTS.c.version.desc())
        )
        below: int | None = None
        with translated("could not read the event store"), read_connection(self._engine) as conn:
            while True:  # pages of 16 by version, newest first: almost always one page of one row
                page = query if below is None else query.where(EVENTS.c.version < below)
                rows = conn.execute(page.limit(16)).all()
                for row in rows:
                    event = event_from_row(row)
                    if event is not None and event.signal_id == signal_id:
                        return event
                if len(rows) < 16:
                    return None
                below = rows[-1].version

    def nudges_of(self, blackboard_id: str, signal_id: str) -> list[BlackboardEvent]:
        """The board's nudges whose data holds the signal's quoted id (as `completion_of` matches it), the
        signal's own decoded, oldest first: asked only when the signal's row counts a nudge more."""
        within = func.instr if self._engine.dialect.name == "sqlite" else func.strpos
        query = (
            select(EVENTS)
            .where(
                EVENTS.c.stream_id == blackboard_id,
                EVENTS.c.event_type == "AgentSignalNudged",
                within(EVENTS.c.data, json.dumps(signal_id)) > 0,
            )
            .order_by(EVENTS.c.version)
        )
        with translated("could not read the event store"), read_connection(self._engine) as conn:
            events = [event_from_row(row) for row in conn.execute(query)]
        return [e for e in events if e is not None and e.signal_id == signal_id]

    def post_metadata(self, blackboard_id: str, signal_id: str) -> dict[str, Any] | None:
        """The metadata of the signal's post (its correlation and causation ids), for a tracer joining a
        claim to the post's trace (infrastructure/tracing/otel.py): its row names the post's event
        (`post_event_id`), read by the events' unique index. None when there is none (no such row yet,
        or a row an older release wrote without it)."""
        with translated("could not read the event store"), read_connection(self._engine) as conn:
            found = conn.scalar(POST_METADATA, {"board": blackboard_id, "signal_id": signal_id})
        return json.loads(found) if found else None

    def board_events(self, blackboard_id: str) -> list[StoredEvent]:
        return list(self.stream_board_events(blackboard_id))

    def stream_board_events(self, blackboard_id: str) -> Iterator[StoredEvent]:
        from blackboard.infrastructure.persistence import transfer  # only export and import need it

        with translated("could not read the event store"):
            yield from transfer.board_events(self._engine, blackboard_id)

    def import_events(self, blackboard_id: str, events: Sequence[StoredEvent]) -> list[int]:
        imported = self.import_stream(blackboard_id, events)
        if imported.kept_positions:
            return [e.position for e in events]
        return list(range(imported.first_position, imported.last_position + 1))

    def import_stream(self, blackboard_id: str, events: Iterable[StoredEvent]) -> ImportedRange:
        from blackboard.infrastructure.persistence import transfer

        with translated(
            f"could not import {blackboard_id}"
        ):  # no board given: an IntegrityError is no conflict
            return transfer.import_events(self._engine, blackboard_id, events)


def load_in(conn: Connection, blackboard_id: str, after_version: int = 0) -> list[BlackboardEvent]:
    return [
        event_from_row(row) for row in conn.execute(LOAD, {"stream": blackboard_id, "after": after_version})
    ]


@contextmanager
def translated(doing: str, blackboard_id: str | None = None, expected_version: int = 0) -> Iterator[None]:
    """Driver errors leave as the port's: a unique (stream, version) or event id taken by a racing
    writer is a ConcurrencyConflict; anything else from the database is StoreUnavailable."""
    try:
        yield
    except IntegrityError as exc:
        if blackboard_id is None:
            raise StoreUnavailable(f"{doing}: {exc.orig}") from exc
        raise ConcurrencyConflict(blackboard_id, expected_version) from exc
    except DBAPIError as exc:
        if blackboard_id is not None and getattr(exc.orig, "sqlstate", None) in LOST_RACE:
            # a transaction holding only its signals chosen as a deadlock's victim: nothing written
            raise ConcurrencyConflict(blackboard_id, expected_version) from exc
        raise StoreUnavailable(f"{doing}: {exc.orig}") from exc
    except OSError as exc:  # the writer lock file: WriterBusy, or a file that cannot be opened
        raise StoreUnavailable(f"{doing}: {exc}") from exc


def _all_stored(conn: Connection, events: Sequence[BlackboardEvent]) -> bool:
    ids = [e.event_id for e in events]
    return conn.scalar(select(func.count()).where(EVENTS.c.event_id.in_(ids))) == len(ids)
