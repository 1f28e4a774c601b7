"""What one `blackboard mcp` server holds: the use cases, who it acts as, and its claims' tokens."""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from blackboard.application.callers import Caller, Kind
from blackboard.application.commands import GetSignalById
from blackboard.application.errors import NotPermitted
from blackboard.domain.errors import AgentNotFound, InvalidInput, RuleViolation
from blackboard.domain.signals import SignalStatus
from blackboard.infrastructure.interfaces.names import arguments, public
from blackboard.infrastructure.keeper.identity import process_caller
from blackboard.infrastructure.mcp.schemas import invalid

if TYPE_CHECKING:
    from blackboard.infrastructure.composition.container import Container

Progress = Callable[[float, float | None, str], None]  # done, total, message: sent when the client asked


def served_as(agent: str | None, board: str | None = None, confine: bool = False) -> Caller:
    """Who an unbound server is: the run it was started in, whatever it says (a run cannot serve as a person
    or as another agent); else the agent it was started as; else a person. Confined to `board` (it reaches
    no other: Caller.confined_to) when it serves an agent (`--agent` with `--blackboard`) or is told to
    (`--confine`); an agent's server without --blackboard reaches every board, as its agent."""
    process = process_caller()
    caller = process if process.kind is not Kind.PERSON or agent is None else Caller(Kind.AGENT, agent)
    if board is not None and (agent is not None or confine):
        caller = replace(caller, confined_to=board)
    return caller


class NeedsAgent(RuleViolation):
    """Claiming, completing and failing are an agent's acts: a server started without --agent refuses them."""

    def __init__(self, tool: str) -> None:
        super().__init__(f"{tool} acts as an agent: start the server with `blackboard mcp --agent NAME`")


class ClaimOver(RuleViolation):
    """A session bound to a claim refuses every call once the claim is over: nothing the run sends after
    its end is recorded."""

    def __init__(self, signal_id: str, why: str) -> None:
        super().__init__(
            f"this session was bound to the claim on {signal_id}, which is over ({why}): nothing more is recorded"
        )


class NotThisSignal(RuleViolation):
    def __init__(self, bound: str, named: str) -> None:
        super().__init__(f"this session works on {bound} only, not on {named}")


SIGNAL_SCOPED = frozenset({"blackboard_write", "blackboard_read"})  # calls that act under a signal's keys


