"""The port a runner's calls and the read side use for rate limits' windows (domain/rates.py), outside a claim.

A claim takes its run's first call's room in its own transaction (`BoardTransaction.rate_window`); each
later call of a run takes its room here, and what the API answered settles it and tightens the window.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from datetime import datetime

from blackboard.domain.rates import RateLimit, RateWindow


class RateWindows(abc.ABC):
    @abc.abstractmethod
    def change(
        self, limit: RateLimit, now: datetime, how: Callable[[RateWindow], RateWindow | None]
    ) -> RateWindow:
        """Hold the key's window (every claim and call under it, on any host, waits meanwhile), give it to
        `how`, keep what `how` makes of it (None: it stays as it is), and return the window as kept."""

    @abc.abstractmethod
    def windows(self) -> list[RateWindow]:
        """Every key's window as last changed, by key (for `status`, `show`, `next` and `/metrics`)."""
