"""The MCP SDK's own stdio client, driving a real `blackboard mcp` process (docs/mcp.md).

`served` starts the server the way an MCP client registers it (a command and its arguments) and
yields a `Served`: its session, and helpers that call a tool and check what came back. Whatever the
server wrote on stderr is kept, and no traceback may be in it.
"""

from __future__ import annotations

import json
import re
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.cli_server import blackboard_command
from tests.e2e.conftest import Cli
from tests.paths import CONTRACTS

CALL_TIMEOUT = 60.0  # seconds a tool call may take before the test fails (never reached when things work)


def contract_tools(page: Path | None = None) -> dict[str, set[str]]:
    """Each tool of the contract's table (tests/fixtures/contract/mcp.md), or of `page` (docs/mcp.md), and the
    arguments it names."""
    text = (page or CONTRACTS / "mcp.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(blackboard_\w+)` \| ([^|]*) \|", text, re.MULTILINE)
    return {tool: set(re.findall(r"`(\w+)`", arguments)) - {"subscribe", "poll"} for tool, arguments in rows}


@dataclass
class Served:
    session: ClientSession
    stderr: Any
    progress: list[tuple[float, float | None, str | None]] = field(default_factory=list)

    async def call(self, tool: str, progress: bool = False, **arguments: Any) -> Any:
        """Call a tool; its result must not be an error. The JSON document it returned."""
        result = await self.raw(tool, progress, **arguments)
        assert not result.is_error, f"{tool}({arguments}) failed: {result.content[0].text}"
        return json.loads(result.content[0].text)

    async def refused(self, tool: str, **arguments: Any) -> tuple[str, dict[str, Any]]:
        """Call a tool; it must be a tool error. Its text and its structured content."""
        result = await self.raw(tool, False, **arguments)
        assert result.is_error, f"{tool}({arguments}) was not refused: {result.content[0].text}"
        return result.content[0].text, result.structured_content

    async def raw(self, tool: str, progress: bool = False, **arguments: Any) -> Any:
        async def heard(done: float, total: float | None, message: str | None) -> None:
            self.progress.append((done, total, message))

        return await self.session.call_tool(
            tool, arguments, read_timeout_seconds=CALL_TIMEOUT, progress_callback=heard if progress else None
        )

    def errors(self) -> str:
        self.stderr.seek(0)
        return self.stderr.read()


@asynccontextmanager
async def served(
    cli: Cli, *args: str, env: dict[str, str] | None = None, read_timeout: float | None = None
) -> AsyncIterator[Served]:
    """`blackboard --db URL --agents-dir DIR mcp ARGS`, started by the SDK's stdio client, initialised;
    `env`: variables it gets besides the SDK's safe default ones; `read_timeout`: seconds `initialize` and
    the other requests but tool calls may take (None: no limit). The command is the CLI fork server's shim
    (`blackboard_command`): the server process starts warm, its pipes, signals and exit still its own."""
    command = StdioServerParameters(
        command=blackboard_command(),
        args=["--db", cli.db_url, "--agents-dir", str(cli.agents_dir), "mcp", *args],
        cwd=str(cli.cwd),
        env=env,
    )
    with tempfile.TemporaryFile("w+", encoding="utf-8") as stderr:
        async with (
            stdio_client(command, errlog=stderr) as (read, write),
            ClientSession(read, write, read_timeout_seconds=read_timeout) as session,
        ):
            await session.initialize()
            server = Served(session, stderr)
            yield server
        assert "Traceback" not in server.errors(), server.errors()
