"""Live: one thread follows the log's end through the LogNotifier (polling on SQLite, LISTEN/NOTIFY on
PostgreSQL) and wakes the page's streams; each stream reads only the records after its own position."""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import AsyncIterator
from typing import Any

from starlette.concurrency import run_in_threadpool

from blackboard.application.errors import Unavailable
from blackboard.application.ports import LogNotifier
from blackboard.infrastructure.web.view import BoardView

logger = logging.getLogger(__name__)


class LogFollower:
    """Wakes every waiting stream when the log moves past the last position it saw."""

    def __init__(self, view: BoardView, notifier: LogNotifier) -> None:
        self._view = view
        self._notifier = notifier
        self._stopping = threading.Event()
        self._changed: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._changed = asyncio.Event()
        threading.Thread(target=self._follow, name="blackboard-ui-follower", daemon=True).start()

    def stop(self) -> None:
        self._stopping.set()

    def changed(self) -> asyncio.Event:
        """Set at the next move of the log: take it *before* reading, so no move goes unseen."""
        assert self._changed is not None, "start() first"
        return self._changed

    def _follow(self) -> None:
        position = None
        while not self._stopping.is_set():
            try:
                if position is None:
                    position = self._view.last_position()
                if self._notifier.wait(position, 0.5):
                    position = self._view.last_position()
                    assert self._loop is not None
                    self._loop.call_soon_threadsafe(self._wake)
            except Exception as exc:  # noqa: BLE001 - the database went away: streams keep waiting, retry
                logger.warning("following the log: %s; retrying", exc)
                position = None
                self._stopping.wait(0.5)

    def _wake(self) -> None:
        woken, self._changed = self._changed, asyncio.Event()
        assert woken is not None
        woken.set()


async def log_stream(view: BoardView, follower: LogFollower, since: int) -> AsyncIterator[dict[str, Any]]:
    """Server-sent events: each record after `since` (`log`, with the signal or entry it changed), then
    `position` once caught up; then waits for the log to move. Ids are positions, so a reconnecting
    EventSource resumes where it was (Last-Event-ID)."""
    position = since
    while True:
        moved = follower.changed()
        try:
            records = await run_in_threadpool(view.read_after, position)
            documents = [await run_in_threadpool(view.live, record) for record in records]
        except Unavailable as exc:  # the database restarts: the page keeps its stream, reading resumes after
            logger.warning("reading the log: %s; retrying", exc)
            await asyncio.sleep(0.5)
            continue
        for document in documents:
            position = document["position"]
            yield {"event": "log", "id": str(position), "data": json.dumps(document)}
        if not records:
            yield {"event": "position", "id": str(position), "data": str(position)}
            await moved.wait()
