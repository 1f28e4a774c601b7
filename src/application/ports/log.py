"""The event log's port: events appended after a stream's version, read back in order, imported ranges."""

from __future__ import annotations

import abc
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from blackboard.domain.errors import InvalidInput
from blackboard.domain.events import BlackboardEvent

if TYPE_CHECKING:
    pass


# ---------------------------------------------------------------- the log


@dataclass(frozen=True, slots=True)
class Recorded:
    """An event as stored: its global position (commit order) and when it was recorded."""

    position: int
    event: BlackboardEvent
    recorded_at: datetime
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """An event exactly as the log keeps it: its data in the schema version it was written in (not
    upcast), its metadata and both times. What an export carries and an import puts back, so a
    round trip loses nothing."""

    position: int
    event_id: str
    stream_id: str  # the board's, or an entry key's (`<board>\x1f<key>`)
    version: int
    event_type: str
    schema_version: int
    data: Mapping[str, Any]
    metadata: Mapping[str, Any]
    occurred_at: datetime
    recorded_at: datetime


class EventStore(abc.ABC):
    """Append-only log of blackboard events, one stream per blackboard. Commands write through a
    `UnitOfWork`; `append` on its own is for tools that bring events of their own (imports, tests)."""

    @abc.abstractmethod
    def append(
        self,
        blackboard_id: str,
        expected_version: int,
        events: Sequence[BlackboardEvent],
        metadata: Mapping[str, Any] | None = None,
    ) -> list[Recorded]:
        """Store all of `events` or none of them.

        The board must be at `expected_version` and the events must carry the versions after it;
        otherwise raise ConcurrencyConflict and store nothing. Appending events whose ids are all
        stored already is a no-op that returns []. `metadata` (actor, correlation and causation
        ids) is kept with every event. Returns the stored events with their global positions.
        Raises StoreUnavailable when the store cannot be reached.
        """

    @abc.abstractmethod
    def load(self, blackboard_id: str, after_version: int = 0) -> list[BlackboardEvent]:
        """The board's events with a version above `after_version`, in version order ([] if none)."""

    @abc.abstractmethod
    def read_all(self, after: int = 0, limit: int | None = None) -> list[Recorded]:
        """Events of every board with a position above `after`, in position order, never skipping one."""

    @abc.abstractmethod
    def last_position(self) -> int:
        """The highest stored position (0 when empty)."""

    def posted_with(self, correlation_id: str, blackboard_id: str | None = None) -> list[tuple[str, str]]:
        """(board, signal id) of every signal posted with this correlation id (on that board, or on any),
        in posting order: what `cancel --correlation-id` ends. This default reads the whole log; a
        store searches where the rows are."""
        return [
            (r.event.blackboard_id, r.event.signal_id)
            for r in self.read_all()
            if r.event.event_type == "AgentSignalPosted"
            and r.metadata.get("correlation_id") == correlation_id
            and (blackboard_id is None or r.event.blackboard_id == blackboard_id)
        ]

    def completion_of(self, blackboard_id: str, signal_id: str) -> BlackboardEvent | None:
        """The AgentSignalCompleted of the signal on that board (a signal completes at most once), or None.
        This default reads the board's whole stream; a store reads that one event."""
        return next(
            (
                e
                for e in reversed(self.load(blackboard_id))
                if e.event_type == "AgentSignalCompleted" and e.signal_id == signal_id
            ),
            None,
        )

    def nudges_of(self, blackboard_id: str, signal_id: str) -> list[BlackboardEvent]:
        """The AgentSignalNudged events of the signal on that board, oldest first: what the worker running
        it delivers (worker/nudges.py). This default reads the board's whole stream; a store reads those."""
        return [
            e
            for e in self.load(blackboard_id)
            if e.event_type == "AgentSignalNudged" and e.signal_id == signal_id
        ]

    def board_events(self, blackboard_id: str) -> list[StoredEvent]:
        """Every event of the board's stream and of its entry streams, as stored, in position order
        ([] when the store does not hold the board). What `export` writes."""
        raise NotImplementedError(f"{type(self).__name__} does not export")

    def stream_board_events(self, blackboard_id: str) -> Iterator[StoredEvent]:
        """`board_events` one at a time, reading the log in chunks: what `export` writes as it reads
        (memory flat in the board's size). This default reads them all at once."""
        return iter(self.board_events(blackboard_id))

    def import_stream(self, blackboard_id: str, events: Iterable[StoredEvent]) -> ImportedRange:
        """`import_events` of events read as they come, all or none: the store keeps nothing of them
        in memory but a chunk, and refuses (InvalidInput naming `events[i].event_id`, writing nothing)
        an event id that comes twice. This default holds them all."""
        listed = list(events)
        ids: set[str] = set()
        for i, event in enumerate(listed):
            if event.event_id in ids:
                raise InvalidInput(f"events[{i}].event_id", f"must be unique, {event.event_id} comes twice")
            ids.add(event.event_id)
        positions = self.import_events(blackboard_id, listed)
        return ImportedRange(
            len(listed), positions[0], positions[-1], positions == [e.position for e in listed]
        )

    def import_events(self, blackboard_id: str, events: Sequence[StoredEvent]) -> list[int]:
        """Store events recorded elsewhere (an export of the board), all or none, in the order given
        (their position order), keeping their ids, versions, data, metadata and both times; only
        appends, leaving the read model to a catch-up. Their positions are kept when all come after
        the log's end (always so in an empty store), else new ones are handed out in their order.
        Returns the positions. Raises BoardExists (writing nothing) if the store holds any event of
        the board's streams, or any of these event ids; StoreUnavailable when it cannot be reached."""
        raise NotImplementedError(f"{type(self).__name__} does not import")


@dataclass(frozen=True, slots=True)
class ImportedRange:
    """What an import stored: how many events, the first and last positions they got, and whether
    those are the export's own (the store's log ended before them)."""

    events: int
    first_position: int
    last_position: int
    kept_positions: bool
