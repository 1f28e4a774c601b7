"""The grammar of `blackboard ui`, added to the parser's commands."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any


def add_ui_command(commands: Any, _command: Callable[..., argparse.ArgumentParser]) -> None:
    ui = _command(
        commands,
        "ui",
        "serve a read-only web page of the boards, live from the event log, until Ctrl-C",
        "blackboard ui --port 8765   # then open http://127.0.0.1:8765/",
        "ui",
    )
    ui.add_argument("--port", type=int, default=8765, help="TCP port (default 8765)")
    ui.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to bind (default 127.0.0.1); one that is not loopback needs --token",
    )
    ui.add_argument(
        "--token",
        help="a secret every request must present (/?token=T, or the header "
        "X-Blackboard-Token); required off loopback (env BLACKBOARD_UI_TOKEN)",
    )
    ui.add_argument(
        "--allow-host",
        metavar="NAME",
        action="append",
        default=[],
        help="a name requests may carry in Host besides the loopback names and --host (repeatable): a host "
        "name, *.domain, an IP, or an origin (https://board.example.com, a proxy's) a decision may come from",
    )
    ui.add_argument("--board", metavar="ID", help="the board the page opens on (default: the first)")
