"""What a run costs: tokens counted as the API reports them, priced per model.

Claude Code reports a run's cost itself. For the model API runners the cost is priced here, from the
table of list prices and the configured ones (infrastructure/composition/prices.py, which also holds the model
aliases). A model found in neither has no price: its runs record `cost_usd: null`, a run with a budget
cannot start on it, and an agent calling it is not claimed on a board with a USD budget.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from blackboard.domain.signals import SignalUsage
from blackboard.infrastructure.composition.prices import (  # the table and the rules, kept with the configured prices
    ANTHROPIC_ALIASES,
    PRICES,
    Price,
    price_of,
    resolved_model,
    unpriced_model,
)

__all__ = ["ANTHROPIC_ALIASES", "PRICES", "Price", "Tally", "price_of", "resolved_model", "unpriced_model"]


@dataclass
class Tally:
    """A run's usage as it goes: tokens per turn added up, its cost priced as it grows."""

    runner: str
    model: str | None = None
    input_tokens: int = 0  # every input token: uncached, written to and read from the cache
    output_tokens: int = 0
    turns: int = 0
    reported_cost: float | None = None  # what the runner itself said the run cost (Claude Code)
    session_id: str | None = None
    resumed_from: str | None = None  # the earlier attempt's session the run continued
    # of reported_cost, what the earlier attempts spent: a resumed Claude Code session's total counts it
    resumed_cost: float = 0.0
    started: float = field(default_factory=time.monotonic)
    _priced: float = 0.0
    _price: Price | None = None

    def priced(self, env: Mapping[str, str] | None = None) -> bool:
        """Look the model's price up; False when it has none."""
        self._price = price_of(self.model, env) if self.model else None
        return self._price is not None

    def add(self, input_tokens: int, output_tokens: int, cache_write: int = 0, cache_read: int = 0) -> None:
        """One model answer: `input_tokens` uncached, the cache's writes and reads apart."""
        self.turns += 1
        self.input_tokens += input_tokens + cache_write + cache_read
        self.output_tokens += output_tokens
        if self._price is not None:
            p = self._price
            self._priced += (
                input_tokens * p.input
                + output_tokens * p.output
                + cache_write * (p.input if p.cache_write is None else p.cache_write)
                + cache_read * (p.input if p.cache_read is None else p.cache_read)
            ) / 1_000_000

    @property
    def cost_usd(self) -> float | None:
        if self.reported_cost is not None:
            return self.own_share(self.reported_cost)
        return round(self._priced, 8) if self._price is not None else None

    def own_share(self, reported: float) -> float:
        """Of a cost the runner reported for its session, this attempt's: what the earlier attempts spent
        taken off (a resumed session's total counts it again), so each attempt's cost is counted once."""
        return max(0.0, round(reported - self.resumed_cost, 8))

    def usage(self, transcript_path: str | None = None) -> SignalUsage:
        return SignalUsage(
            runner=self.runner,
            model=self.model,
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            cost_usd=self.cost_usd,
            turns=self.turns,
            duration_ms=int((time.monotonic() - self.started) * 1000),
            session_id=self.session_id,
            transcript_path=transcript_path,
            resumed_from=self.resumed_from,
        )
