"""What one `blackboard mcp` server holds: the use cases, who it acts as, and its claims' tokens."""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from blackboard.domain.errors import AgentNotFound, InvalidInput, RuleViolation
from blackboard.infrastructure.mcp.schemas import invalid

if TYPE_CHECKING:
    from blackboard.infrastructure.container import Container

Progress = Callable[[float, float | None, str], None]  # done, total, message: sent when the client asked


class NeedsAgent(RuleViolation):
    """Claiming, completing and failing are an agent's acts: a server started without --agent refuses them."""

    def __init__(self, tool: str) -> None:
        super().__init__(f"{tool} acts as an agent: start the server with `blackboard mcp --agent NAME`")


class Session:
    """The use cases, built once before serving (so no two calls race to build them), the server's
    agent and default board, the tokens of the claims it made, and where each topic poll got to."""

    def __init__(self, container: Container, agent: str | None, board: str | None) -> None:
        self.registry = container.agent_registry()
        if agent is not None and self.registry.get(agent) is None:
            raise AgentNotFound(agent)
        self.service = container.service()
        self.queries = container.queries()
        self.knowledge = container.knowledge()
        self.knowledge_queries = container.knowledge_queries()
        self.watcher = container.watcher()
        self.store = container.event_store()
        self.agent = agent
        self.default_board = board
        self.positions: dict[tuple[str, str], int] = {}  # (board, topic) -> the log position polled up to
        self._tokens: dict[str, str] = {}
        self._lock = threading.Lock()

    def board(self, given: dict[str, Any], field: str = "blackboard_id") -> str:
        board = given.get(field) or self.default_board
        if board is None:
            raise InvalidInput(field, "is required: name the board, or start the server with --blackboard ID")
        return board

    def acting(self, tool: str) -> str:
        if self.agent is None:
            raise NeedsAgent(tool)
        return self.agent

    def new_token(self, signal_id: str) -> str:
        """A token for a claim about to be made; the claim needs it for its completion, failure, and
        its key permissions, so no other process naming the same agent can act on it."""
        with self._lock:
            return self._tokens.setdefault(signal_id, secrets.token_urlsafe(16))

    def token(self, signal_id: str | None) -> str | None:
        with self._lock:
            return self._tokens.get(signal_id) if signal_id else None

    def forget(self, signal_id: str) -> None:
        with self._lock:
            self._tokens.pop(signal_id, None)


def build(model: type[BaseModel], names: dict[str, str], **fields: Any) -> Any:
    """The command model from the arguments; a rule the model adds (one field against another) is
    refused naming the tool's arguments (`names`: field -> argument)."""
    try:
        return model(**fields)
    except ValidationError as error:
        raise invalid(error, names) from None
