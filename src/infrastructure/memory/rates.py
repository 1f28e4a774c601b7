"""Rate limits' windows in memory (the reference behaviour for the core's tests): one per key, each held
through the store's hold of a stream of its own, as a claim holds a concurrency key."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from datetime import datetime

from blackboard.application.ports.rates import RateWindows
from blackboard.domain.rates import RateLimit, RateWindow
from blackboard.infrastructure.memory.event_store import InMemoryEventStore

RATE_STREAM = "\x1e"  # a rate key's hold: never a board's, an entry key's nor a concurrency key's name
# by store: the windows its transactions and calls share
_WINDOWS: weakref.WeakKeyDictionary[InMemoryEventStore, dict[str, RateWindow]] = weakref.WeakKeyDictionary()


def windows_of(store: InMemoryEventStore) -> dict[str, RateWindow]:
    return _WINDOWS.setdefault(store, {})


class InMemoryRateWindows(RateWindows):
    def __init__(self, store: InMemoryEventStore) -> None:
        self._store = store

    def change(
        self, limit: RateLimit, now: datetime, how: Callable[[RateWindow], RateWindow | None]
    ) -> RateWindow:
        windows = windows_of(self._store)
        with self._store.hold(f"{RATE_STREAM}{limit.key}"):
            window = windows.get(limit.key) or RateWindow.full(limit, now)
            changed = how(window)
            windows[limit.key] = changed or window
            return windows[limit.key]

    def windows(self) -> list[RateWindow]:
        return [w for _, w in sorted(windows_of(self._store).items())]
