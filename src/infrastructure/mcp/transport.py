"""The stdio transport `blackboard mcp` serves on: the SDK's own (mcp.server.stdio) reads each line,
and a line it cannot take it hands the session as an exception, which the session drops, so the
client waits for an answer that never comes. Here every line gets one: a message too long
(`Oversized`, pipes.py), not JSON (or nested deeper than the parser goes, about 200 levels) or no
JSON-RPC message is answered with a JSON-RPC error, with the request's id when it can be found
(else null), and the server reads on."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp import types
from mcp.shared._context_streams import create_context_streams  # what the SDK's stdio server uses
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from blackboard.infrastructure.mcp.pipes import LineReader, Oversized, Writer

MAX_LINE_ENV = "BLACKBOARD_MCP_MAX_LINE"

# the id among the leading members of the top-level object whose values are plain scalars: where every
# client puts it ({"jsonrpc": "2.0", "id": 7, "method": ...}); anywhere else it is not looked for
_SCALAR = r'(?:"(?:[^"\\]|\\.){0,200}"|-?[0-9.eE+-]{1,40}|null|true|false)'
_LEADING_ID = re.compile(
    rb'\s*\{\s*(?:"(?:[^"\\]|\\.){1,40}"\s*:\s*' + _SCALAR.encode() + rb"\s*,\s*){0,8}"
    rb'"id"\s*:\s*(-?[0-9]{1,19}(?![0-9.eE])|"(?:[^"\\]|\\.){0,200}")'
)


@asynccontextmanager
async def stdio_transport(stdin: LineReader, stdout: Writer) -> AsyncIterator[tuple[Any, Any]]:
    """(read, write) streams for `Server.run`, as `mcp.server.stdio.stdio_server` gives, answering
    the lines it would drop."""
    read_writer, read_stream = create_context_streams[SessionMessage | Exception](0)
    write_stream, write_reader = create_context_streams[SessionMessage](0)

    async def reader() -> None:
        async with read_writer:
            async for line in stdin:
                message = refusal(line, stdin.max_line) if isinstance(line, Oversized) else None
                if message is None and isinstance(line, str):
                    if not line.strip():
                        continue  # a blank line is no message: nothing to answer
                    try:
                        parsed = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                    except ValidationError as exc:
                        message = invalid(line, exc)
                    else:
                        await read_writer.send(SessionMessage(parsed))
                        continue
                if message is not None:
                    await write_stream.send(SessionMessage(message))

    async def writer() -> None:
        async with write_reader:
            async for session_message in write_reader:
                text = session_message.message.model_dump_json(by_alias=True, exclude_unset=True)
                await stdout.write(text + "\n")
                await stdout.flush()

    async with anyio.create_task_group() as group:
        group.start_soon(reader)
        group.start_soon(writer)
        yield read_stream, write_stream


def refusal(line: Oversized, max_line: int) -> types.JSONRPCError:
    return _error(
        leading_id(line.head),
        types.INVALID_REQUEST,
        f"the message is {line.size} bytes, above the maximum of {max_line} bytes for one line "
        f"({MAX_LINE_ENV}); it was not read",
    )


def invalid(line: str, exc: ValidationError) -> types.JSONRPCError:
    first = exc.errors()[0]
    if first["type"] == "json_invalid":
        why = str(first["msg"])
        if "recursion limit" in why:
            why = "nested too deep (JSON-RPC messages are parsed to about 200 levels)"
        return _error(leading_id(line.encode()[:65536]), types.PARSE_ERROR, f"parse error: {why}")
    return _error(
        _any_id(line), types.INVALID_REQUEST, "invalid request: not a JSON-RPC 2.0 request or notification"
    )


def leading_id(head: bytes) -> int | str | None:
    found = _LEADING_ID.match(head)
    if found is None:
        return None
    try:
        value = json.loads(found[1])
    except ValueError:
        return None
    return value if isinstance(value, int | str) else None


def _any_id(line: str) -> int | str | None:
    try:
        document = json.loads(line)
    except (ValueError, RecursionError):
        return None
    found = document.get("id") if isinstance(document, dict) else None
    return found if isinstance(found, int | str) and not isinstance(found, bool) else None


def _error(request_id: int | str | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message))
