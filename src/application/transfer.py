"""Export and import of a whole board (contracts/knowledge.md, "Export and import").

An export is every event of the board's stream and of its entry streams, as stored. An import puts
them back in a store that does not hold the board, through the event store (which only appends),
then catches the read model up so the board is queryable at once. Everything is checked before
anything is written: a document that would leave a board the read model cannot fold is bad input.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from blackboard.application.errors import BoardNotFound
from blackboard.application.ports import EventStore, StoredEvent
from blackboard.application.projection import Projector
from blackboard.domain.blackboard import BlackboardAggregate
from blackboard.domain.errors import InvalidInput
from blackboard.domain.events import (
    SOLVE_SEPARATOR,
    STREAM_SEPARATOR,
    BlackboardEvent,
    EntryEvent,
    SolveEvent,
    board_of_stream,
    load_event,
)
from blackboard.domain.knowledge import rules as entry_rules
from blackboard.domain.knowledge.entries import KEY_PATTERN


@dataclass(frozen=True, slots=True)
class Imported:
    blackboard_id: str
    events: int
    streams: int
    positions: list[int]
    kept_positions: bool  # the export's own positions (the store's log ended before them)


class BoardTransfer:
    def __init__(self, store: EventStore, projector: Projector) -> None:
        self._store = store
        self._projector = projector

    def export(self, blackboard_id: str) -> list[StoredEvent]:
        events = self._store.board_events(blackboard_id)
        if not events:
            raise BoardNotFound(blackboard_id)
        return events

    def import_board(self, blackboard_id: str, events: Sequence[StoredEvent]) -> Imported:
        check(blackboard_id, events)
        positions = self._store.import_events(blackboard_id, events)
        self._projector.catch_up()  # the import only appended: its rows follow here, before anyone asks
        return Imported(
            blackboard_id,
            len(events),
            len({e.stream_id for e in events}),
            positions,
            positions == [e.position for e in events],
        )


def check(blackboard_id: str, events: Sequence[StoredEvent]) -> list[BlackboardEvent]:
    """The rules an imported board keeps, each broken one as InvalidInput naming the event's field:
    events in position order, ids unique, each stream the board's with versions 1, 2, ... without a
    gap, each event loading as its type (upcast from its schema version), and the whole replaying
    into a board and its entries as the read model will fold them. Returns the loaded events."""
    if not events:
        raise InvalidInput("events", "must hold at least one event")
    loaded: list[BlackboardEvent] = []
    ids: set[str] = set()
    versions: dict[str, int] = {}
    for i, stored in enumerate(events):
        at = f"events[{i}]"
        if i and stored.position <= events[i - 1].position:
            raise InvalidInput(
                f"{at}.position",
                f"must be above the one before ({events[i - 1].position}): "
                f"events come in position order, got {stored.position}",
            )
        if stored.event_id in ids:
            raise InvalidInput(f"{at}.event_id", f"must be unique, {stored.event_id} comes twice")
        ids.add(stored.event_id)
        board, key = board_of_stream(stored.stream_id), stored.stream_id.partition(STREAM_SEPARATOR)[2]
        if board != blackboard_id:
            raise InvalidInput(
                f"{at}.stream_id",
                f"must be the board {blackboard_id}'s, one of its entry keys' "
                f"(<board>\\u001f<key>) or one of its solve runs' (<board>\\u001e<run>), got {stored.stream_id!r}",
            )
        if SOLVE_SEPARATOR in stored.stream_id:
            pass  # a solve run's: its event's own stream is checked below
        elif STREAM_SEPARATOR in stored.stream_id and not KEY_PATTERN.fullmatch(key):
            raise InvalidInput(
                f"{at}.stream_id", f"an entry key must be 1..200 of A-Z a-z 0-9 _ . : / -, got {key!r}"
            )
        expected = versions.get(stored.stream_id, 0) + 1
        if stored.version != expected:
            raise InvalidInput(
                f"{at}.version",
                f"must be {expected} in stream {stored.stream_id!r}: "
                f"versions go 1, 2, ... without a gap, got {stored.version}",
            )
        versions[stored.stream_id] = expected
        event = _load(at, blackboard_id, stored)
        if event.stream_id != stored.stream_id:
            raise InvalidInput(
                f"{at}.stream_id",
                f"must be its event's stream {event.stream_id!r} "
                f"(a {stored.event_type}), got {stored.stream_id!r}",
            )
        loaded.append(event)
    _replays(blackboard_id, loaded, events)
    return loaded


def _load(at: str, blackboard_id: str, stored: StoredEvent) -> BlackboardEvent:
    envelope = {
        "event_id": stored.event_id,
        "blackboard_id": blackboard_id,
        "version": stored.version,
        "occurred_at": stored.occurred_at,
    }
    try:
        return load_event(stored.event_type, stored.schema_version, envelope, dict(stored.data))
    except LookupError as exc:  # an unknown event type, or a schema version no upcaster brings up to date
        raise InvalidInput(
            f"{at}.event_type", f"must be a known event type at a known schema version: {exc}"
        ) from None
    except ValueError as exc:  # pydantic's ValidationError: the data does not make that event
        first = str(exc).splitlines()
        raise InvalidInput(
            f"{at}.data",
            f"must be a valid {stored.event_type} (schema version "
            f"{stored.schema_version}): {' '.join(first[1:3]).strip() or first[0]}",
        ) from None


def _replays(blackboard_id: str, loaded: list[BlackboardEvent], events: Sequence[StoredEvent]) -> None:
    """The board's events replay into signals, and each key's into an entry: else the read model
    could not fold them, and a catch-up would stop at them for good."""
    try:
        BlackboardAggregate.replay(
            blackboard_id, [e for e in loaded if not isinstance(e, EntryEvent | SolveEvent)]
        )
    except KeyError as exc:
        raise InvalidInput(
            "events", f"must replay into a board: an event names signal {exc} before it is posted"
        ) from None
    except Exception as exc:  # noqa: BLE001 - whatever the fold would trip on is bad input here
        raise InvalidInput("events", f"must replay into a board: {exc}") from None
    keys: dict[str, list[tuple[EntryEvent, int]]] = {}
    for event, stored in zip(loaded, events, strict=True):
        if isinstance(event, EntryEvent):
            keys.setdefault(event.key, []).append((event, stored.position))
    for key, history in keys.items():
        try:
            entry_rules.replay(history)
        except Exception as exc:  # noqa: BLE001
            raise InvalidInput("events", f"the entry {key} must replay: {exc}") from None
