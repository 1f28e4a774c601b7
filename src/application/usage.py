"""What runners' runs cost, totalled: per agent and per board, as `summary` and `status` show it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from blackboard.domain.signals import SignalUsage


@dataclass(frozen=True, slots=True)
class UsageTotal:
    """The sum of some runs. `cost_usd` adds up the runs whose cost is known; `unpriced_runs` says how
    many had none (a model the runner could not price), so a total never passes for more than it is."""

    runs: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    unpriced_runs: int = 0
    turns: int = 0
    duration_ms: int = 0

    @classmethod
    def of(cls, usage: SignalUsage) -> UsageTotal:
        return cls(
            1,
            usage.input_tokens,
            usage.output_tokens,
            usage.cost_usd or 0.0,
            int(usage.cost_usd is None),
            usage.turns,
            usage.duration_ms,
        )

    @property
    def known_cost_usd(self) -> float | None:
        """What the runs cost as far as it is known: None when there were runs and not one had a price (an
        unknown cost is no $0, which a dashboard reads as free), else the priced runs' sum."""
        return None if self.runs and self.unpriced_runs == self.runs else self.cost_usd

    def __add__(self, other: UsageTotal) -> UsageTotal:
        return UsageTotal(
            self.runs + other.runs,
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cost_usd + other.cost_usd,
            self.unpriced_runs + other.unpriced_runs,
            self.turns + other.turns,
            self.duration_ms + other.duration_ms,
        )


def total(parts: Iterable[UsageTotal]) -> UsageTotal:
    summed = UsageTotal()
    for part in parts:
        summed += part
    return summed
