"""`blackboard mcp`: starts the MCP server (infrastructure/mcp) on the CLI's container."""

from __future__ import annotations

import argparse

from blackboard.infrastructure.container import Container
from blackboard.infrastructure.injection import Provide, inject


@inject
def mcp(args: argparse.Namespace, container: Container = Provide[Container]) -> None:
    """Serves until the client closes the server's standard input; prints nothing else on stdout."""
    from blackboard.infrastructure.mcp.server import serve  # the SDK is imported by this command only

    serve(container, args.agent, args.blackboard)
