"""Shared rate limits (docs/control.md, "Rate limits"): one window per key, as pure rules.

`rate_limit: {key: K, requests_per_minute: N, tokens_per_minute: N}` in an agent file (or, per model, in
configuration) puts the agent's calls to its model API under K's window: every agent naming K, on every
board and every host of the board's database, shares it. The window is a token bucket, as the APIs keep
theirs: its room refills continuously at the limit's rate, up to one minute's worth, and each call takes
one request and the tokens a call is expected to cost (what the key's calls cost lately; what a call did
cost is settled after it). A claim takes the room of its run's first call, so a signal waits, POSTED, while
the window has none; a runner takes the room of each later call before making it. What the APIs say
tightens the window for everyone: a 429's retry-after closes it until then, and their rate-limit headers'
remaining requests and tokens bound what is left. The unit of work keeps the window in the database (one
row per key, changed under its lock); these functions decide.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from pydantic import BaseModel, ConfigDict, Field, model_validator

from blackboard.domain.errors import RuleViolation

SMOOTHING = 0.2  # the weight of the last call in what a call of the key is expected to cost


class RateLimit(BaseModel):
    """At most `requests_per_minute` calls and `tokens_per_minute` tokens a minute under `key` (None: that
    limit is not set; one of them is)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str = Field(min_length=1, max_length=200)
    requests_per_minute: int | None = Field(default=None, ge=1)
    tokens_per_minute: int | None = Field(default=None, ge=1)

    @model_validator(mode="after")
    def _one_limit(self) -> RateLimit:
        if self.requests_per_minute is None and self.tokens_per_minute is None:
            raise ValueError("give requests_per_minute or tokens_per_minute (or both)")
        return self


@dataclass(frozen=True, slots=True)
class RateSaid:
    """What a model API said of its rate limits in one answer: a 429's wait (seconds), and its headers'
    remaining requests and tokens (None: not said)."""

    retry_after: float | None = None
    remaining_requests: int | None = None
    remaining_tokens: int | None = None

    @property
    def says_anything(self) -> bool:
        return not (
            self.retry_after is None and self.remaining_requests is None and self.remaining_tokens is None
        )


