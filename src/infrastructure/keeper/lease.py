"""A claim's lease as the worker and its keeper both judge it: when it lapses, and what a stop for it says.

The board counts a claim's timeout from its last renewal (docs/agents.md, "Leases, timeouts and expiry"); a run
whose claim lapsed is someone else's work now, so the worker stops it by its own clock and the keeper by its own,
with this one rule. Both count on the monotonic clock, which one machine's processes share and a change of the
wall clock does not move, from a moment no later than the board's (the renewal is sent after it).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import UTC, datetime


@dataclass(frozen=True, slots=True)
class Lease:
    """`renewed`: when the claim was taken or last renewed (time.monotonic()); `timeout`: the claim timeout in
    seconds; `wall`: the same moment on the wall clock (time.time()), for what a stop says."""

    renewed: float
    timeout: float
    wall: float

    @classmethod
    def starting_now(cls, timeout: float) -> Lease:
        return cls(time.monotonic(), timeout, time.time())

    @property
    def lapses_at(self) -> float:
        return self.renewed + self.timeout

    def lapsed(self, now: float | None = None) -> bool:
        return (time.monotonic() if now is None else now) >= self.lapses_at

    def reason(self) -> str:
        """Why a run held by this lease was stopped."""
        lapsed, since = _clock(self.wall + self.timeout), _clock(self.wall)
        return f"stopped: its claim lapsed at {lapsed} (no renewal since {since})"


def _clock(moment: float) -> str:
    """As the board writes a moment in a reason: ISO 8601, UTC."""
    return datetime.fromtimestamp(moment, UTC).isoformat(timespec="milliseconds")
