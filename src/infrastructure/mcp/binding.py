"""The MCP server's tools in this process, bound to one claim: what the model API runners offer a model.

The same Tool definitions, argument models and functions as `blackboard mcp --signal` serves, on a
Session bound to the claim (Session.bind): one set of tools, two ways to reach them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from blackboard.application.runners import BoardTools, ToolAnswer, ToolsFactory, ToolSpec
from blackboard.domain.errors import BlackboardError
from blackboard.infrastructure.documents import jsonable
from blackboard.infrastructure.mcp.schemas import invalid
from blackboard.infrastructure.mcp.session import Session
from blackboard.infrastructure.mcp.tools import PERSON_ACTS, Tool, every_tool, not_offered

if TYPE_CHECKING:
    from blackboard.infrastructure.composition.container import Container


class RunEnded(Exception):
    """Raised in a waiting call once its run has ended: the wait stops instead of running to its timeout."""


class BoundTools(BoardTools):
    def __init__(self, session: Session) -> None:
        self._session = session
        self._tools: dict[str, Tool] = every_tool(with_agent=True, bound=True)

    def specs(self) -> list[ToolSpec]:
        return [ToolSpec(t.name, t.description, t.input_schema) for t in self._tools.values()]

    def call(self, name: str, arguments: Mapping[str, Any]) -> ToolAnswer:
        tool = self._tools.get(name)
        if tool is None and name in PERSON_ACTS:  # a person's tool: refused by the table, as the server does
            return ToolAnswer(message(not_offered(self._session.caller, name)), True)
        if tool is None:
            return ToolAnswer(f"name: no tool {name}; the tools are {', '.join(self._tools)}", True)
        try:
            data = tool.call(self._session, dict(arguments), self._progress)
        except Exception as exc:  # noqa: BLE001 - every failure is the model's tool error, never the run's end
            return ToolAnswer(message(exc), True)
        return ToolAnswer(json.dumps(jsonable(data), ensure_ascii=False))

    def close(self) -> None:
        self._session.close()

    def _progress(self, done: float, total: float | None, said: str) -> None:
        if self._session.closed:
            raise RunEnded(said)


def message(exc: Exception) -> str:
    """A tool error's text as the MCP server says it: the CLI's message, or `unexpected error: ...`."""
    error = invalid(exc) if isinstance(exc, ValidationError) else exc
    if isinstance(error, BlackboardError):
        return str(error)
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return f"unexpected error: {lines[0] if lines else type(error).__name__}"


def tools_factory(container: Container) -> ToolsFactory:
    """Bound tools for a claim, on the container's use cases (built once, shared by every run)."""

    def bound(agent: str, board: str, signal_id: str, token: str) -> BoardTools:
        session = Session(container, agent, board)
        session.bind(signal_id, token)
        return BoundTools(session)

    return bound
