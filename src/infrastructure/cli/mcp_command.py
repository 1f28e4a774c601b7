"""`blackboard mcp`: starts the MCP server (infrastructure/mcp) on the CLI's container."""

from __future__ import annotations

import argparse
import os

from blackboard.domain.errors import InvalidInput
from blackboard.infrastructure.container import Container
from blackboard.infrastructure.injection import Provide, inject


@inject
def mcp(args: argparse.Namespace, container: Container = Provide[Container]) -> None:
    """Serves until the client closes the server's standard input; prints nothing else on stdout."""
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

    serve(container, args.agent, args.blackboard, claim)


CLAIM_TOKEN = "BLACKBOARD_CLAIM_TOKEN"  # never a command-line argument: other users can read those
