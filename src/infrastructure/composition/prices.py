"""What models cost: a table of list prices, and prices configured without a release (`prices`,
BLACKBOARD_PRICES), US dollars per million tokens; and which model a model API runner calls.

The table is the providers' list prices as published when this was written (Anthropic's as Claude Code
2.1.332 carries them). The setting adds models to it or overrides them: `{"my-model": [input, output]}`
or `[input, output, cache_write, cache_read]`, JSON or YAML. It is read once with the other settings
(settings.py), and the process's composition root hands it here (`use`), so the worker, the claim's
decision (an agent's model priced or not, under a USD budget) and the runners (runners/usage.py) price a
model alike. Standard library only: every command loads the settings.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from blackboard.infrastructure.composition.mapping_text import mapping_of

RULE = (
    "a JSON object of model -> [input, output] (or [input, output, cache_write, cache_read]), in USD per "
    'million tokens, such as {"my-model": [0.5, 1.5]} (or the same mapping in YAML)'
)


@dataclass(frozen=True, slots=True)
class Price:
    """US dollars per million tokens."""

    input: float
    output: float
    cache_write: float | None = None  # None: as input
    cache_read: float | None = None


@dataclass(frozen=True, slots=True)
class PriceTable:
    """The configured prices, in the order given: a setting's value (frozen, hashable)."""

    entries: tuple[tuple[str, Price], ...] = ()

    def prices(self) -> dict[str, Price]:
        return dict(self.entries)

    def __str__(self) -> str:
        """As the variable gives it (JSON): how a worker hands the setting to its runs."""
        return json.dumps(
            {
                model: [
                    p.input,
                    p.output,
                    *(
                        []
                        if p.cache_write is None and p.cache_read is None
                        else [
                            p.input if p.cache_write is None else p.cache_write,
                            p.input if p.cache_read is None else p.cache_read,
                        ]
                    ),
                ]
                for model, p in self.entries
            }
        )


def parse(raw: Any) -> PriceTable:
    """The setting's value from JSON or YAML text, or from a mapping given in code; ValueError otherwise."""
    if isinstance(raw, PriceTable):
        return raw
    given = mapping_of(raw)
    if given is None:
        return PriceTable()
    entries = []
    for model, numbers in given.items():
        if not isinstance(model, str) or not model or isinstance(numbers, str | bytes):
            raise ValueError(raw)
        try:
            values = [float(n) for n in numbers if not isinstance(n, bool)]
        except (TypeError, ValueError):
            raise ValueError(raw) from None
        if len(values) != len(numbers) or len(values) not in (2, 4):
            raise ValueError(raw)
        if any(not (0 <= v < float("inf")) for v in values):
            raise ValueError(raw)
        entries.append((model, Price(*values)))
    return PriceTable(tuple(entries))


# Claude Code's aliases, as 2.1.332 maps them for the Anthropic API: the current model of each family.
ANTHROPIC_ALIASES = {"opus": "claude-opus-5-5", "sonnet": "claude-sonnet-5-5", "haiku": "claude-haiku-5-5"}
CLAUDE_CODE_ONLY = frozenset({"inherit", "sonnet", "opus", "haiku", "fable"})  # not a model id elsewhere


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
    """The model's price: the configured prices first (`configured`), then the table, by the longest
    matching prefix."""
    table = {**PRICES, **configured(env)}
    found = [prefix for prefix in table if model == prefix or model.startswith(prefix + "-")]
    return table[max(found, key=len)] if found else None


def resolved_model(runner: str, named: str | None, default: str | None) -> str | None:
    """The model a model API runner calls for an agent file naming `named`: the file's model unless it is
    `inherit` (or, for another API than Anthropic's, one of Claude Code's aliases), else `default` (the
    worker's --model / BLACKBOARD_MODEL); Claude Code's aliases as the anthropic runner maps them."""
    aliases = ANTHROPIC_ALIASES if runner == "anthropic" else {}
    chosen = named
    if chosen is None or chosen in CLAUDE_CODE_ONLY - set(aliases):
        chosen = default
    return None if chosen is None else aliases.get(chosen, chosen)


def unpriced_model(runner: str | None, named: str | None, default: str | None) -> str | None:
    """The model an agent's runner would call and could not price (None: it could, the model is not known
    before a run, or the runner reports the cost itself, as Claude Code does)."""
    if runner not in ("anthropic", "openai"):
        return None
    model = resolved_model(runner, named, default)
    return model if model is not None and price_of(model) is None else None


_used: PriceTable | None = None  # what this process's settings configured (`use`)


def use(table: PriceTable) -> None:
    """The prices this process's settings give, from now on (the composition root calls it)."""
    global _used
    _used = table


def configured(env: Mapping[str, str] | None = None) -> dict[str, Price]:
    """The configured prices: those `env` gives (BLACKBOARD_PRICES) when it is given, else those this
    process's settings gave (`use`), else the process environment's."""
    if env is None and _used is not None:
        return _used.prices()
    raw = (os.environ if env is None else env).get("BLACKBOARD_PRICES")
    if not raw:
        return {}
    try:
        return parse(raw).prices()
    except ValueError:
        from blackboard.domain.errors import InvalidInput

        raise InvalidInput("BLACKBOARD_PRICES", f"must be {RULE}, got {raw[:100]!r}") from None
