"""The grammar of `blackboard webhooks`, added to the parser's commands."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any


def add_webhooks_command(commands: Any, _command: Callable[..., argparse.ArgumentParser]) -> None:
    webhooks = _command(
        commands,
        "webhooks",
        "list a board's webhook deliveries (gates announced to BLACKBOARD_WEBHOOKS), or deliver what is due now",
        "blackboard webhooks --blackboard ps-78",
        "webhooks",
    )
    webhooks.add_argument("--blackboard", metavar="ID", help="the board whose deliveries to list")
    webhooks.add_argument(
        "--deliver",
        action="store_true",
        help="first announce the gates owed it and send every delivery due (a round, as workers run them)",
    )
