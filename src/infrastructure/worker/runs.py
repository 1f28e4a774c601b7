"""The worker's path for an agent a runner runs: the request, the run in a pool thread under a control that
keeps the timeout and the grace period and renews the claim, and its outcome with its usage to the recorder.
Each attempt's run has a transcript of its own (`transcript_of`), and the request names the earlier attempts'
runs, which a runner may continue (docs/agents.md, "Resume instead of restart")."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from blackboard.application.ports.rates import RateWindows
from blackboard.application.rates import RateGate
from blackboard.application.runners import (
    AgentBrief,
    EarlierRun,
    Nudge,
    Permissions,
    RunControl,
    RunLimits,
    RunOutcome,
    RunRequest,
    ToolsFactory,
    session_of,
)
from blackboard.domain.signals import AgentSignal, SignalUsage
from blackboard.infrastructure.agents.handler import CANCELLED, POLL
from blackboard.infrastructure.agents.lenient import OWNED
from blackboard.infrastructure.agents.outcome import HandlerOutcome, from_stdout
from blackboard.infrastructure.agents.parsing import AgentDefinition
from blackboard.infrastructure.runners import runner_for
from blackboard.infrastructure.runners.prompt import build_prompt
from blackboard.infrastructure.worker.handling import Handling, said
from blackboard.infrastructure.worker.options import RunOptions

logger = logging.getLogger("blackboard.worker")

RUN_TIMEOUT = 1800.0  # seconds, for an agent file run by a runner that names no timeout
# seconds a runner's run may show no progress (no output line, token or tool call) before it is stopped as
# stalled, for an agent file that names no `stall_timeout` (0 there: never; docs/control.md, "Stalls")
STALL_TIMEOUT = 300.0
CHECK_EVERY = 1.0  # seconds between looks at whether the claim still holds (ended by another hand: stop)
OURS = OWNED - {"name"}  # the agent file's keys the blackboard acts on: not handed to Claude Code


class WorkerControl(RunControl):
    """The timeout, the stall timeout (no `progressed` for that long: `stalled` says how long it was idle),
    the worker's grace period (`cancel` set: over), the claim's renewal every `renew_every` seconds (`renew`
    raising: the claim is lost, the run stops) and, every second, whether the claim still holds (`ended`:
    why not), so a signal ended by another hand stops its run at once."""

    def __init__(
        self,
        timeout: float,
        cancel: threading.Event,
        renew: Callable[[], None],
        renew_every: float,
        ended: Callable[[], str | None],
        stopped: Callable[[], str | None] = lambda: None,
        started: Callable[[int], None] = lambda pid: None,
        stall_timeout: float | None = None,
        nudges: Callable[[], list[Nudge]] = list,
    ) -> None:
        self._timeout, self._cancel, self._renew, self._every = timeout, cancel, renew, renew_every
        self._stall_timeout = stall_timeout or None  # 0: never stalls
        self._progressed = time.monotonic()  # set from the runner's threads: one float, no lock
        self.stalled: float | None = None  # seconds idle, once it stopped the run as stalled
        self._nudges = nudges  # the nudge inbox's for this claim (worker/nudges.py): no query
        self._started = started  # the keeper holds the run's process from then on
        self._stopped = stopped  # the stop watch's word (a cancel), asked at every look: no query
        self._ended = ended
        self._deadline = time.monotonic() + timeout
        self._next_renewal = time.monotonic() + renew_every
        self._next_check = time.monotonic() + CHECK_EVERY

    def stop_reason(self) -> str | None:
        now = time.monotonic()
        if self._cancel.is_set():
            return CANCELLED
        if (stopped := self._stopped()) is not None:
            return stopped
        if now >= self._deadline:
            return f"timed out after {self._timeout:g}s (the agent file's timeout)"
        idle = now - self._progressed
        if self.stalled is None and self._stall_timeout is not None and idle >= self._stall_timeout:
            self.stalled = round(idle, 3)  # said from now on as it was first: the run stops for it
        if self.stalled is not None:
            return stall_reason(self.stalled, self._stall_timeout)
        if now >= self._next_check:
            self._next_check = now + CHECK_EVERY
            if (ended := self._ended()) is not None:
                return ended
        if now >= self._next_renewal:
            self._next_renewal = now + self._every
            try:
                self._renew()
            except Exception as exc:  # noqa: BLE001 - the reason becomes the failure
                return f"stopped: {exc}"
        return None

    def progressed(self) -> None:
        self._progressed = time.monotonic()

    def started(self, pid: int) -> None:
        self._started(pid)

    def nudges(self) -> list[Nudge]:
        return self._nudges()

    def wait(self, seconds: float) -> str | None:
        until = time.monotonic() + seconds
        while (reason := self.stop_reason()) is None:
            left = until - time.monotonic()
            if left <= 0:
                return None
            self._cancel.wait(min(POLL, left))
        return reason


class Runs:
    """Runs claimed signals of agents with no handler (or every agent, with `worker --runner`)."""

    def __init__(
        self,
        handling: Handling,
        options: RunOptions,
        artifacts_dir: str,
        renew_every: float,
        cancel: threading.Event,
        board_tools: ToolsFactory | None,
        rate_windows: RateWindows | None = None,
        nudges: Callable[[str, str | None], list[Nudge]] = lambda signal_id, token: [],
    ) -> None:
        """`nudges`: the nudges waiting for the run of a claim (signal, token), each handed over once."""
        self._handling, self._options, self._artifacts_dir = handling, options, artifacts_dir
        self._renew_every, self._cancel = renew_every, cancel
        self._board_tools = board_tools
        self._rate_windows = rate_windows
        self._nudges = nudges
        self.workdir = Path(options.workdir or ".").resolve()

    def runner_of(self, agent: AgentDefinition) -> str | None:
        """The runner for this agent: --runner, else the file's (claude-code for a file with no handler)."""
        return self._options.runner or agent.runner_name

    def run(self, agent: AgentDefinition, claimed: AgentSignal) -> None:
        """In a pool thread: run the agent's runner on the signal, hand its outcome over. Never raises."""
        started, name = time.monotonic(), str(self.runner_of(agent))
        try:
            output = self._handling.output.run(claimed)
            request = self.request(agent, claimed, None if output is None else output.transcript)
            control = WorkerControl(
                request.limits.timeout,
                self._cancel,
                lambda: self._handling.renew(agent, claimed),
                self._renew_every,
                lambda: self._handling.claim_ended(agent, claimed),
                lambda: self._handling.stopped(claimed.signal_id),
                lambda pid: self._handling.held.started(claimed, pid),
                request.limits.stall_timeout,
                lambda: self._nudges(claimed.signal_id, claimed.claim_token),
            )
            outcome = runner_for(name).run(request, control)
            _settle_whole_run(request, outcome)
            handled = (
                from_stdout(outcome.answer)
                if outcome.succeeded
                else HandlerOutcome(False, error=outcome.error)
            )
            stalled = None if outcome.succeeded else control.stalled
        except Exception as exc:
            logger.exception("running %s went wrong", claimed.signal_id)
            outcome = RunOutcome(
                False,
                SignalUsage(runner=name),
                error=f"the worker could not run the {name} runner: {said(exc)}",
            )
            handled, stalled = HandlerOutcome(False, error=outcome.error), None
        self._handling.hand_over(
            agent, claimed, handled, started, usage=outcome.usage, folder=self.workdir, stalled=stalled
        )

    def request(
        self, agent: AgentDefinition, claimed: AgentSignal, output: Callable[[str], None] | None = None
    ) -> RunRequest:
        budgets = [b for b in (agent.max_budget_usd, claimed.budget_usd) if b is not None]
        tools = None
        if self.runner_of(agent) != "claude-code":  # Claude Code reaches the board through `blackboard mcp`
            if self._board_tools is None:
                raise RuntimeError("this worker was built without the board's tools (board_tools)")
            tools = self._board_tools(
                agent.name, claimed.blackboard_id, claimed.signal_id, claimed.claim_token or ""
            )
        return RunRequest(
            agent=AgentBrief(
                name=agent.name,
                description=agent.description,
                instructions=agent.instructions,
                tools=agent.tools,
                model=agent.model,
                settings={k: v for k, v in agent.extra.items() if k not in OURS},
            ),
            signal_id=claimed.signal_id,
            blackboard_id=claimed.blackboard_id,
            prompt=build_prompt(self._handling.document(claimed)),
            token=claimed.claim_token or "",
            limits=RunLimits(
                timeout=agent.timeout or RUN_TIMEOUT,
                max_turns=agent.max_turns,
                max_budget_usd=min(budgets) if budgets else None,
                stall_timeout=STALL_TIMEOUT if agent.stall_timeout is None else agent.stall_timeout or None,
            ),
            workdir=str(self.workdir),
            transcript_path=str(transcript_of(self.transcripts, claimed.signal_id, claimed.attempt)),
            model=self._options.model,
            permissions=Permissions(self._options.permission_mode, self._options.allowed_tools),
            board_env=dict(self._options.board_env),
            tools=tools,
            attempt=claimed.attempt,
            earlier=tuple(
                EarlierRun(
                    attempt,
                    session_of(claimed.signal_id, attempt),
                    str(transcript_of(self.transcripts, claimed.signal_id, attempt)),
                )
                for attempt in range(claimed.attempt - 1, 0, -1)
            ),
            output=output,
            rate=self._rate_gate(agent),
        )

    def _rate_gate(self, agent: AgentDefinition) -> RateGate | None:
        """The run's way through its agent's rate limit (None: it has none). The claim took its first call's
        room already."""
        limit = agent.profile.rate_limit
        if limit is None or self._rate_windows is None:
            return None
        return RateGate(self._rate_windows, limit, lambda: datetime.now(UTC))

    @property
    def transcripts(self) -> Path:
        """`<artifacts folder>/transcripts`: the worker made the artifacts folder absolute (its ./artifacts)."""
        return self.workdir / self._artifacts_dir / "transcripts"