@dataclass(frozen=True, slots=True)
class RateWindow:
    """A key's window as last changed (`at`): the requests and tokens left (tokens below 0: calls cost more
    than was taken for them, a debt the refill pays first), what a call is expected to cost in tokens, and
    until when an API's retry-after closes it; and the limit it was last changed under (the read side judges
    by it, without the agent files)."""

    key: str
    requests: float
    tokens: float
    at: datetime
    per_call: float = 0.0
    closed_until: datetime | None = None
    requests_per_minute: int | None = None
    tokens_per_minute: int | None = None

    @property
    def limit(self) -> RateLimit | None:
        """The limit the window was last changed under (None: none recorded)."""
        if self.requests_per_minute is None and self.tokens_per_minute is None:
            return None
        return RateLimit(
            key=self.key,
            requests_per_minute=self.requests_per_minute,
            tokens_per_minute=self.tokens_per_minute,
        )

    def holds(self, now: datetime) -> float:
        """Seconds until the window has room for a call, by the limit it was last changed under (0: room)."""
        limit = self.limit
        return 0.0 if limit is None else self.wait(limit, now)

    @staticmethod
    def full(limit: RateLimit, now: datetime) -> RateWindow:
        """A key's first window: a minute's worth of room, as an API's own starts."""
        return RateWindow(
            limit.key,
            float(limit.requests_per_minute or 0),
            float(limit.tokens_per_minute or 0),
            now,
            requests_per_minute=limit.requests_per_minute,
            tokens_per_minute=limit.tokens_per_minute,
        )

    def refilled(self, limit: RateLimit, now: datetime) -> RateWindow:
        """The window at `now`: the room that came back since it was last changed, up to a minute's worth."""
        seconds = max(0.0, (now - self.at).total_seconds())
        requests, tokens = self.requests, self.tokens
        if limit.requests_per_minute is not None:
            rpm = limit.requests_per_minute
            requests = min(float(rpm), requests + rpm * seconds / 60)
        if limit.tokens_per_minute is not None:
            tpm = limit.tokens_per_minute
            tokens = min(float(tpm), tokens + tpm * seconds / 60)
        return replace(
            self,
            requests=requests,
            tokens=tokens,
            at=max(now, self.at),
            requests_per_minute=limit.requests_per_minute,
            tokens_per_minute=limit.tokens_per_minute,
        )

    def expected(self, limit: RateLimit, calls: int = 1) -> float:
        """The tokens `calls` calls are expected to cost, never more than a minute's worth."""
        if limit.tokens_per_minute is None:
            return 0.0
        return min(float(limit.tokens_per_minute), self.per_call * calls)

    def wait(self, limit: RateLimit, now: datetime, calls: int = 1) -> float:
        """Seconds until the window (refilled to `now`) has room for `calls` more calls; 0: it has now."""
        window = self.refilled(limit, now)
        waits = [0.0]
        if window.closed_until is not None and window.closed_until > now:
            waits.append((window.closed_until - now).total_seconds())
        if limit.requests_per_minute is not None:
            short = calls - window.requests
            if short > 1e-9:
                waits.append(short * 60 / limit.requests_per_minute)
        if limit.tokens_per_minute is not None:
            needed = max(window.expected(limit, calls), 1.0)
            short = needed - window.tokens
            if short > 1e-9:
                waits.append(short * 60 / limit.tokens_per_minute)
        return max(waits)

    def taken(self, limit: RateLimit, now: datetime, calls: int = 1) -> RateWindow:
        """The window (refilled to `now`) after `calls` calls took their room."""
        window = self.refilled(limit, now)
        tokens = window.tokens - window.expected(limit, calls)
        return replace(window, requests=window.requests - calls, tokens=tokens)

    def settled(self, limit: RateLimit, now: datetime, took: float, cost: int) -> RateWindow:
        """A call that took `took` tokens cost `cost`: the difference is taken (or given back), and what a
        call is expected to cost moves toward it."""
        window = self.refilled(limit, now)
        per_call = cost if window.per_call <= 0 else window.per_call + SMOOTHING * (cost - window.per_call)
        tokens = window.tokens - (cost - took)
        if limit.tokens_per_minute is not None:  # at most a minute's debt, and a minute's worth
            minute = float(limit.tokens_per_minute)
            tokens = min(minute, max(-minute, tokens))
        return replace(window, tokens=tokens, per_call=per_call)

    def tightened(self, limit: RateLimit, now: datetime, said: RateSaid) -> RateWindow:
        """The window after an API said how much room it has left: never more than it says, closed until
        a 429's retry-after (for everyone)."""
        window = self.refilled(limit, now)
        requests, tokens, closed = window.requests, window.tokens, window.closed_until
        if said.remaining_requests is not None:
            requests = min(requests, float(said.remaining_requests))
        if said.remaining_tokens is not None:
            tokens = min(tokens, float(said.remaining_tokens))
        if said.retry_after is not None and said.retry_after > 0:
            until = now + timedelta(seconds=said.retry_after)
            closed = until if closed is None else max(closed, until)
            requests = min(requests, 0.0)
        return replace(window, requests=requests, tokens=tokens, closed_until=closed)


class RateLimited(RuleViolation):
    """The key's window has no room for the run's first call: the signal waits, POSTED, for `wait` seconds
    at most (a worker passes it over and tries again then)."""

    def __init__(self, signal_id: str, key: str, wait: float) -> None:
        super().__init__(f"{signal_id} {waiting_for_rate_limit(key)} (room again in {wait:.1f}s)")
        self.signal_id = signal_id
        self.key = key
        self.wait = wait


def waiting_for_rate_limit(key: str) -> str:
    """The words every interface uses for a signal a rate limit holds: `waiting: rate limit K`."""
    return f"waiting: rate limit {key}"
