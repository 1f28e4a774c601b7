"""The grammar of `blackboard budget`, added to the parser's commands."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from typing import Any


def usd(raw: str) -> float:
    """An argparse type: a finite number of US dollars, 0 or more (else a usage error, exit 2, naming --usd)."""
    try:
        value = float(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number of US dollars, got {raw[:40]!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"must be a finite number of US dollars, 0 or more, got {raw[:40]}")
    return value


def tokens(raw: str) -> int:
    """An argparse type: a whole number of tokens, 0 or more, that fits in 64 bits."""
    try:
        value = int(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number of tokens, got {raw[:40]!r}") from None
    if not 0 <= value < 2**63:
        raise argparse.ArgumentTypeError(f"must be a whole number of tokens, 0 or more, got {raw[:40]}")
    return value


def add_budget_command(commands: Any, _command: Callable[..., argparse.ArgumentParser]) -> None:
    budget = _command(
        commands,
        "budget",
        "set a board's budget in US dollars or tokens (its signals wait once runners have spent it), "
        "or show it and what was spent",
        'blackboard budget ps-1 --usd 5 --reason "a day of research"',
        "budget",
    )
    budget.add_argument("board", metavar="BOARD")
    budget.add_argument(
        "--usd", type=usd, metavar="X", help="the most its runners' runs may cost, in US dollars"
    )
    budget.add_argument(
        "--tokens", type=tokens, metavar="N", help="the most tokens (input and output) they may use"
    )
    budget.add_argument("--by", metavar="NAME", default="ps-skill", help="who sets it (default ps-skill)")
    budget.add_argument("--reason", help="why, kept in its event")