def stall_reason(idle: float, stall_timeout: float | None) -> str:
    """A stalled run's failure, as the signal's result and its attempt say it."""
    return (
        f"stalled: no output line, token or tool call for {idle:.0f}s "
        f"(the agent file's stall_timeout is {stall_timeout:g}s)"
    )


def transcript_of(folder: Path, signal_id: str, attempt: int) -> Path:
    """Where the run of a signal's attempt keeps its transcript: `<signal>.jsonl` for the first (as every run's
    was before attempts had their own), `<signal>.attempt-N.jsonl` for attempt N after it."""
    return folder / (f"{signal_id}.jsonl" if attempt == 1 else f"{signal_id}.attempt-{attempt}.jsonl")


def _settle_whole_run(request: RunRequest, outcome: RunOutcome) -> None:
    """A run under a rate limit whose runner took no room call by call (Claude Code makes its calls itself):
    what the whole run cost in tokens settles against what its claim took, so the key's token window holds
    at claim time (docs/control.md, "Rate limits")."""
    gate = request.rate
    if gate is None or gate.called:
        return
    usage = outcome.usage
    try:
        gate.after_call((usage.input_tokens or 0) + (usage.output_tokens or 0))
    except Exception as exc:  # noqa: BLE001 - the window is settled at best; the outcome is recorded anyway
        logger.warning(
            "the rate limit %s was not settled after %s: %s", gate.limit.key, request.signal_id, exc
        )