class Session:
    """The use cases, built once before serving (so no two calls race to build them), the server's
    agent and default board, the tokens of the claims it made, and where each topic poll got to."""

    def __init__(
        self,
        container: Container,
        agent: str | None,
        board: str | None,
        caller: Caller | None = None,
        confine: bool = False,
    ) -> None:
        self.registry = container.agent_registry()
        if agent is not None and self.registry.get(agent) is None:
            raise AgentNotFound(agent)
        self.service = container.service()
        self.queries = container.queries()
        self.knowledge = container.knowledge()
        self.knowledge_queries = container.knowledge_queries()
        self.watcher = container.watcher()
        self.flows = container.flows()
        self.artifacts_dir = container.config().artifacts_dir  # where a completion's artifact may lead too
        self._acting(caller or served_as(agent, board, confine))
        self.agent = agent
        self.default_board = board
        self.positions: dict[tuple[str, str], int] = {}  # (board, topic) -> the log position polled up to
        self._tokens: dict[str, str] = {}
        self._lock = threading.Lock()
        self.bound: str | None = None  # the claimed signal a runner's session works on (`bind`)
        self.closed = False

    def bind(self, signal_id: str, token: str) -> None:
        """Work on this claim only (a runner's run, `blackboard mcp --signal`): writes and reads act under
        its key permissions with its token, the signal's board is the default board and the only one it
        reaches, and every call is refused once the claim is over. The tools offered leave out claim,
        complete and fail. The session is its run's (a caller of kind SESSION): application/callers.py
        decides what it may do."""
        try:
            signal = self.queries.get_signal(GetSignalById(signal_id=signal_id))
        except NotPermitted:  # the --blackboard given confines the server to another board
            raise InvalidInput(
                "--blackboard",
                f"the session works on {signal_id}, a signal of another board: name that or none",
            ) from None
        board = signal.blackboard_id
        if self.default_board not in (None, board):
            raise InvalidInput(
                "--blackboard",
                f"the session works on {signal_id}, a signal of board {board}: name that or none",
            )
        self.bound, self.default_board = signal_id, board
        self._acting(Caller(Kind.SESSION, self.agent, signal_id, token, board, confined_to=board))
        with self._lock:
            self._tokens[signal_id] = token

    def _acting(self, caller: Caller) -> None:
        """Who every call of this session is: the use cases it calls act for `caller` (the table's limits and
        its board, application/callers.py), whoever the process is."""
        self.caller = caller
        self.service = self.service.acting(caller)
        self.knowledge = self.knowledge.acting(caller)
        self.queries = self.queries.acting(caller)
        self.knowledge_queries = self.knowledge_queries.acting(caller)
        self.watcher = self.watcher.acting(caller)
        self.flows = self.flows.acting(caller)

    def close(self) -> None:
        self.closed = True

    def admit(self, tool: str, given: dict[str, Any]) -> dict[str, Any]:
        """A bound session's check before each call: the claim still held by its agent with its token, and
        a write or read under the bound signal (the default) and no other. Unbound: the arguments as given."""
        if self.bound is None:
            return given
        if self.closed:
            raise ClaimOver(self.bound, "the run has ended")
        signal = self.queries.get_signal(GetSignalById(signal_id=self.bound))
        if signal.status is not SignalStatus.CLAIMED:
            raise ClaimOver(self.bound, f"it is {signal.status}")
        if not signal.held_by_claim(self.agent, self.token(self.bound)):
            raise ClaimOver(self.bound, "it is held by another claim now")
        if tool in SIGNAL_SCOPED:
            named = given.get("signal_id") or self.bound
            if named != self.bound:
                raise NotThisSignal(self.bound, named)
            given = {**given, "signal_id": self.bound}
        return given

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
            return self._tokens.setdefault(signal_id, secrets.token_hex(16))

    def token(self, signal_id: str | None) -> str | None:
        with self._lock:
            return self._tokens.get(signal_id) if signal_id else None

    def forget(self, signal_id: str) -> None:
        with self._lock:
            self._tokens.pop(signal_id, None)


class Opening:
    """The server's session, built once, on a thread of its own from the start, while the server already
    answers (`initialize` and the tool list need no database): the database opened and migrated, the claim
    bound. A call waits for it (`get`); a build that failed (the database unreachable, its lock held past
    the busy timeout) is that call's error, and the next call builds again."""

    def __init__(self, build: Callable[[], Session]) -> None:
        self._build = build
        self._lock = threading.Lock()
        self.session: Session | None = None
        threading.Thread(target=self._first, name="mcp-session", daemon=True).start()

    def get(self) -> Session:
        with self._lock:
            if self.session is None:
                self.session = self._build()
            return self.session

    def _first(self) -> None:
        try:
            self.get()
        except Exception:  # noqa: BLE001 - the first call that needs it says why, and builds again
            pass


def build(model: type[BaseModel], names: dict[str, str], **given: Any) -> Any:
    """The command model from the arguments, each by its field's name or its public name (interfaces/names.py:
    `by` for `approved_by`); a rule the model adds (one field against another) is refused naming the tool's
    arguments (`names`, over the public names: field -> argument)."""
    fields = {public(f): f for f in model.model_fields if public(f) not in model.model_fields}
    try:
        return model(**{fields.get(name, name): value for name, value in given.items()})
    except ValidationError as error:
        raise invalid(error, {**arguments(), **names}) from None
