"""Rate limits per model, configured (`rate_limits`, BLACKBOARD_RATE_LIMITS): the `rate_limit` of every agent
whose runner calls that model and whose file names none (docs/control.md, "Rate limits").

`{"claude-sonnet-5-5": {"key": "anthropic", "requests_per_minute": 50, "tokens_per_minute": 40000}}`, JSON or
YAML. The model is the one the run would call, as the claim's decision judges it for a price (the file's
`model`, Claude Code's aliases as the anthropic runner maps them, else the worker's --model or
BLACKBOARD_MODEL). Read once with the other settings; the composition root hands it to the agent registry.
Standard library only: every command loads the settings.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from blackboard.infrastructure.composition.mapping_text import mapping_of

RULE = (
    "a JSON object of model -> {key, requests_per_minute, tokens_per_minute} (a key, a name; either limit or "
    'both, whole numbers, 1 or more), such as {"claude-sonnet-5-5": {"key": "anthropic", '
    '"requests_per_minute": 50}} (or the same mapping in YAML)'
)
FIELDS = ("key", "requests_per_minute", "tokens_per_minute")


@dataclass(frozen=True, slots=True)
class ModelRateLimit:
    key: str
    requests_per_minute: int | None = None
    tokens_per_minute: int | None = None


@dataclass(frozen=True, slots=True)
class RateLimitTable:
    """The configured rate limits, by model, in the order given: a setting's value (frozen, hashable)."""

    entries: tuple[tuple[str, ModelRateLimit], ...] = ()

    def by_model(self) -> dict[str, ModelRateLimit]:
        return dict(self.entries)

    def __str__(self) -> str:
        """As the variable gives it (JSON)."""
        return json.dumps(
            {
                model: {name: value for name in FIELDS if (value := getattr(limit, name)) is not None}
                for model, limit in self.entries
            }
        )


def parse(raw: Any) -> RateLimitTable:
    """The setting's value from JSON or YAML text, or from a mapping given in code; ValueError otherwise."""
    if isinstance(raw, RateLimitTable):
        return raw
    given = mapping_of(raw)
    if given is None:
        return RateLimitTable()
    from pydantic import ValidationError

    from blackboard.infrastructure.agents.spec import RateLimitSpec  # an agent file's rule, the one rule

    entries = []
    for model, limit in given.items():
        if not isinstance(model, str) or not model:
            raise ValueError(raw)
        try:
            spec = RateLimitSpec.model_validate(limit)
        except ValidationError:
            raise ValueError(raw) from None
        entries.append((model, ModelRateLimit(spec.key, spec.requests_per_minute, spec.tokens_per_minute)))
    return RateLimitTable(tuple(entries))
