"""The grammar of `blackboard flow`: run a flow file's steps on a board, and show how a flow stands."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any


def add_flow_commands(commands: Any, _command: Callable[..., argparse.ArgumentParser]) -> None:
    flow = commands.add_parser("flow", help="flows: steps of work posted together (docs/flows.md)")
    actions = flow.add_subparsers(dest="flow_command", required=True, metavar="ACTION")
    run = _command(
        actions,
        "run",
        "post every step of a flow file on a board, in one transaction (all or none), each after the steps "
        "it names",
        "blackboard flow run flows/docbot.md --blackboard docs",
        "flow_run",
    )
    run.add_argument("file", metavar="FILE", help="the flow file (Markdown with front matter: name, steps)")
    run.add_argument("--blackboard", metavar="ID", required=True, help="the board its steps are posted on")
    run.add_argument("--flow-id", metavar="ID", help="the flow's id (default: its name and 8 hex digits)")
    run.add_argument("--posted-by", help="who posts (default ps-skill; inside an agent's run, that agent)")
    run.add_argument("--correlation-id", help="ties the events to the caller's own run")
    run.add_argument("-q", "--quiet", action="store_true", help="print only the flow's id")

    status = _command(
        actions,
        "status",
        "show a flow step by step: each step's status, its signal, and what it waits for",
        "blackboard flow status docbot-1a2b3c4d --blackboard docs",
        "flow_status",
    )
    status.add_argument("flow_id", metavar="FLOW")
    status.add_argument("--blackboard", metavar="ID", required=True, help="the flow's board")
    status.add_argument(
        "--wait",
        action="store_true",
        help="wait until no step is open, then show it: exit 0 when every step completed, 3 when it ended "
        "otherwise",
    )
    status.add_argument("--timeout", metavar="SECONDS", help="with --wait: give up after this long (exit 5)")
    status.add_argument(
        "--step",
        metavar="STEP",
        help="only this step's signal (its latest, once retried), as `show` prints it",
    )
    status.add_argument("-q", "--quiet", action="store_true", help="with --step: print only its signal's id")
