"""The beat thread: says every few seconds that this worker is live, what it claims with and what it runs.

Presence is not an event (application/presence.py): each beat replaces this worker's one row. A claim
or an outcome beats sooner (at most every MIN_GAP seconds), so `status` shows what runs now. A stopped
worker says so; one that dies just stops beating and goes stale after MISSED_BEATS missed beats.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta

from blackboard.application.ports import Clock, StoreUnavailable
from blackboard.application.presence import PresenceStore
from blackboard.domain.capabilities import AgentProfile
from blackboard.domain.errors import BlackboardError
from blackboard.domain.presence import WorkerPresence

logger = logging.getLogger("blackboard.worker")  # the whole worker logs under one name, which users filter on

MIN_GAP = 0.5  # seconds: a busy worker's claims and outcomes beat at most this often
FORGET_AFTER = timedelta(days=1)  # rows of workers gone longer than this are dropped at a worker's start


class Heartbeat:
    """Beats for one worker from its own thread, from `start` to `stop`."""

    def __init__(
        self,
        presence: PresenceStore,
        clock: Clock,
        worker_id: str,
        profile: Callable[[], AgentProfile],
        threshold: float,
        boards: tuple[str, ...],
        every: float,
        running: Callable[[], list[tuple[str, str]]],
    ) -> None:
        self._presence, self._clock = presence, clock
        self._profile, self._threshold, self._running = profile, threshold, running
        self._every = every
        self._me: WorkerPresence | None = None
        self._identity = (worker_id, socket.gethostname(), os.getpid(), boards)
        self._changed = threading.Event()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="beat", daemon=True)

    def start(self) -> None:
        """The first beat before the first claim, so other processes see this worker from then on."""
        self._forget_the_long_gone()
        self._beat()
        self._thread.start()

    def changed(self) -> None:
        """What this worker runs changed: beat soon."""
        self._changed.set()

    def stop(self) -> None:
        """No more beats; the row says the worker stopped (its signals' post timeouts count from now)."""
        self._stopping.set()
        self._changed.set()
        if self._thread.is_alive():
            self._thread.join()
        try:
            self._presence.stopped(self._identity[0], self._clock.now())
        except StoreUnavailable as down:
            logger.warning("could not say this worker stopped (%s); it goes stale instead", down)

    def _run(self) -> None:
        last = time.monotonic()
        while not self._stopping.is_set():
            self._changed.wait(max(0.0, last + self._every - time.monotonic()))
            if self._stopping.is_set():
                return
            if self._stopping.wait(max(0.0, last + MIN_GAP - time.monotonic())):
                return
            self._changed.clear()  # before reading what runs: a change from here on beats again
            last = time.monotonic()
            self._beat()

    def _beat(self) -> None:
        try:
            if (me := self._presence_now(self._clock.now())) is not None:
                self._presence.beat(me)
        except StoreUnavailable as down:  # the claim loop rides out the outage; the next beat tries again
            logger.warning("could not beat (%s); will try again", down)
        except Exception:  # a beat must never end the thread: the worker would go stale while it works
            logger.exception("could not beat")

    def _presence_now(self, now: datetime) -> WorkerPresence | None:
        """This worker as it is now; None when its agent's file cannot be read and never could."""
        worker_id, host, pid, boards = self._identity
        try:
            profile = self._profile()  # as its file says now: a changed file counts from the next beat
        except BlackboardError:  # the file went away meanwhile: claim with what it said last
            if self._me is None:
                return None
            profile = self._me.agent
        profile = profile.model_copy(update={"threshold": profile.threshold_or(self._threshold)})
        started = self._me.started_at if self._me is not None else now
        self._me = WorkerPresence(
            worker_id=worker_id,
            agent=profile,
            host=host,
            pid=pid,
            started_at=started,
            last_beat=now,
            beat_every=timedelta(seconds=self._every),
            boards=boards,
            running=tuple(self._running()),
        )
        return self._me

    def _forget_the_long_gone(self) -> None:
        try:
            self._presence.forget(self._clock.now() - FORGET_AFTER)
        except StoreUnavailable as down:
            logger.warning("could not forget gone workers (%s)", down)
