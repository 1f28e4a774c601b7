"""Waiting on a condition instead of sleeping and then asserting: a test is as fast as the machine allows,
and a slow machine only makes it slower, never wrong."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

# A condition that costs (a CLI call is a process of its own: ~0.1 s, ~50 ms of CPU) is asked again after twice
# what it took, so it runs at most a third of the time instead of back to back: a wait of seconds made of CLI
# calls (a post timeout, a worker going stale) used to make dozens of them. A cheap condition (a file, a query
# in the test's own process) keeps the short interval.
COST_FACTOR, LONGEST_PAUSE = 2.0, 0.5


def wait_until(
    condition: Callable[[], T], timeout: float = 30.0, what: str = "the condition", interval: float = 0.02
) -> T:
    """The first truthy value `condition()` returns; fails the test if none comes within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        began = time.monotonic()
        if value := condition():
            return value
        now = time.monotonic()
        if now >= deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(max(interval, min(COST_FACTOR * (now - began), LONGEST_PAUSE, deadline - now)))
