"""Loads and saves blackboard aggregates, keeping recent ones so a load reads only new events."""

from __future__ import annotations

import threading
from collections import OrderedDict

from application.ports import EventStore, Recorded
from domain.blackboard import BlackboardAggregate


class BlackboardRepository:
    """A per-process cache in front of the event store.

    `get` hands out a board for one command and takes it out of the cache, so two threads never
    share an instance; `save` or `release` puts it back. A board whose append conflicted is
    dropped, and the next `get` rebuilds it from the store.
    """

    def __init__(self, store: EventStore, capacity: int = 64) -> None:
        self._store = store
        self._capacity = capacity
        self._cache: OrderedDict[str, BlackboardAggregate] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, blackboard_id: str) -> BlackboardAggregate:
        with self._lock:
            board = self._cache.pop(blackboard_id, None)
        board = board or BlackboardAggregate(blackboard_id)
        for event in self._store.load(blackboard_id, after_version=board.version):
            board.apply(event)
        return board

    def save(self, board: BlackboardAggregate) -> list[Recorded]:
        """Append the board's new events under the version it was loaded at; ConcurrencyConflict if moved."""
        events = board.collect_events()
        recorded = self._store.append(board.id, board.version - len(events), events)
        self.release(board)
        return recorded

    def release(self, board: BlackboardAggregate) -> None:
        """Give back a board whose state matches the store (saved, or left unchanged)."""
        if board.has_pending_events:
            return  # it holds decisions that were never stored: not safe to reuse
        with self._lock:
            self._cache[board.id] = board
            self._cache.move_to_end(board.id)
            while len(self._cache) > self._capacity:
                self._cache.popitem(last=False)
