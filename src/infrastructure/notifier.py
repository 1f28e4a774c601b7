"""Waking waiters by polling the log's last position: cheap on SQLite (one index lookup per poll)."""

from __future__ import annotations

import time

from blackboard.application.ports import EventStore, LogNotifier


class PollingNotifier(LogNotifier):
    def __init__(self, store: EventStore, interval: float = 0.02) -> None:
        self._store = store
        self._interval = interval

    def wait(self, after: int, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while self._store.last_position() <= after:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            time.sleep(min(self._interval, remaining))
        return True
