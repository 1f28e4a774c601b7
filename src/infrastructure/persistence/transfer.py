"""A board's events out of the log as stored (export) and back into another log (import).

Both stream: an export reads the board a chunk of rows at a time, an import inserts the events a
chunk at a time as its reader hands them over. An import only appends: it writes events, never rows;
the read model follows by a catch-up. It is one write transaction holding the board and the log, so
a refusal, or a failure half-way, writes nothing, and no writer of the board can slip in between the
check that the board is absent and the insert.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from sqlalchemy import Column, Connection, Engine, Row, func, or_, select
from sqlalchemy.exc import IntegrityError

from blackboard.application.carried import check_carried
from blackboard.application.errors import BoardExists
from blackboard.application.ports import ImportedRange, StoredEvent
from blackboard.domain.errors import InvalidInput
from blackboard.domain.events import CHECKPOINT_SEPARATOR, SOLVE_SEPARATOR, STREAM_SEPARATOR, board_of_stream
from blackboard.infrastructure.persistence.dialect import dialect_of
from blackboard.infrastructure.persistence.engine import write_transaction
from blackboard.infrastructure.persistence.prefix import starts_with
from blackboard.infrastructure.persistence.tables import EVENTS, SIGNALS

CHUNK = (
    1000  # event ids per IN (...): SQLite's bound-parameter limit is far above, a long list is slow to render
)


def _of_board(blackboard_id: str):
    """The board's own stream, its entry streams (`<board>\\x1f<key>`), its solve runs' (`<board>\\x1e<run>`)
    and its LangGraph threads' (`<board>\\x1d<thread>`), the board matched exactly (`ps-1` is not `PS-1`)."""
    return or_(
        EVENTS.c.stream_id == blackboard_id,
        *(
            starts_with(EVENTS.c.stream_id, blackboard_id + separator)
            for separator in (STREAM_SEPARATOR, SOLVE_SEPARATOR, CHECKPOINT_SEPARATOR)
        ),
    )


CHUNK_ROWS = 1000  # events read per round trip (PostgreSQL's server-side cursor), inserted per statement


def board_events(engine: Engine, blackboard_id: str) -> Iterator[StoredEvent]:
    """The board's events in position order, read `CHUNK_ROWS` at a time: never the whole board in memory."""
    query = select(EVENTS).where(_of_board(blackboard_id)).order_by(EVENTS.c.position)
    # one statement in a transaction of its own: its snapshot is the export's (PostgreSQL's server-side
    # cursor lives in a transaction; SQLite steps through the rows as they are fetched)
    with engine.connect() as conn, conn.begin():
        for row in conn.execution_options(yield_per=CHUNK_ROWS).execute(query):
            yield _stored(row)


def _stored(row: Row) -> StoredEvent:
    return StoredEvent(
        position=row.position,
        event_id=row.event_id,
        stream_id=row.stream_id,
        version=row.version,
        event_type=row.event_type,
        schema_version=row.schema_version,
        data=json.loads(row.data),
        metadata=json.loads(row.metadata),
        occurred_at=row.occurred_at,
        recorded_at=row.recorded_at,
    )


