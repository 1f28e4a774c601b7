"""Waking waiters by polling the log's last position: cheap on SQLite (one index lookup per poll)."""

from __future__ import annotations

import threading
import time

from blackboard.application.ports import EventStore, LogNotifier
from blackboard.domain.events import BlackboardEvent


class PollingNotifier(LogNotifier):
    """Polls every `interval`; an append made by this process wakes its waiters at once instead
    (`appended`, which the container subscribes to the dispatcher)."""

    def __init__(self, store: EventStore, interval: float = 0.02) -> None:
        self._store = store
        self._interval = interval
        self._appended = threading.Event()

    def appended(self, _event: BlackboardEvent | None = None) -> None:
        """This process stored an event: waiters look at the log now rather than at their next poll."""
        self._appended.set()

    def wait(self, after: int, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while self._store.last_position() <= after:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            self._appended.wait(min(self._interval, remaining))
            self._appended.clear()  # the log is read again before this returns: no append goes unseen
        return True
