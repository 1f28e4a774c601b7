"""In-memory event store: the reference behaviour of the EventStore port, thread-safe."""

from __future__ import annotations

import bisect
import threading
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from blackboard.application.errors import BoardExists, ConcurrencyConflict
from blackboard.application.ports import EventStore, Recorded, StoredEvent
from blackboard.domain.events import BlackboardEvent, board_of_stream, load_event


class InMemoryEventStore(EventStore):
    def __init__(self, now: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self._log: list[Recorded] = []
        self._streams: dict[str, list[BlackboardEvent]] = {}
        self._ids: set[str] = set()
        self._lock = threading.Lock()
        self._board_locks: defaultdict[str, threading.RLock] = defaultdict(threading.RLock)
        self._now = now
        self._stored: dict[
            str, StoredEvent
        ] = {}  # event id -> as imported: its data in its own schema version

    @contextmanager
    def hold(self, blackboard_id: str) -> Iterator[None]:
        """No other writer appends to this board while the block runs."""
        with self._board_lock(blackboard_id):
            yield

    def _board_lock(self, blackboard_id: str) -> threading.RLock:
        with self._lock:
            return self._board_locks[blackboard_id]

    def append(
        self,
        blackboard_id: str,
        expected_version: int,
        events: Sequence[BlackboardEvent],
        metadata: Mapping[str, Any] | None = None,
    ) -> list[Recorded]:
        if any(e.stream_id != blackboard_id for e in events):  # a board's stream, or an entry key's
            raise ValueError(f"every appended event must belong to stream {blackboard_id!r}")
        with self._board_lock(blackboard_id), self._lock:
            if all(e.event_id in self._ids for e in events):
                return []  # already stored (or nothing to store): appending again is a no-op
            stream = self._streams.setdefault(blackboard_id, [])
            wanted = list(range(expected_version + 1, expected_version + 1 + len(events)))
            if len(stream) != expected_version or [e.version for e in events] != wanted:
                raise ConcurrencyConflict(blackboard_id, expected_version)
            at = self._now()
            meta = dict(metadata or {})
            last = self._log[-1].position if self._log else 0  # an import may have left gaps
            recorded = [Recorded(last + i + 1, e, at, meta) for i, e in enumerate(events)]
            stream.extend(events)
            self._log.extend(recorded)
            self._ids.update(e.event_id for e in events)
            return recorded

    def load(self, blackboard_id: str, after_version: int = 0) -> list[BlackboardEvent]:
        with self._lock:
            return list(self._streams.get(blackboard_id, [])[after_version:])

    def read_all(self, after: int = 0, limit: int | None = None) -> list[Recorded]:
        with self._lock:
            start = bisect.bisect_right(self._log, after, key=lambda r: r.position)  # positions may have gaps
            return self._log[start : None if limit is None else start + limit]

    def last_position(self) -> int:
        with self._lock:
            return self._log[-1].position if self._log else 0

    def board_events(self, blackboard_id: str) -> list[StoredEvent]:
        with self._lock:
            return [
                self._stored.get(r.event.event_id) or _as_stored(r)
                for r in self._log
                if board_of_stream(r.event.stream_id) == blackboard_id
            ]

    def import_events(self, blackboard_id: str, events: Sequence[StoredEvent]) -> list[int]:
        if any(board_of_stream(e.stream_id) != blackboard_id for e in events):
            raise ValueError(f"every imported event must belong to board {blackboard_id!r}")
        loaded = [
            load_event(
                e.event_type,
                e.schema_version,
                {
                    "event_id": e.event_id,
                    "blackboard_id": blackboard_id,
                    "version": e.version,
                    "occurred_at": e.occurred_at,
                },
                dict(e.data),
            )
            for e in events
        ]
        with self._board_lock(blackboard_id), self._lock:
            held = {s for s in self._streams if board_of_stream(s) == blackboard_id}
            if held:
                raise BoardExists(blackboard_id, f"this store holds {len(held)} of its streams already")
            if taken := next((e.event_id for e in events if e.event_id in self._ids), None):
                raise BoardExists(blackboard_id, f"event id {taken} is stored already, in another board")
            last = self._log[-1].position if self._log else 0
            keep = bool(events) and events[0].position > last
            positions = [e.position if keep else last + i + 1 for i, e in enumerate(events)]
            for position, stored, event in zip(positions, events, loaded, strict=True):
                self._log.append(Recorded(position, event, stored.recorded_at, dict(stored.metadata)))
                self._streams.setdefault(event.stream_id, []).append(event)
                self._ids.add(event.event_id)
                self._stored[event.event_id] = StoredEvent(**{**_fields(stored), "position": position})
            return positions


def _fields(stored: StoredEvent) -> dict[str, Any]:
    return {name: getattr(stored, name) for name in StoredEvent.__slots__}


def _as_stored(record: Recorded) -> StoredEvent:
    event = record.event
    return StoredEvent(
        position=record.position,
        event_id=event.event_id,
        stream_id=event.stream_id,
        version=event.version,
        event_type=event.event_type,
        schema_version=type(event).schema_version,
        data=event.data(),
        metadata=dict(record.metadata),
        occurred_at=event.occurred_at,
        recorded_at=record.recorded_at,
    )
