"""Limits on claiming (docs/control.md, "Limits"): concurrency keys and board budgets, as pure rules.

A concurrency key (`concurrency: {key: K, max: N}` in agent files) lets at most N signals be claimed at
once under K, across every worker of every agent naming K, on every board. A board's budget (`blackboard
budget BOARD --usd X --tokens N`) stops its signals from being claimed once the usage its runners recorded
reaches it. The claim consults both inside its transaction: the unit of work counts what is claimed under
the key (holding the key) and reads the board's budget and what was spent; these functions decide.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from blackboard.domain.errors import InvalidInput, RuleViolation


class ConcurrencyLimit(BaseModel):
    """At most `max` signals claimed at once under `key`, whoever claims them."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str = Field(min_length=1, max_length=200)
    max: int = Field(ge=1)


@dataclass(frozen=True, slots=True)
class Spent:
    """What the runners' runs recorded on a board cost: US dollars (of priced runs) and tokens."""

    usd: float = 0.0
    tokens: int = 0


@dataclass(frozen=True, slots=True)
class Budget:
    """A board's budget: each limit None when not set."""

    usd: float | None = None
    tokens: int | None = None

    @property
    def is_set(self) -> bool:
        return self.usd is not None or self.tokens is not None

    def reached(self, spent: Spent) -> str | None:
        """Why the board's signals are not claimed (None: they may be)."""
        if self.usd is not None and spent.usd >= self.usd:
            return f"budget reached: {spent.usd:.4f} of {self.usd:g} USD spent"
        if self.tokens is not None and spent.tokens >= self.tokens:
            return f"budget reached: {spent.tokens} of {self.tokens} tokens spent"
        return None


@dataclass(frozen=True, slots=True)
class Limits:
    """What a claim transaction read of its limits: the board's budget, whether what was spent reached
    it, and how many signals are claimed under the claimer's key now (0 without a key)."""

    budget: Budget = Budget()
    reached: bool = False
    held: int = 0


class ConcurrencyLimitReached(RuleViolation):
    def __init__(self, signal_id: str, limit: ConcurrencyLimit) -> None:
        super().__init__(
            f"{signal_id} waits: {limit.max} signal(s) already claimed under concurrency key {limit.key} "
            f"(max {limit.max})"
        )
        self.signal_id = signal_id
        self.limit = limit


class BudgetReached(RuleViolation):
    def __init__(self, signal_id: str, blackboard_id: str, reason: str) -> None:
        super().__init__(
            f"{signal_id} waits: blackboard {blackboard_id} {reason}; raise it with blackboard budget"
        )
        self.signal_id = signal_id
        self.reason = reason


def new_budget(current: Budget, usd: float | None, tokens: int | None, spent: Spent) -> Budget:
    """The budget after `blackboard budget --usd/--tokens` (a limit not given stays as it was). A limit
    must be a finite number, 0 or more, and not below what the board has already spent."""
    if usd is None and tokens is None:
        raise InvalidInput("usd", "give --usd or --tokens (or both)")
    if usd is not None:
        if isinstance(usd, bool) or not math.isfinite(usd) or usd < 0:
            raise InvalidInput("usd", f"must be a finite number of US dollars, 0 or more, got {usd}")
        if usd < spent.usd:
            raise InvalidInput(
                "usd",
                f"must not be below what the board has already spent ({spent.usd:.4f} USD), got {usd:g}",
            )
    if tokens is not None:
        if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
            raise InvalidInput("tokens", f"must be a whole number of tokens, 0 or more, got {tokens}")
        if tokens < spent.tokens:
            raise InvalidInput(
                "tokens",
                f"must not be below what the board has already spent ({spent.tokens} tokens), got {tokens}",
            )
    return Budget(
        usd=current.usd if usd is None else float(usd), tokens=current.tokens if tokens is None else tokens
    )


@dataclass(frozen=True, slots=True)
class ClaimLimits:
    """What limits one claim command, read inside its transaction: the claimer's concurrency key with
    the number of signals claimed under it (on every board), and why the board's budget stops claims."""

    concurrency: ConcurrencyLimit | None = None
    held: int = 0
    over_budget: str | None = None  # Budget.reached

    @property
    def key(self) -> str | None:
        return None if self.concurrency is None else self.concurrency.key

    def check(self, signal_id: str, blackboard_id: str, taken: int) -> None:
        """Refuse claiming `signal_id` when the board's budget is reached, or when the key has no room
        left, `taken` signals having been claimed by this command already."""
        if self.over_budget is not None:
            raise BudgetReached(signal_id, blackboard_id, self.over_budget)
        if self.concurrency is not None and self.held + taken >= self.concurrency.max:
            raise ConcurrencyLimitReached(signal_id, self.concurrency)
