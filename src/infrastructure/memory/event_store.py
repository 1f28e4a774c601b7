"""In-memory event store: the reference behaviour of the EventStore port, thread-safe."""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from blackboard.application.errors import ConcurrencyConflict
from blackboard.application.ports import EventStore, Recorded
from blackboard.domain.events import BlackboardEvent


class InMemoryEventStore(EventStore):
    def __init__(self, now: Callable[[], datetime] = lambda: datetime.now(UTC)) -> None:
        self._log: list[Recorded] = []
        self._streams: dict[str, list[BlackboardEvent]] = {}
        self._ids: set[str] = set()
        self._lock = threading.Lock()
        self._board_locks: defaultdict[str, threading.RLock] = defaultdict(threading.RLock)
        self._now = now

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
            recorded = [Recorded(len(self._log) + i + 1, e, at, meta) for i, e in enumerate(events)]
            stream.extend(events)
            self._log.extend(recorded)
            self._ids.update(e.event_id for e in events)
            return recorded

    def load(self, blackboard_id: str, after_version: int = 0) -> list[BlackboardEvent]:
        with self._lock:
            return list(self._streams.get(blackboard_id, [])[after_version:])

    def read_all(self, after: int = 0, limit: int | None = None) -> list[Recorded]:
        with self._lock:
            end = None if limit is None else after + limit
            return self._log[after:end]

    def last_position(self) -> int:
        with self._lock:
            return len(self._log)
