"""The grammar of status, schema and completion, added to the parser's commands."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

SHELLS = ("bash", "zsh", "fish")
SCHEMAS = ("signal", "entry")


def add_habit_commands(commands: Any, _command: Callable[..., argparse.ArgumentParser]) -> None:
    status = _command(
        commands,
        "status",
        "the overview: each board's signals by status, its oldest waiting signal, "
        "open conflicts and live workers",
        "blackboard status --blackboard ps-42 --watch",
        "status",
    )
    status.add_argument("--blackboard", metavar="ID", help="only this board (exit 4 if the store holds none)")
    status.add_argument(
        "--watch",
        action="store_true",
        help="keep it on screen, redrawn as the log moves, until Ctrl-C (with --json: a line per change)",
    )
    status.add_argument(
        "--interval",
        type=float,
        metavar="SECONDS",
        help="with --watch: redraw at least this often, to age the waiting times (default 2)",
    )

    schema = _command(
        commands,
        "schema",
        "print the JSON schema of the documents --json prints for a signal or an entry",
        "blackboard schema signal",
        "schema",
    )
    schema.add_argument("document", choices=SCHEMAS, metavar="DOCUMENT", help="signal or entry")

    completion = _command(
        commands,
        "completion",
        "print the shell completion script for bash, zsh or fish",
        'eval "$(blackboard completion bash)"',
        "completion",
    )
    completion.add_argument("shell", choices=SHELLS, metavar="SHELL", help=", ".join(SHELLS))
