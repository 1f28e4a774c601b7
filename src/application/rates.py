"""A run's calls under its agent's rate limit (docs/control.md, "Rate limits"): the room of each call taken
from the key's shared window before it is made, and what the API said reported after.

The worker hands a runner a `RateGate` when the run's agent has a rate limit. The claim took the room of the
run's first call already; every later call (the next turn of a tool loop, a call again after a 429) waits
here for room in the window, as every other holder of the key does, then takes it. After each call the
runner reports what it cost in tokens and what the API said of its limits (a 429's retry-after, the
rate-limit headers): the window is settled and tightened for everyone.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import datetime

from blackboard.application.ports.rates import RateWindows
from blackboard.domain.rates import RateLimit, RateSaid, RateWindow

NOTHING_SAID = RateSaid()
LONGEST_NAP = 5.0  # seconds between looks at the window while waiting for room (room may come sooner)
# seconds between the `waiting` calls of a wait for room (a stall watch's sign of life)
SAY_WAITING_EVERY = 1.0


class RateGate:
    """One run's way through its rate limit's window."""

    def __init__(
        self,
        windows: RateWindows,
        limit: RateLimit,
        now: Callable[[], datetime],
        first_taken: bool = True,
    ) -> None:
        self.limit = limit
        self._windows, self._now = windows, now
        self._paid = first_taken  # the claim took the first call's room
        self._took: float | None = None  # tokens the call in flight took (None: as the window expected)
        self._lock = threading.Lock()
        self.called = False  # a call went through `before_call`: the runner takes room call by call

    def before_call(self, stopped: threading.Event, waiting: Callable[[], None] = lambda: None) -> bool:
        """Wait for room in the window and take it; False when the run was stopped meanwhile. `waiting` is
        called every second of the wait: the run waits for its limit, it is not stalled (docs/control.md,
        "Stalls")."""
        self.called = True
        with self._lock:
            if self._paid:  # the claim's: taken with the claim, its tokens as expected then
                self._paid = False
                self._took = None
                return True
        while not stopped.is_set():
            box: list[float] = []

            def take(window: RateWindow, box: list[float] = box) -> RateWindow | None:
                now = self._now()
                wait = window.wait(self.limit, now)
                box.append(wait)
                if wait > 0:
                    return None
                box.append(window.refilled(self.limit, now).expected(self.limit))
                return window.taken(self.limit, now)

            self._windows.change(self.limit, self._now(), take)
            if box[0] <= 0:
                self._took = box[1]
                return True
            if napped(stopped, min(LONGEST_NAP, box[0]), waiting):
                return False
        return False

    def after_call(self, cost: int | None, said: RateSaid = NOTHING_SAID) -> None:
        """A call answered (or refused, `cost` None): settle its tokens and tighten the window by what the API
        said."""
        took, self._took = self._took, 0.0

        def settle(window: RateWindow) -> RateWindow:
            now = self._now()
            if cost is not None:
                taken = window.expected(self.limit) if took is None else took
                window = window.settled(self.limit, now, taken, cost)
            if said.says_anything:
                window = window.tightened(self.limit, now, said)
            return window

        if cost is not None or said.says_anything:
            self._windows.change(self.limit, self._now(), settle)


def napped(stopped: threading.Event, seconds: float, waiting: Callable[[], None]) -> bool:
    """Wait `seconds`, calling `waiting` every second of it (a run's sign of progress: waiting for a rate
    limit is no stall), True when stopped meanwhile; a runner's wait after a 429 too (runners/api_loop.py)."""
    until = time.monotonic() + seconds
    while (left := until - time.monotonic()) > 0:
        waiting()
        if stopped.wait(min(SAY_WAITING_EVERY, left)):
            return True
    waiting()
    return False