def import_events(engine: Engine, blackboard_id: str, events: Iterable[StoredEvent]) -> ImportedRange:
    """All of `events` or none, in one write transaction, inserted a chunk at a time as they are read."""
    dialect = dialect_of(engine)
    with write_transaction(engine) as conn:
        # the board first, then the log: the order every command takes them in, so none deadlocks with this
        dialect.hold_board(conn, blackboard_id)
        dialect.hold_log(conn)
        streams = conn.scalar(
            select(func.count(func.distinct(EVENTS.c.stream_id))).where(_of_board(blackboard_id))
        )
        if streams:
            raise BoardExists(blackboard_id, f"this store holds {streams} of its streams already")
        last_stored = conn.scalar(select(func.coalesce(func.max(EVENTS.c.position), 0))) or 0
        keep: bool | None = None
        count, first, last = 0, 0, 0
        chunk: list[StoredEvent] = []
        for event in events:
            if board_of_stream(event.stream_id) != blackboard_id:
                raise ValueError(f"every imported event must belong to board {blackboard_id!r}")
            if (
                keep is None
            ):  # kept positions stay in commit order only if they all come after every stored one
                keep = event.position > last_stored
            chunk.append(event)
            if len(chunk) == CHUNK_ROWS:
                positions = _insert(conn, blackboard_id, chunk, count, keep)
                first, last, count, chunk = first or positions[0], positions[-1], count + len(chunk), []
        if chunk:
            positions = _insert(conn, blackboard_id, chunk, count, bool(keep))
            first, last, count = first or positions[0], positions[-1], count + len(chunk)
        if not count:
            raise InvalidInput("events", "must hold at least one event")
        if keep:
            dialect.positions_given(conn)
        dialect.notify(conn, last)
        return ImportedRange(count, first, last, bool(keep))


def _insert(
    conn: Connection, blackboard_id: str, chunk: list[StoredEvent], before: int, keep: bool
) -> list[int]:
    """Insert one chunk (`before`: how many events of the document came before it), having checked its
    event ids against the log as it stands in this transaction (this import's earlier chunks
    included) and its posted signal ids against the read model."""
    ids = [e.event_id for e in chunk]
    seen: dict[str, int] = {}
    for i, event_id in enumerate(ids):
        if event_id in seen:
            raise InvalidInput(f"events[{before + i}].event_id", f"must be unique, {event_id} comes twice")
        seen[event_id] = i
    if taken := _taken(conn, EVENTS.c.event_id, ids):
        mine = conn.scalar(select(EVENTS.c.stream_id).where(EVENTS.c.event_id == taken))
        if mine is not None and board_of_stream(mine) == blackboard_id:  # the board held nothing before
            raise InvalidInput(
                f"events[{before + seen[taken]}].event_id", f"must be unique, {taken} comes twice"
            )
        raise BoardExists(blackboard_id, f"event id {taken} is stored already, in another board")
    # signal ids are unique across boards: the catch-up could not fold a second one (as a post
    # checks, this sees the read model's rows; a rebuild running has not folded them all back)
    posted = [str(e.data.get("signal_id")) for e in chunk if e.event_type == "AgentSignalPosted"]
    if taken := _taken(conn, SIGNALS.c.signal_id, posted):
        raise BoardExists(blackboard_id, f"signal {taken} is on another board of this store")
    rows = [_row(e, keep, f"events[{before + i}]") for i, e in enumerate(chunk)]
    try:
        return dialect_of(conn.engine).insert_many(conn, EVENTS, rows, returning="position", key="event_id")
    except IntegrityError as exc:  # checked above under the log's lock: only a bug gets here
        raise BoardExists(blackboard_id, f"an event is stored already ({exc.orig})") from exc


def _taken(conn: Connection, column: Column[str], ids: list[str]) -> str | None:
    for start in range(0, len(ids), CHUNK):
        found = conn.scalar(select(column).where(column.in_(ids[start : start + CHUNK])).limit(1))
        if found is not None:
            return found
    return None


def _row(event: StoredEvent, keep_position: bool, at: str) -> dict[str, object]:
    """The event's row; refused (InvalidInput naming `at`) if an export of it could not be imported again: the
    reader took it as it was written, but an export writes it its own way (application/carried.py)."""
    data = json.dumps(dict(event.data), separators=(",", ":"))
    metadata = json.dumps(dict(event.metadata), separators=(",", ":"))
    check_carried(data, metadata, lambda: event, at)
    row: dict[str, object] = {
        "event_id": event.event_id,
        "stream_id": event.stream_id,
        "version": event.version,
        "event_type": event.event_type,
        "schema_version": event.schema_version,
        "data": data,
        "metadata": metadata,
        "occurred_at": event.occurred_at,
        "recorded_at": event.recorded_at,
    }
    if keep_position:
        row["position"] = event.position
    return row
