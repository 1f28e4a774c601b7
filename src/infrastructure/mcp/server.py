"""`blackboard mcp`: the board's use cases as MCP tools, over stdio, on the official SDK's low-level server.

The low-level server, not MCPServer: the input schemas come from the command models (schemas.py),
not from function signatures, and a refusal is the CLI's message, not the SDK's. A waiting call runs
in a worker thread (tools.py), and every exception a call raises becomes a tool error: no call can
end the server. It answers at once: `initialize` and the tool list need no database, so the session
(the database opened and migrated, a claim bound) is built meanwhile (session.Opening), and a call waits
for it.
"""

from __future__ import annotations

import functools
import json
import threading
from typing import TYPE_CHECKING, Any

import anyio
import anyio.from_thread
import anyio.to_thread
from mcp import types
from mcp.server import Server, ServerRequestContext
from pydantic import ValidationError

from blackboard.domain.errors import AgentNotFound, BlackboardError, InvalidInput
from blackboard.infrastructure.documents import jsonable
from blackboard.infrastructure.errors.families import family_of
from blackboard.infrastructure.mcp.pipes import standard_pipes
from blackboard.infrastructure.mcp.schemas import invalid
from blackboard.infrastructure.mcp.session import Opening, Session
from blackboard.infrastructure.mcp.tools import PERSON_ACTS, Tool, every_tool, not_offered
from blackboard.infrastructure.mcp.transport import stdio_transport

if TYPE_CHECKING:
    from blackboard.infrastructure.composition.container import Container

CALLS_AT_ONCE = 8  # waits served at once, each in a worker thread


def serve(
    container: Container,
    agent: str | None,
    board: str | None,
    claim: tuple[str, str] | None = None,
    confine: bool = False,
) -> None:
    """Serve until the client closes standard input. An unknown agent stops it before it serves (that reads
    the agent files only). `claim`: (signal, token) a runner's run works on; the session is bound to it
    (Session.bind). `confine`: the server reaches `board` only (an agent's server with a board always does).
    The session is built while the server already answers: a client's start timeout never waits for a
    migration (a lock held by another process, a slow database)."""
    if agent is not None and container.agent_registry().get(agent) is None:
        raise AgentNotFound(agent)
    max_line = container.config().mcp_max_line

    def session() -> Session:
        opened = Session(container, agent, board, confine=confine)
        if claim is not None:
            opened.bind(*claim)
        return opened

    tools = every_tool(with_agent=agent is not None, bound=claim is not None)  # no database needed
    anyio.run(_serve, build_server(Opening(session), tools), max_line)


async def _serve(server: Server[Any], max_line: int) -> None:
    with standard_pipes(max_line) as (stdin, stdout):
        async with stdio_transport(stdin, stdout) as (read, write):
            await server.run(read, write, server.create_initialization_options())


def build_server(opening: Opening, tools: dict[str, Tool]) -> Server[Any]:
    listed = [
        types.Tool(name=t.name, description=t.description, input_schema=t.input_schema)
        for t in tools.values()
    ]
    limiter = anyio.CapacityLimiter(CALLS_AT_ONCE)

    async def list_tools(ctx: ServerRequestContext[Any], params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        tool = tools.get(params.name)
        if tool is None and params.name not in PERSON_ACTS:
            return refusal(InvalidInput("name", f"no tool {params.name}; the tools are {', '.join(tools)}"))
        try:  # built meanwhile: wait for it (abandoned with the call); a failure to build is this call's error
            session = opening.session or await anyio.to_thread.run_sync(opening.get, abandon_on_cancel=True)
        except Exception as exc:  # noqa: BLE001 - the next call builds it again
            return refusal(exc)
        if tool is None:  # a person's tool, not offered here: refused by the table, not unknown
            return refusal(not_offered(session.caller, params.name))
        gone = threading.Event()  # set when the call is cancelled, or the server stops, while it runs
        call = functools.partial(tool.call, session, dict(params.arguments or {}), _progress(ctx, gone))
        try:
            data = (
                await anyio.to_thread.run_sync(call, limiter=limiter, abandon_on_cancel=True)
                if tool.waits
                else call()
            )
            return result(data)
        except anyio.get_cancelled_exc_class():
            gone.set()  # a wait's thread stops at its next progress, within a second, not at its timeout
            raise
        except Exception as exc:  # noqa: BLE001 - every failure is the caller's tool error, never the server's end
            return refusal(exc)

    return Server(
        "blackboard",
        version=_version(),
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def result(data: Any) -> types.CallToolResult:
    """The JSON document the CLI prints with --json (documents/), as text; an object also as structured
    content."""
    data = jsonable(data)
    text = json.dumps(data, ensure_ascii=False)
    return types.CallToolResult(
        content=[types.TextContent(text=text)], structured_content=data if isinstance(data, dict) else None
    )


def refusal(exc: Exception) -> types.CallToolResult:
    """A tool error whose text is the CLI's message (without its `blackboard: ` prefix), naming the error's
    family and the exit code the same failure gives on the command line (errors/families.py)."""
    error = invalid(exc) if isinstance(exc, ValidationError) else exc
    family = family_of(error)
    message = str(error) if isinstance(error, BlackboardError) else f"unexpected error: {_first_line(error)}"
    content: list[Any] = [types.TextContent(text=message)]
    details: dict[str, Any] = {"error": message, "family": family.name, "exit_code": family.exit_code}
    if (document := getattr(error, "document", None)) is not None:  # a write kept as a candidate: the entry
        document = jsonable(document)
        content.append(types.TextContent(text=json.dumps(document, ensure_ascii=False)))
        details["entry"] = document
    return types.CallToolResult(content=content, structured_content=details, is_error=True)


class CallAbandoned(Exception):
    """Raised in a waiting call's thread once nobody waits for its answer."""


def _progress(ctx: ServerRequestContext[Any], gone: threading.Event) -> Any:
    """Progress for a call, sent from its worker thread; nothing when the client gave no progress token.
    Once the call is abandoned, it ends the call's thread instead."""

    def report(done: float, total: float | None, message: str) -> None:
        if gone.is_set():
            raise CallAbandoned(message)
        try:
            anyio.from_thread.run(ctx.session.report_progress, done, total, message)
        except Exception:  # noqa: BLE001 - a lost notification must not fail the call
            pass

    return report


def _first_line(exc: Exception) -> str:
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("agent-blackboard")
    except PackageNotFoundError:
        return "0"


INSTRUCTIONS = (
    "An event-sourced blackboard where agents coordinate: post signals (units of work), claim one, "
    "complete or fail it; share knowledge as entries keyed on a board, with provenance and conflicts. "
    "Results are the JSON documents of `blackboard --json`; a tool error's text is the CLI's message."
)
