"""The grammar of `blackboard mcp` (docs/mcp.md), added to the parser's commands."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any


def add_mcp_command(commands: Any, _command: Callable[..., argparse.ArgumentParser]) -> None:
    mcp = _command(
        commands,
        "mcp",
        "serve the board to an LLM client as Model Context Protocol tools, over stdio",
        "blackboard --db sqlite:///board.db mcp --agent ps-researcher --blackboard ps-42",
        "mcp",
    )
    mcp.add_argument(
        "--agent",
        metavar="NAME",
        help="act as this registry agent: the author of its writes, the "
        "claimer of its claims (without it: read, post and write as the author a call names; no claims)",
    )
    mcp.add_argument(
        "--blackboard",
        metavar="ID",
        help="the board of tools whose blackboard_id is left out; with --agent, the only board it reaches",
    )
    mcp.add_argument(
        "--confine",
        action="store_true",
        help="reach the --blackboard board only: a call naming another board (or one of its signals) is "
        "refused (an --agent server or one bound with --signal is confined to its board anyway)",
    )
    mcp.add_argument(
        "--print-config",
        action="store_true",
        help="print the client configuration that starts this server (the mcpServers JSON of Claude "
        "Code's .mcp.json or Claude Desktop), with this command's absolute path, the database as an "
        "absolute URL and the agents folders as absolute paths, then exit",
    )
    mcp.add_argument(
        "--signal",
        metavar="SIG",
        help="work on this claimed signal only, as a runner's run does (needs --agent, and the claim's token "
        "in BLACKBOARD_CLAIM_TOKEN): writes and reads under its key permissions, no claim, complete or fail, "
        "every call refused once the claim is over",
    )
