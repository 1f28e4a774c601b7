"""Why `blackboard show` says a POSTED signal waits for a rate limit: the runnable agent that fits it best has
a rate limit whose shared window has no room now (application/ranking.py, `rate_hold`).

One read of the windows (a handful of rows, one per key); the agent files are read only when one holds."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def rate_wait(
    signal: Any,
    config: Any,
    queries: Callable[[], Any],
    registry: Callable[[], Any],
    rate_windows: Callable[[], Any],
    clock: Callable[[], Any],
) -> str | None:
    """The key holding the signal back (None: no rate limit does)."""
    from blackboard.application.ranking import rate_hold

    return rate_hold(
        queries(), registry, config.claim_threshold, rate_windows().windows(), signal, clock().now()
    )
