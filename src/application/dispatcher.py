"""In-process dispatcher: handlers registered by event type, called after the events are stored."""

from __future__ import annotations

import logging
import threading
from collections import defaultdict, deque
from collections.abc import Callable, Sequence

from blackboard.application.ports import EventPublisher
from blackboard.domain.events import BlackboardEvent

logger = logging.getLogger(__name__)

Handler = Callable[[BlackboardEvent], None]


class EventDispatcher(EventPublisher):
    """Calls every handler registered for an event's type (or for all events with `None`).

    A handler may itself run a command; the events that command stores are queued and delivered
    after the current ones, so every subscriber sees events in the order they were stored.
    """

    def __init__(self) -> None:
        self._handlers: dict[type[BlackboardEvent] | None, list[Handler]] = defaultdict(list)
        self._local = threading.local()

    def register(self, event_type: type[BlackboardEvent] | None, handler: Handler) -> None:
        self._handlers[event_type].append(handler)

    def publish(self, events: Sequence[BlackboardEvent]) -> None:
        """Call after commit. A failing handler is logged and never undoes the write."""
        queue: deque[BlackboardEvent] | None = getattr(self._local, "queue", None)
        if queue is not None:  # published from inside a handler: deliver after the current events
            queue.extend(events)
            return
        self._local.queue = queue = deque(events)
        try:
            while queue:
                self._deliver(queue.popleft())
        finally:
            self._local.queue = None

    def _deliver(self, event: BlackboardEvent) -> None:
        for handler in (*self._handlers[type(event)], *self._handlers[None]):
            try:
                handler(event)
            except Exception:
                logger.exception("handler %r failed on %s", handler, event.event_type)
