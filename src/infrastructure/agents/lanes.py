"""Calls of in-process handlers on reused daemon threads ("lanes"), so a caller can stop waiting for one.

A Python call cannot be killed. Running it on a lane rather than in the caller's thread lets the
caller give up on it (timeout, shutdown, a lost claim) and return at once; the abandoned call keeps
its lane until it returns by itself, and the lane is daemonic, so it never holds up the process's
exit. A lane whose call ended waits for the next one: handing a call to an idle lane costs a few
tens of microseconds, where starting a thread per call costs about twice that.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from queue import SimpleQueue
from typing import Any

IDLE_LANES_KEPT = 128  # above a worker's usual --concurrency; past it, a lane whose call ends stops

_idle: list[SimpleQueue[Call]] = []
_idle_lock = threading.Lock()
os.register_at_fork(after_in_child=_idle.clear)  # a forked child has none of its parent's threads


class Call:
    """One call of `function(argument)` on a lane: `wait` for it, then read `value` or `error`."""

    __slots__ = ("function", "argument", "value", "error", "_running")

    def __init__(self, function: Callable[[Any], Any], argument: Any) -> None:
        self.function = function
        self.argument = argument
        self.value: Any = None
        self.error: BaseException | None = None
        self._running = threading.Lock()  # held until the call ends; cheaper to wait on than an Event
        self._running.acquire()

    def wait(self, seconds: float) -> bool:
        """Whether the call has ended, waiting up to `seconds` for it."""
        if self._running.acquire(timeout=seconds):
            self._running.release()  # so a later wait sees it ended too
            return True
        return False


def start_call(function: Callable[[Any], Any], argument: Any) -> Call:
    """Run `function(argument)` on an idle lane, or on a new one when none is idle."""
    call = Call(function, argument)
    with _idle_lock:
        lane = _idle.pop() if _idle else None
    if lane is None:
        lane = SimpleQueue()
        threading.Thread(target=_serve, args=(lane,), name="entrypoint-lane", daemon=True).start()
    lane.put(call)
    return call


def _serve(lane: SimpleQueue[Call]) -> None:
    while True:
        call = lane.get()
        try:
            call.value = call.function(call.argument)
        except BaseException as exc:  # noqa: BLE001 - even sys.exit() in a handler is the call's outcome
            call.error = exc
        with _idle_lock:  # idle again before the caller hears of the end, so its next call reuses this lane
            kept = len(_idle) < IDLE_LANES_KEPT
            if kept:
                _idle.append(lane)
        call._running.release()
        if not kept:
            return
