"""The worker's path for an agent a runner runs: the request, the run in a pool thread under a control that
keeps the timeout and the grace period and renews the claim, and its outcome with its usage to the recorder."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from blackboard.application.runners import (
    AgentBrief,
    Nudge,
    Permissions,
    RunControl,
    RunLimits,
    RunOutcome,
    RunRequest,
    ToolsFactory,
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
CHECK_EVERY = 1.0  # seconds between looks at whether the claim still holds (ended by another hand: stop)
OURS = OWNED - {"name"}  # the agent file's keys the blackboard acts on: not handed to Claude Code


class WorkerControl(RunControl):
    """The timeout, the worker's grace period (`cancel` set: over), the claim's renewal every `renew_every`
    seconds (`renew` raising: the claim is lost, the run stops) and, every second, whether the claim still
    holds (`ended`: why not), so a signal ended by another hand stops its run at once."""

    def __init__(
        self,
        timeout: float,
        cancel: threading.Event,
        renew: Callable[[], None],
        renew_every: float,
        ended: Callable[[], str | None],
        stopped: Callable[[], str | None] = lambda: None,
        started: Callable[[int], None] = lambda pid: None,
        nudges: Callable[[], list[Nudge]] = list,
    ) -> None:
        self._timeout, self._cancel, self._renew, self._every = timeout, cancel, renew, renew_every
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
        nudges: Callable[[str, str | None], list[Nudge]] = lambda signal_id, token: [],
    ) -> None:
        """`nudges`: the nudges waiting for the run of a claim (signal, token), each handed over once."""
        self._handling, self._options, self._artifacts_dir = handling, options, artifacts_dir
        self._renew_every, self._cancel = renew_every, cancel
        self._board_tools = board_tools
        self._nudges = nudges
        self.workdir = Path(options.workdir or ".").resolve()

    def runner_of(self, agent: AgentDefinition) -> str | None:
        """The runner for this agent: --runner, else the file's (claude-code for a file with no handler)."""
        return self._options.runner or agent.runner_name

    def run(self, agent: AgentDefinition, claimed: AgentSignal) -> None:
        """In a pool thread: run the agent's runner on the signal, hand its outcome over. Never raises."""
        started, name = time.monotonic(), str(self.runner_of(agent))
        try:
            request = self.request(agent, claimed)
            control = WorkerControl(
                request.limits.timeout,
                self._cancel,
                lambda: self._handling.renew(agent, claimed),
                self._renew_every,
                lambda: self._handling.claim_ended(agent, claimed),
                lambda: self._handling.stopped(claimed.signal_id),
                lambda pid: self._handling.held.started(claimed, pid),
                lambda: self._nudges(claimed.signal_id, claimed.claim_token),
            )
            outcome = runner_for(name).run(request, control)
            handled = (
                from_stdout(outcome.answer)
                if outcome.succeeded
                else HandlerOutcome(False, error=outcome.error)
            )
        except Exception as exc:
            logger.exception("running %s went wrong", claimed.signal_id)
            outcome = RunOutcome(
                False,
                SignalUsage(runner=name),
                error=f"the worker could not run the {name} runner: {said(exc)}",
            )
            handled = HandlerOutcome(False, error=outcome.error)
        self._handling.hand_over(agent, claimed, handled, started, usage=outcome.usage, folder=self.workdir)

    def request(self, agent: AgentDefinition, claimed: AgentSignal) -> RunRequest:
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
            ),
            workdir=str(self.workdir),
            transcript_path=str(self.transcripts / f"{claimed.signal_id}.jsonl"),
            model=self._options.model,
            permissions=Permissions(self._options.permission_mode, self._options.allowed_tools),
            board_env=dict(self._options.board_env),
            tools=tools,
        )

    @property
    def transcripts(self) -> Path:
        """`<artifacts folder>/transcripts`: the worker made the artifacts folder absolute (its ./artifacts)."""
        return self.workdir / self._artifacts_dir / "transcripts"
