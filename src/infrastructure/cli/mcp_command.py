"""`blackboard mcp`: starts the MCP server (infrastructure/mcp) on the CLI's container, or, with
`--print-config`, prints what a client needs to start it (Claude Code's `.mcp.json`, Claude Desktop)."""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from dependency_injector.wiring import Provide, inject

from blackboard.domain.errors import InvalidInput
from blackboard.infrastructure.cli.signal_text import Output
from blackboard.infrastructure.composition.container import Container
from blackboard.infrastructure.composition.settings import BlackboardSettings, absolute_db


@inject
def mcp(args: argparse.Namespace, container: Container = Provide[Container]) -> Output | None:
    """Serves until the client closes the server's standard input; prints nothing else on stdout."""
    if args.confine and args.blackboard is None:
        raise InvalidInput("--confine", "goes with --blackboard ID: the one board the server reaches")
    if args.print_config:
        data = client_config(container.config(), args.agent, args.blackboard, args.confine)
        return Output(data, json.dumps(data, indent=2))
    claim = None
    if args.signal is not None:  # a runner's run: bound to its claim, the token from the environment only
        if args.agent is None:
            raise InvalidInput("--signal", "goes with --agent: the claimer whose claim the session works on")
        token = os.environ.get(CLAIM_TOKEN, "")
        if not token:
            raise InvalidInput(
                "--signal", f"needs the claim's token in the environment variable {CLAIM_TOKEN}"
            )
        claim = (args.signal, token)
    from blackboard.infrastructure.mcp.server import serve  # the SDK is imported by this command only

    serve(container, args.agent, args.blackboard, claim, args.confine)
    return None


CLAIM_TOKEN = "BLACKBOARD_CLAIM_TOKEN"  # never a command-line argument: other users can read those


def client_config(
    config: BlackboardSettings, agent: str | None, board: str | None, confine: bool = False
) -> dict[str, Any]:
    """The `mcpServers` entry that starts this server as these settings would: the installed command by
    its absolute path (a client starts it with its own PATH and working folder, where `blackboard` alone
    may not be found, and fails without a hint), the database as an absolute URL and the agents folders
    as absolute paths, then `mcp` with the `--agent`, `--blackboard` and `--confine` given."""
    from blackboard.infrastructure.agents.scan import folders_from

    args = ["--db", absolute_db(config.db)]
    for folder in folders_from(config.agents_dir):
        args += ["--agents-dir", os.path.abspath(folder)]
    args.append("mcp")
    if agent is not None:
        args += ["--agent", agent]
    if board is not None:
        args += ["--blackboard", board]
    if confine:
        args.append("--confine")
    return {"mcpServers": {"blackboard": {"command": installed_command(), "args": args}}}


def installed_command() -> str:
    """The absolute path of the `blackboard` command running now: the script this process was started
    as, else the one beside this Python (a virtualenv's bin), else the one on PATH."""
    started_as = Path(sys.argv[0])
    if started_as.stem == "blackboard" and started_as.is_file():
        return str(started_as.resolve())
    beside = Path(sys.executable).parent / ("blackboard.exe" if os.name == "nt" else "blackboard")
    if beside.is_file():
        return str(beside.absolute())
    if (on_path := shutil.which("blackboard")) is not None:
        return str(Path(on_path).resolve())
    raise InvalidInput(
        "--print-config",
        f"cannot find the installed `blackboard` command (not {started_as}, not beside {sys.executable}, "
        "not on PATH): install the package (pip install agent-blackboard) and run it from there",
    )
