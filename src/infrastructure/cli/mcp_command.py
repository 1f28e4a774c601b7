"""`blackboard mcp`: starts the MCP server (infrastructure/mcp) on the settings the CLI loaded."""

from __future__ import annotations

import argparse

from blackboard.infrastructure.container import Container
from blackboard.infrastructure.injection import Provide, inject
from blackboard.infrastructure.settings import BlackboardSettings


@inject
def mcp(args: argparse.Namespace, config: BlackboardSettings = Provide[Container.config]) -> None:
    """Serves until the client closes the server's standard input; prints nothing else on stdout."""
    from blackboard.infrastructure.mcp.server import serve  # the SDK is imported by this command only

    serve(Container(config=config), args.agent, args.blackboard)
