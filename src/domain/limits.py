"""Limits on claiming (docs/control.md, "Limits"): concurrency keys and board budgets, as pure rules.

A concurrency key (`concurrency: {key: K, max: N}` in agent files) lets at most N signals be claimed at
once under K, across every worker of every agent naming K, on every board. A board's budget (`blackboard
budget BOARD --usd X --tokens N`) stops its signals from being claimed once the usage its runners recorded
reaches it, and a claim whose run would take what was spent and reserved past it waits (its reservation:
domain/reservations.py). The claim consults them inside its transaction: the unit of work counts what is
claimed under the key (holding the key) and reads the board's budget, what was spent and what its open
claims reserved, each claim counting only until its claim timeout lapses; these functions decide.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from blackboard.domain.errors import InvalidInput, RuleViolation
from blackboard.domain.rates import RateLimit, RateLimited, RateWindow
from blackboard.domain.reservations import USD_SLACK, Reservation, Spending, words


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

    def __add__(self, other: Spent) -> Spent:
        return Spent(self.usd + other.usd, self.tokens + other.tokens)

    @staticmethod
    def reserved_by(reservation: Reservation | None) -> Spent:
        """What a claim's reservation holds, counted as if spent."""
        if reservation is None:
            return Spent()
        return Spent(reservation.usd or 0.0, reservation.tokens or 0)


@dataclass(frozen=True, slots=True)
class Budget:
    """A board's budget: each limit None when not set."""

    usd: float | None = None
    tokens: int | None = None

    @property
    def is_set(self) -> bool:
        return self.usd is not None or self.tokens is not None

    def exceeded_by(self, committed: Spent) -> bool:
        """Whether what was spent and reserved together goes past a limit (a claim that reserved may not
        commit then: another claim took the room meanwhile)."""
        return (self.usd is not None and committed.usd > self.usd + USD_SLACK) or (
            self.tokens is not None and committed.tokens > self.tokens
        )

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
    it, what was spent and what the board's open claims reserved (when it has a budget), and how many
    signals are claimed under the claimer's key now (0 without a key); claims whose claim timeout lapsed
    count in neither."""

    budget: Budget = Budget()
    reached: bool = False
    held: int = 0
    spent: Spent = Spent()
    reserved: Spent = Spent()


class ConcurrencyLimitReached(RuleViolation):
    def __init__(self, signal_id: str, limit: ConcurrencyLimit) -> None:
        super().__init__(
            f"{signal_id} waits: {limit.max} signal(s) already claimed under concurrency key {limit.key} "
            f"(max {limit.max})"
        )
        self.signal_id = signal_id
        self.limit = limit


class BudgetReached(RuleViolation):
    """The board's budget stops this claim: the signal waits, POSTED (a worker passes its board over)."""

    def __init__(self, signal_id: str, blackboard_id: str, reason: str, message: str | None = None) -> None:
        super().__init__(
            message
            or f"{signal_id} waits: blackboard {blackboard_id} {reason}; raise it with blackboard budget"
        )
        self.signal_id = signal_id
        self.reason = reason


class BudgetReserved(BudgetReached):
    """The claim's reservation does not fit in what the board's runs spent and its open claims reserved."""

    def __init__(self, signal_id: str, blackboard_id: str, reason: str) -> None:
        super().__init__(
            signal_id,
            blackboard_id,
            reason,
            f"{signal_id} {reason}; it is claimed once runs end and leave room, or raise the budget with "
            f"blackboard budget {blackboard_id}",
        )


