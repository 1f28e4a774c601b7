"""The log's documents: a recorded event as `events` and `watch` print it."""

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from blackboard.application.ports import Recorded
from blackboard.infrastructure.documents.base import Document, Time

if TYPE_CHECKING:
    pass

# ---------------------------------------------------------------- the log


class Event(Document):
    """One stored event with its global position, as `blackboard events` prints it."""

    position: int
    event_type: str
    stream_id: str  # a board's, or an entry key's (`<board>\x1f<key>`)
    version: int
    event_id: str
    schema_version: int
    occurred_at: Time
    recorded_at: Time
    data: dict[str, Any]
    metadata: dict[str, Any]


def events(records: Sequence[Recorded]) -> list[Event]:
    """Stored events with their global positions, as `blackboard events` prints them."""
    return [event(r) for r in records]


def event(r: Recorded) -> Event:
    """One stored event (`events --jsonl` prints one a line, as it reads them)."""
    return Event(
        position=r.position,
        event_type=r.event.event_type,
        stream_id=r.event.stream_id,
        version=r.event.version,
        event_id=r.event.event_id,
        schema_version=type(r.event).schema_version,
        occurred_at=r.event.occurred_at,
        recorded_at=r.recorded_at,
        data=_shown(r.event.data()),
        metadata=dict(r.metadata),
    )


def _shown(data: dict[str, Any]) -> dict[str, Any]:
    """An event's data as it is shown: a claim's token is its claimer's proof (whoever holds it may
    complete the claim), so the log shows that there was one, not what it is (`export` keeps it)."""
    return {**data, "token": "(hidden)"} if data.get("token") else data
