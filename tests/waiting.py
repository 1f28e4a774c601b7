"""Waiting on a condition instead of sleeping and then asserting: a test is as fast as the machine allows,
and a slow machine only makes it slower, never wrong."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(
    condition: Callable[[], T], timeout: float = 30.0, what: str = "the condition", interval: float = 0.02
) -> T:
    """The first truthy value `condition()` returns; fails the test if none comes within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not (value := condition()):
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(interval)
    return value
