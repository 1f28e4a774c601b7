"""What a run costs: tokens counted as the API reports them, priced per model, the model aliases.

Claude Code reports a run's cost itself. For the model API runners the cost is priced here from a table
of list prices (US dollars per million tokens, as the providers published them when this was written;
Anthropic's as Claude Code 2.1.332 carries them); `BLACKBOARD_PRICES` adds or overrides models:
`{"my-model": [input, output]}` or `[input, output, cache_write, cache_read]`. A model found in neither
has no price: its runs record `cost_usd: null`, and a run with a budget cannot start on it.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from blackboard.domain.errors import InvalidInput
from blackboard.domain.signals import SignalUsage

# Claude Code's aliases, as 2.1.332 maps them for the Anthropic API: the current model of each family.
ANTHROPIC_ALIASES = {"opus": "claude-opus-5-5", "sonnet": "claude-sonnet-5-5", "haiku": "claude-haiku-5-5"}


@dataclass(frozen=True, slots=True)
class Price:
    """US dollars per million tokens."""

    input: float
    output: float
    cache_write: float | None = None  # None: as input
    cache_read: float | None = None


_A = {  # Anthropic's pricing tiers
    "3/15": Price(3, 15, 3.75, 0.3),
    "2/10": Price(2, 10, 2.5, 0.2),
    "2/10c": Price(2, 10, 2.5, 0.1),
    "5/25": Price(5, 25, 6.25, 0.5),
    "4/20": Price(4, 20, 5, 0.2),
    "15/75": Price(15, 75, 18.75, 1.5),
    "10/50": Price(10, 50, 12.5, 1),
    "haiku35": Price(0.8, 4, 1, 0.08),
    "haiku45": Price(1, 5, 1.25, 0.1),
    "haiku55": Price(0.1, 0.5, 0.125, 0.01),
}
PRICES: dict[str, Price] = {  # by model id prefix: the longest prefix that matches wins
    "claude-3-5-haiku": _A["haiku35"],
    "claude-haiku-4-5": _A["haiku45"],
    "claude-haiku-5-5": _A["haiku55"],
    "claude-3-5-sonnet": _A["3/15"],
    "claude-3-7-sonnet": _A["3/15"],
    "claude-sonnet-4": _A["3/15"],
    "claude-sonnet-5": _A["2/10"],
    "claude-sonnet-5-5": _A["2/10c"],
    "claude-opus-4": _A["15/75"],
    "claude-opus-4-5": _A["5/25"],
    "claude-opus-4-6": _A["5/25"],
    "claude-opus-4-7": _A["5/25"],
    "claude-opus-4-8": _A["5/25"],
    "claude-opus-5": _A["5/25"],
    "claude-opus-5-5": _A["4/20"],
    "claude-fable-5": _A["10/50"],
    "gpt-4o": Price(2.5, 10, None, 1.25),
    "gpt-4o-mini": Price(0.15, 0.6, None, 0.075),
    "gpt-4.1": Price(2, 8, None, 0.5),
    "gpt-4.1-mini": Price(0.4, 1.6, None, 0.1),
    "gpt-4.1-nano": Price(0.1, 0.4, None, 0.025),
    "o3": Price(2, 8, None, 0.5),
    "o4-mini": Price(1.1, 4.4, None, 0.275),
    "gpt-5": Price(1.25, 10, None, 0.125),
    "gpt-5-mini": Price(0.25, 2, None, 0.025),
    "gpt-5-nano": Price(0.05, 0.4, None, 0.005),
}


def price_of(model: str, env: Mapping[str, str] | None = None) -> Price | None:
    """The model's price: BLACKBOARD_PRICES first, then the table, by the longest matching prefix."""
    table = {**PRICES, **_priced_here(env if env is not None else os.environ)}
    found = [prefix for prefix in table if model == prefix or model.startswith(prefix + "-")]
    return table[max(found, key=len)] if found else None


def _priced_here(env: Mapping[str, str]) -> dict[str, Price]:
    raw = env.get("BLACKBOARD_PRICES")
    if not raw:
        return {}
    rule = (
        "a JSON object of model -> [input, output] (or [input, output, cache_write, cache_read]), "
        "in USD per million tokens"
    )
    try:
        given = json.loads(raw)
        prices = {str(model): Price(*map(float, numbers)) for model, numbers in given.items()}
    except (ValueError, TypeError, AttributeError):
        raise InvalidInput("BLACKBOARD_PRICES", f"must be {rule}, got {raw[:100]!r}") from None
    return prices


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
            return self.reported_cost
        return round(self._priced, 8) if self._price is not None else None

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
        )
