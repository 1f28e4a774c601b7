"""The grammar of `blackboard next`: what should happen next on a board (application/ranking.py)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any


def add_next_command(commands: Any, _command: Callable[..., argparse.ArgumentParser]) -> None:
    nxt = _command(
        commands,
        "next",
        "rank what should happen next: each open signal with the runnable agent "
        "that fits it best, and why, in the order workers claim them",
        "blackboard next --blackboard ps-42 --limit 5",
        "next_moves",
    )
    nxt.add_argument("--blackboard", metavar="ID", help="only this board's signals")
    nxt.add_argument("--limit", type=int, metavar="N", help="at most N proposals")
