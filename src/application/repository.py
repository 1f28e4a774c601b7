"""Loads and saves blackboard aggregates so that a load costs the same whatever the board's history."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from blackboard.application.ports import EventStore, Recorded, SnapshotStore
from blackboard.domain.blackboard import BlackboardAggregate
from blackboard.domain.events import BlackboardEvent


class BlackboardRepository:
    """A per-process cache in front of the event store, and snapshots for cold loads.

    `get` hands out a board for one command and takes it out of the cache, so two threads never
    share an instance; `save` or `release` puts it back. A board whose append conflicted takes its
    unsaved events back and returns to the cache, so the retry reads only the events it missed.

    A snapshot is taken when the events since the last one number at least `snapshot_every` and at
    least the board's signal count: writing one costs O(signals), so this keeps the cost per event
    constant while a cold load never replays more events than the board has signals.
    """

    def __init__(
        self,
        store: EventStore,
        snapshots: SnapshotStore | None = None,
        snapshot_every: int = 500,
        capacity: int = 64,
    ) -> None:
        self._store = store
        self._snapshots = snapshots
        self._snapshot_every = snapshot_every
        self._capacity = capacity
        self._cache: OrderedDict[str, BlackboardAggregate] = OrderedDict()
        self._snapshot_versions: dict[str, int] = {}
        self._ahead: dict[str, list[BlackboardEvent]] = {}  # events `refresh` read for a board's next get
        self._lock = threading.Lock()

    def get(self, blackboard_id: str) -> BlackboardAggregate:
        with self._lock:
            board = self._cache.pop(blackboard_id, None)
            ahead = self._ahead.pop(blackboard_id, [])
        board = board or self._cold(blackboard_id)
        for event in ahead:  # read by `refresh`; those the board already has are skipped
            if event.version == board.version + 1:
                board.apply(event)
        for event in self._store.load(blackboard_id, after_version=board.version):
            board.apply(event)
        return board

    def refresh(self, blackboard_id: str) -> None:
        """Read and decode the events appended to a cached board since it was cached, and keep them
        for its next `get`: a command about to hold the board then applies them at once and reads
        only what was appended in between, so others' events are decoded outside the hold. The
        board itself stays where it is (cached, or out with another thread of this process)."""
        with self._lock:
            board = self._cache.get(blackboard_id)
            ahead = self._ahead.get(blackboard_id)
            if board is None:
                return
            after = max(board.version, ahead[-1].version if ahead else 0)
        events = self._store.load(blackboard_id, after_version=after)
        if not events:
            return
        with self._lock:
            ahead = self._ahead.setdefault(blackboard_id, [])
            last = ahead[-1].version if ahead else after
            ahead.extend(e for e in events if e.version > last)

    def save(self, board: BlackboardAggregate, metadata: Mapping[str, Any] | None = None) -> list[Recorded]:
        """Append the board's new events under the version it was loaded at; ConcurrencyConflict if moved."""
        events = board.pending_events
        try:
            recorded = self._store.append(
                board.id, board.version - len(events), events, metadata, resulting=board.pending_changes()
            )
        except BaseException:
            board.discard_pending()
            self.release(board)
            raise
        board.collect_events()
        self._maybe_snapshot(board)
        self.release(board)
        return recorded

    def release(self, board: BlackboardAggregate) -> None:
        """Give back a board for reuse; decisions it holds that were never stored are taken back."""
        board.discard_pending()
        with self._lock:
            self._cache[board.id] = board
            self._cache.move_to_end(board.id)
            while len(self._cache) > self._capacity:
                self._cache.popitem(last=False)

    def _cold(self, blackboard_id: str) -> BlackboardAggregate:
        snapshot = self._snapshots.get(blackboard_id) if self._snapshots else None
        if snapshot is None:
            self._snapshot_versions[blackboard_id] = 0
            return BlackboardAggregate(blackboard_id)
        version, signals = snapshot
        self._snapshot_versions[blackboard_id] = version
        return BlackboardAggregate.restore(blackboard_id, version, signals)

    def _maybe_snapshot(self, board: BlackboardAggregate) -> None:
        if self._snapshots is None:
            return
        since = board.version - self._snapshot_versions.get(board.id, 0)
        if since >= self._snapshot_every and since >= board.signal_count:
            version, signals = board.snapshot()
            self._snapshots.save(board.id, version, signals)
            self._snapshot_versions[board.id] = version
