"""Automatic retries: an agent's retry policy, the wait before the next attempt, and whether one is left.

A signal gets `max_attempts` attempts: the post's (`post --max-attempts`) if it set one, else the policy of
the agent that claimed the attempt (its file's `retries`), else one (no retry). A failed attempt with
attempts left puts the same signal back to POSTED, claimable once its wait has passed (docs/control.md,
"Retries"). Pure: the jitter's random draw comes in as a number, as time comes in as `at`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from blackboard.domain.errors import InvalidInput

MAX_WAIT = 86_400.0  # seconds: no wait between attempts is longer than a day
MAX_ATTEMPTS = 1_000  # a policy asking for more is a typo, not a plan


class Backoff(StrEnum):
    EXPONENTIAL = "exponential"  # initial, then twice as long each time, up to max
    FIXED = "fixed"  # initial each time


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often an agent's attempts at a signal are retried and how long each retry waits: `initial`
    seconds after the first failure, doubling (exponential) or not (fixed), never more than `max`; the
    wait is then shortened by up to `jitter` of itself (0: exactly; 1: anywhere from 0 to the wait), so
    workers that failed together do not come back together."""

    max_attempts: int = 1
    backoff: Backoff = Backoff.EXPONENTIAL
    initial: float = 1.0
    max: float = 300.0
    jitter: float = 0.1

    def __post_init__(self) -> None:
        _check_attempts("max_attempts", self.max_attempts)
        if not isinstance(self.backoff, Backoff):
            raise InvalidInput("backoff", f"must be exponential or fixed, got {self.backoff!r}")
        for name in ("initial", "max"):
            value = getattr(self, name)
            if not _number(value) or not 0 <= value <= MAX_WAIT:
                raise InvalidInput(name, f"must be a number of seconds from 0 to {MAX_WAIT:g}, got {value!r}")
        if self.max < self.initial:
            raise InvalidInput("max", f"must not be less than initial ({self.initial:g}s), got {self.max:g}s")
        if not _number(self.jitter) or not 0 <= self.jitter <= 1:
            raise InvalidInput("jitter", f"must be a fraction from 0 to 1, got {self.jitter!r}")

    def wait(self, attempt: int, draw: float) -> timedelta:
        """The wait after attempt number `attempt` (1 for the first) failed; `draw` is a random number in
        [0, 1): the wait lies in [(1 - jitter) * w, w], where w is the backoff capped at `max`."""
        if self.backoff is Backoff.FIXED:
            base = self.initial
        else:
            base = min(self.max, self.initial * 2.0 ** min(max(attempt - 1, 0), 64))
        draw = min(max(draw, 0.0), 1.0)
        return timedelta(seconds=base * (1.0 - self.jitter * draw))


def check_max_attempts(value: int | None, field: str = "max_attempts") -> int | None:
    """A post's `max_attempts`: None (the claimer's policy decides) or 1 to MAX_ATTEMPTS."""
    if value is not None:
        _check_attempts(field, value)
    return value


def check_retry_after(value: float | None, field: str = "retry_after") -> float | None:
    """A handler's `retry_after`: None, or a number of seconds from 0 to a day."""
    if value is not None and (not _number(value) or not 0 <= value <= MAX_WAIT):
        raise InvalidInput(field, f"must be a number of seconds from 0 to {MAX_WAIT:g}, got {value!r}")
    return value


@dataclass(frozen=True, slots=True)
class NextAttempt:
    """What a failed attempt with attempts left leads to: the same signal, claimable again at `at`."""

    attempt: int  # the attempt that failed (the next one is attempt + 1)
    max_attempts: int  # the limit that applied
    at: datetime  # when the next attempt may be claimed


def next_attempt(
    attempt: int,
    posted_max: int | None,
    policy: RetryPolicy | None,
    at: datetime,
    draw: float,
    retry_after: float | None = None,
) -> NextAttempt | None:
    """After attempt number `attempt` failed at `at`: the next attempt, or None when that was the last.
    The post's `posted_max` wins over the policy's; `retry_after` (a handler asking for a retry) replaces
    the backoff's wait."""
    policy = policy or NO_RETRY
    limit = posted_max if posted_max is not None else policy.max_attempts
    if attempt >= limit:
        return None
    wait = timedelta(seconds=retry_after) if retry_after is not None else policy.wait(attempt, draw)
    return NextAttempt(attempt=attempt, max_attempts=limit, at=at + wait)


@dataclass(frozen=True, slots=True)
class AttemptRules:
    """What the board asks when an attempt fails: the policy of the agent that claimed it (its file's
    `retries`, None without one), and a random draw in [0, 1) for the jitter."""

    policy_of: Callable[[str], RetryPolicy | None]
    draw: Callable[[], float]


ONE_ATTEMPT = AttemptRules(policy_of=lambda _agent: None, draw=lambda: 0.0)


def _check_attempts(field: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_ATTEMPTS:
        raise InvalidInput(
            field, f"must be a whole number of attempts from 1 to {MAX_ATTEMPTS}, got {value!r}"
        )


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


NO_RETRY = RetryPolicy()  # one attempt: a signal without a policy is not retried