class UnpricedModel(BudgetReached):
    """A USD budget, and a model its runner cannot price: the run could not keep to the budget."""

    def __init__(self, signal_id: str, blackboard_id: str, agent_id: str, model: str) -> None:
        reason = (
            f"waits: blackboard {blackboard_id} has a USD budget, and agent {agent_id}'s runner has no price "
            f"for its model {model}, so its runs could not keep to it"
        )
        super().__init__(
            signal_id,
            blackboard_id,
            reason,
            f"{signal_id} {reason}; configure its price (US dollars per million tokens, input and "
            f"output): BLACKBOARD_PRICES='{{\"{model}\": [3, 15]}}'",
        )
        self.model = model


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
    the number of signals claimed under it (on every board), why the board's budget stops claims, and
    (a claimer whose runs record usage: `spending`) what the board's runs spent and its open claims
    reserved, against which each claim reserves what its run may spend."""

    concurrency: ConcurrencyLimit | None = None
    held: int = 0
    over_budget: str | None = None  # Budget.reached
    agent_id: str = ""
    spending: Spending | None = None  # None: the claimer's runs record no usage, and reserve nothing
    budget: Budget = Budget()
    committed: Spent = Spent()  # spent, and reserved by the board's open claims
    rate_limit: RateLimit | None = None  # the claimer's rate limit, its window as read (held) at `now`
    window: RateWindow | None = None
    now: datetime | None = None

    @property
    def key(self) -> str | None:
        return None if self.concurrency is None else self.concurrency.key

    def check(self, signal_id: str, blackboard_id: str, taken: int) -> None:
        """Refuse claiming `signal_id` when the board's budget is reached, when the key has no room
        left, or when the rate limit's window has no room for one more run's first call, `taken` signals
        having been claimed by this command already."""
        if self.over_budget is not None:
            raise BudgetReached(signal_id, blackboard_id, self.over_budget)
        if self.concurrency is not None and self.held + taken >= self.concurrency.max:
            raise ConcurrencyLimitReached(signal_id, self.concurrency)
        if self.rate_limit is not None and self.window is not None and self.now is not None:
            wait = self.window.wait(self.rate_limit, self.now, taken + 1)
            if wait > 0:
                raise RateLimited(signal_id, self.rate_limit.key, wait)

    def window_after(self, taken: int) -> RateWindow | None:
        """The rate limit's window once `taken` claims took their first call's room (None: no rate limit,
        or nothing taken: the window is left as it is)."""
        if self.rate_limit is None or self.window is None or self.now is None or taken == 0:
            return None
        return self.window.taken(self.rate_limit, self.now, taken)

    def reserve(
        self, signal_id: str, blackboard_id: str, signal_budget_usd: float | None, taken: Spent = Spent()
    ) -> Reservation | None:
        """What a claim of the signal reserves of the board's budget (None: nothing), `taken` having been
        reserved by this command already; BudgetReserved when it does not fit, UnpricedModel on a USD
        budget the run could not keep to."""
        spending = self.spending
        if spending is None:
            return None
        budget, committed = self.budget, self.committed + taken
        if budget.usd is not None and spending.unpriced_model is not None:
            raise UnpricedModel(signal_id, blackboard_id, self.agent_id, spending.unpriced_model)
        usd, tokens, source = spending.bounds(self.agent_id, signal_budget_usd)
        limits = ((budget.usd, committed.usd, usd, True), (budget.tokens, committed.tokens, tokens, False))
        reserved: list[float | int | None] = []
        for limit, used, bound, in_usd in limits:
            if limit is None:  # a limit the board does not have: nothing held against it
                reserved.append(None)
                continue
            left = limit - used
            if bound is None:  # no bound against this limit: it reserves all that is left, and runs alone
                if left <= (USD_SLACK if in_usd else 0):
                    why = _reason(blackboard_id, limit, used, in_usd)
                    raise BudgetReserved(
                        signal_id, blackboard_id, f"{why}, and {source}: a run reserves what is left"
                    )
                reserved.append(left if in_usd else int(left))
            elif bound > left + (USD_SLACK if in_usd else 0):
                why = _reason(blackboard_id, limit, used, in_usd)
                raise BudgetReserved(
                    signal_id, blackboard_id, f"{why}, this run reserves {words(bound, in_usd)} ({source})"
                )
            else:
                reserved.append(bound)
        if reserved == [None, None]:
            return None
        return Reservation(usd=reserved[0], tokens=reserved[1])  # type: ignore[arg-type]


def _reason(blackboard_id: str, limit: float | int, used: float | int, in_usd: bool) -> str:
    """`waits for budget: 150,010 of 250,000 tokens spent or reserved on ps-1`"""
    if in_usd:
        return f"waits for budget: {words(used, True)} of {words(limit, True)} spent or reserved on {blackboard_id}"
    return f"waits for budget: {used:,} of {words(limit, False)} spent or reserved on {blackboard_id}"
