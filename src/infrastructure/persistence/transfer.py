"""A board's events out of the log as stored (export) and back into another log (import).

An import only appends: it writes events, never rows; the read model follows by a catch-up. It is
one write transaction holding the board and the log, so a refusal, or a failure half-way, writes
nothing, and no writer of the board can slip in between the check that the board is absent and the
insert.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from sqlalchemy import Column, Connection, Engine, func, or_, select
from sqlalchemy.exc import IntegrityError

from blackboard.application.errors import BoardExists
from blackboard.application.ports import StoredEvent
from blackboard.domain.events import SOLVE_SEPARATOR, STREAM_SEPARATOR, board_of_stream
from blackboard.infrastructure.persistence.dialect import dialect_of
from blackboard.infrastructure.persistence.engine import read_connection, write_transaction
from blackboard.infrastructure.persistence.tables import EVENTS, SIGNALS

CHUNK = (
    1000  # event ids per IN (...): SQLite's bound-parameter limit is far above, a long list is slow to render
)


def _of_board(blackboard_id: str):
    """The board's own stream, its entry streams (`<board>\\x1f<key>`) and its solve runs' (`<board>\\x1e<run>`),
    the board matched literally."""
    escaped = blackboard_id.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return or_(
        EVENTS.c.stream_id == blackboard_id,
        EVENTS.c.stream_id.like(escaped + STREAM_SEPARATOR + "%", escape="\\"),
        EVENTS.c.stream_id.like(escaped + SOLVE_SEPARATOR + "%", escape="\\"),
    )


def board_events(engine: Engine, blackboard_id: str) -> list[StoredEvent]:
    query = select(EVENTS).where(_of_board(blackboard_id)).order_by(EVENTS.c.position)
    with read_connection(engine) as conn:
        return [
            StoredEvent(
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
            for row in conn.execute(query)
        ]


def import_events(engine: Engine, blackboard_id: str, events: Sequence[StoredEvent]) -> list[int]:
    if not events:
        return []
    if any(board_of_stream(e.stream_id) != blackboard_id for e in events):
        raise ValueError(f"every imported event must belong to board {blackboard_id!r}")
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
        if taken := _taken(conn, EVENTS.c.event_id, [e.event_id for e in events]):
            raise BoardExists(blackboard_id, f"event id {taken} is stored already, in another board")
        # signal ids are unique across boards: the catch-up could not fold a second one (as a post
        # checks, this sees the read model's rows; a rebuild running has not folded them all back)
        posted = [str(e.data.get("signal_id")) for e in events if e.event_type == "AgentSignalPosted"]
        if taken := _taken(conn, SIGNALS.c.signal_id, posted):
            raise BoardExists(blackboard_id, f"signal {taken} is on another board of this store")
        # kept positions stay in commit order only if they all come after every stored one
        keep = events[0].position > (conn.scalar(select(func.coalesce(func.max(EVENTS.c.position), 0))) or 0)
        rows = [_row(e, keep) for e in events]
        try:
            positions = dialect.insert_many(conn, EVENTS, rows, returning="position", key="event_id")
        except IntegrityError as exc:  # checked above under the log's lock: only a bug gets here
            raise BoardExists(blackboard_id, f"an event is stored already ({exc.orig})") from exc
        if keep:
            dialect.positions_given(conn)
        dialect.notify(conn, positions[-1])
        return positions


def _taken(conn: Connection, column: Column[str], ids: list[str]) -> str | None:
    for start in range(0, len(ids), CHUNK):
        found = conn.scalar(select(column).where(column.in_(ids[start : start + CHUNK])).limit(1))
        if found is not None:
            return found
    return None


def _row(event: StoredEvent, keep_position: bool) -> dict[str, object]:
    row: dict[str, object] = {
        "event_id": event.event_id,
        "stream_id": event.stream_id,
        "version": event.version,
        "event_type": event.event_type,
        "schema_version": event.schema_version,
        "data": json.dumps(dict(event.data), separators=(",", ":")),
        "metadata": json.dumps(dict(event.metadata), separators=(",", ":")),
        "occurred_at": event.occurred_at,
        "recorded_at": event.recorded_at,
    }
    if keep_position:
        row["position"] = event.position
    return row
