"""The runner port: an agent file with no handler, run by a coding agent or a model API (docs/agents.md).

A worker claims a signal as always; for an agent with no `command` and no `entrypoint` it hands the
work to a Runner with a RunRequest (the agent as its file says, the prompt, the limits, the claim) and
turns the RunOutcome into the signal's completion or failure, its usage recorded with it. A later attempt
at the same signal is told of the earlier ones' runs (`EarlierRun`), so a runner may continue the latest one
it can reach rather than start afresh (docs/agents.md, "Resume instead of restart").
"""

from __future__ import annotations

import abc
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from blackboard.application.rates import RateGate
from blackboard.domain.signals import SignalUsage


@dataclass(frozen=True, slots=True)
class AgentBrief:
    """The agent as its file says, for a runner: the body is the system prompt; `settings` are the
    file's other keys as written (Claude Code's `permissionMode`, `disallowedTools` ...)."""

    name: str
    description: str
    instructions: str
    tools: tuple[str, ...] = ()
    model: str | None = None  # as written: an alias, a model id, `inherit`, or none
    settings: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RunLimits:
    """What bounds one run: seconds, turns, US dollars (None: no bound of that kind)."""

    timeout: float
    max_turns: int | None = None
    max_budget_usd: float | None = None
    stall_timeout: float | None = None  # seconds with no progress before the run is stopped (None: never)


@dataclass(frozen=True, slots=True)
class Permissions:
    """A headless run asks nobody: the file's tools and the board's are allowed, everything else refused,
    unless these widen it (a worker's `--permission-mode`, `--allow-tool`)."""

    mode: str | None = None
    allowed_tools: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One board tool as a model sees it: its name, what it does, its JSON schema."""

    name: str
    description: str
    input_schema: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ToolAnswer:
    """A tool call's result as the model reads it: JSON text, or an error's message."""

    text: str
    is_error: bool = False


class BoardTools(abc.ABC):
    """The board's tools (the MCP server's) bound to one claim: the claimer's agent, the claimed signal and
    its token. They write within the signal's key permissions, may post follow-up signals, and offer no
    way to complete or fail a signal. Once `close`d, or once the claim is over, every call is refused."""

    @abc.abstractmethod
    def specs(self) -> list[ToolSpec]: ...

    @abc.abstractmethod
    def call(self, name: str, arguments: Mapping[str, Any]) -> ToolAnswer:
        """Run one call; never raises (a refusal is an answer with is_error)."""

    @abc.abstractmethod
    def close(self) -> None:
        """From now on every call is refused: the run is over, nothing it sends is recorded."""


RUN_SESSIONS = uuid.UUID("6f0c7a52-3a51-4e0b-9a57-1f5d2f0d8e21")  # the namespace of the runs' session ids


def session_of(signal_id: str, attempt: int) -> str:
    """The session id of the run of a signal's attempt: known before it starts (Claude Code is given it, its
    `--session-id`) and after its worker died with nothing recorded, so the next attempt knows what to resume."""
    return str(uuid.uuid5(RUN_SESSIONS, f"{signal_id}/{attempt}"))


@dataclass(frozen=True, slots=True)
class EarlierRun:
    """The run of an earlier attempt at the same signal, as a later attempt finds it: its session and its
    transcript (which may be on another host: then it is not there)."""

    attempt: int
    session_id: str
    transcript_path: str


@dataclass(frozen=True, slots=True)
class RunRequest:
    """One claimed signal for one run."""

    agent: AgentBrief
    signal_id: str
    blackboard_id: str
    prompt: str  # the user message: the signal, its upstreams' results, its keys, how to answer
    token: str  # the claim's token: it reaches the board session through the environment only
    limits: RunLimits
    workdir: str  # where the run works (the worker's --workdir)
    transcript_path: str  # where the run's transcript is kept
    model: str | None = None  # the worker's --model / BLACKBOARD_MODEL, for a file that names none
    permissions: Permissions = field(default_factory=Permissions)
    board_env: Mapping[str, str] = field(
        default_factory=dict
    )  # what a board session needs (the store's URL ...)
    tools: BoardTools | None = None  # in-process board tools, for the model API runners
    # each transcript line as it is written, for followers (`show --follow`: the worker keeps it); None: none
    output: Callable[[str], None] | None = None
    attempt: int = 1  # the signal's attempt this run is
    earlier: tuple[EarlierRun, ...] = ()  # the earlier attempts' runs, the latest first: what it may resume

    @property
    def session_id(self) -> str | None:
        """Its session's id (session_of); None for a run with no signal (solve's controller): never resumed."""
        return session_of(self.signal_id, self.attempt) if self.signal_id else None

    rate: RateGate | None = (
        None  # its agent's rate limit: each model call takes its room (application/rates.py)
    )


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """How a run ended: the final answer (which completes the signal), or why it failed; and what it cost."""

    succeeded: bool
    usage: SignalUsage
    answer: str = ""
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Nudge:
    """A person's word to the running agent (`blackboard nudge`), for its next turn."""

    by: str
    text: str

    @property
    def message(self) -> str:
        """The user message the run sends its model: the text, and who sent it while the agent worked."""
        return f"[a nudge from {self.by}, sent while you work] {self.text}"


class RunControl(abc.ABC):
    """What a running run asks of the worker: whether to stop (the reason: the timeout, no progress for its
    stall timeout, the worker's grace over, the claim lost), and a wait that ends early when it must.
    Checking also renews the claim's lease when it is due."""

    @abc.abstractmethod
    def stop_reason(self) -> str | None: ...

    @abc.abstractmethod
    def wait(self, seconds: float) -> str | None:
        """Wait up to `seconds`; the reason to stop, as soon as there is one (None: the time passed)."""

    def progressed(self) -> None:
        """The run showed progress: an output line, a streamed token or chunk, a tool call. A run that shows
        none for its `stall_timeout` is stopped as stalled (docs/control.md, "Stalls"). Cheap: call it on each."""

    def started(self, pid: int) -> None:
        """A runner that starts a process (in a session of its own) says so at once, with its pid: the worker
        has its keeper end that process's whole tree if the worker dies or the claim lapses first."""

    def nudges(self) -> list[Nudge]:
        """The nudges a person sent this run since it last asked, oldest first: each is handed over once,
        and the runner gives it to the model at its next turn (docs/agents.md, "Nudges")."""
        return []


class Runner(abc.ABC):
    """Runs an agent's work on one signal and says how it ended. `run` never raises: an error is a
    failed outcome naming it. A run stopped by `control` fails naming why, and stops everything it
    started (a process tree, the board session) before it returns."""

    name: str

    @abc.abstractmethod
    def missing(self) -> str | None:
        """What it lacks to start (and how to get it), or None."""

    def prepare(self) -> None:
        """Once, before the first run: what every run needs (an SDK imported), so no run waits for it."""

    @abc.abstractmethod
    def run(self, request: RunRequest, control: RunControl) -> RunOutcome: ...


ToolsFactory = Callable[[str, str, str, str], BoardTools]  # (agent, board, signal, token) -> bound tools
