"""Handling one claimed signal: its document, its lease renewals, a command handler in a pool thread, its outcome."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from blackboard.application.callers import Caller, Kind
from blackboard.application.commands import CompleteSignal, FailSignal, GetSignalById, RenewClaim
from blackboard.application.ports import StoreUnavailable
from blackboard.application.queries import BlackboardQueries
from blackboard.application.service import BlackboardService
from blackboard.domain.errors import InvalidInput
from blackboard.domain.signals import AgentSignal, SignalStatus, SignalUsage
from blackboard.infrastructure.agents.handler import HandlerOutcome, run_handler
from blackboard.infrastructure.agents.outcome import artifact_refusal
from blackboard.infrastructure.agents.parsing import AgentDefinition
from blackboard.infrastructure.documents import jsonable, signal
from blackboard.infrastructure.errors.input import invalid_input
from blackboard.infrastructure.keeper.marks import marks
from blackboard.infrastructure.worker.held import HeldRuns
from blackboard.infrastructure.worker.output import OutputWriter, RunOutput
from blackboard.infrastructure.worker.recorder import Done, Recorder

logger = logging.getLogger("blackboard.worker")  # the whole worker logs under one name, which users filter on


class Handling:
    """What every handler needs, a command's in the pool as much as an entrypoint's on a lane."""

    def __init__(
        self,
        service: BlackboardService,
        queries: BlackboardQueries,
        renew_every: float,
        cancel: threading.Event,
        recorder: Recorder,
        artifacts_dir: str = "artifacts",
        handler_env: Mapping[str, str] | None = None,
        stops: Callable[[str], str | None] | None = None,
        held: HeldRuns | None = None,
        output: OutputWriter | None = None,
    ) -> None:
        """`output`: where runs' output goes as it comes, for followers (worker/output.py); None: nowhere."""
        self.output = output or OutputWriter(None, lambda: datetime.now(UTC))
        self._stops = stops  # why a signal's run must stop now (cancelled meanwhile): the stop watch's
        self.held = held or HeldRuns(None)  # the claims' leases, and the keeper told of each run
        self._artifacts_dir = artifacts_dir
        self._handler_env = dict(handler_env or {})
        self._service = service
        self._queries = queries
        self._renew_every = renew_every
        self._cancel = cancel
        self._recorder = recorder

    def run_command(self, agent: AgentDefinition, claimed: AgentSignal) -> None:
        """In a pool thread: run a command handler, hand its outcome to the recorder. Never raises."""
        started, output = time.monotonic(), None
        try:
            output = self.output.run(claimed)
            outcome = run_handler(
                agent,
                self.document(claimed),
                {**self._handler_env, **self.held.identity(agent.name, claimed)},
                tick=lambda: self.renew(agent, claimed),
                tick_every=self._renew_every,
                cancel=self._cancel,
                stop=lambda: self.stopped(claimed.signal_id),
                started=lambda pid: self.held.started(claimed, pid),
                marks=marks(claimed.signal_id, claimed.claim_token or ""),
                on_stderr=lambda line: self._stderr(claimed.signal_id, line, output),  # as it comes
                on_stdout=None if output is None else output.stdout,
            )
        except Exception as exc:
            logger.exception("handling %s went wrong", claimed.signal_id)
            outcome = HandlerOutcome(False, error=f"the worker could not run the handler: {said(exc)}")
        self.hand_over(agent, claimed, outcome, started)

    @staticmethod
    def _stderr(signal_id: str, line: str, output: RunOutput | None) -> None:
        logger.info("%s stderr: %s", signal_id, line)
        if output is not None:
            output.stderr(line)

    def run_of(self, agent: AgentDefinition, claimed: AgentSignal) -> Caller:
        """The run, as an entrypoint's calls of the board present it (identity.running)."""
        return Caller(Kind.RUN, agent.name, claimed.signal_id, claimed.claim_token, claimed.blackboard_id)

    def document(self, claimed: AgentSignal) -> dict[str, Any]:
        """The signal document, with the results of the signals it came after in context.upstream."""
        document = jsonable(signal(claimed))
        if claimed.after:
            document["payload"]["context"]["upstream"] = {
                upstream: jsonable(signal(self._queries.get_signal(GetSignalById(signal_id=upstream))))
                for upstream in claimed.after
            }
        return document

    def stopped(self, signal_id: str) -> str | None:
        """Why the run of this signal must stop now (it was cancelled meanwhile, or its claim lapsed by this
        worker's clock: renewals failed for the whole claim timeout), or None. No query."""
        if self._stops is not None and (reason := self._stops(signal_id)) is not None:
            return reason
        return self.held.lapsed(signal_id)

    def renew(self, agent: AgentDefinition, claimed: AgentSignal) -> None:
        """A lost claim stops the handler (the work is someone else's now); an outage does not."""
        sent = self.held.sending()
        try:
            self._service.renew_claim(
                RenewClaim(
                    signal_id=claimed.signal_id,
                    agent_id=agent.name,
                    token=claimed.claim_token,
                    blackboard_id=claimed.blackboard_id,
                )
            )
        except StoreUnavailable as down:
            logger.warning("could not renew the claim on %s (%s); will try again", claimed.signal_id, down)
            return
        if sent is not None:
            self.held.renewed(claimed.signal_id, sent)
        logger.debug("renewed the claim on %s", claimed.signal_id)

    def claim_ended(self, agent: AgentDefinition, claimed: AgentSignal) -> str | None:
        """Why this worker's claim on the signal is over (ended by another hand, taken over), or None while
        it holds it. An outage is no end: None."""
        try:
            now = self._queries.get_signal(GetSignalById(signal_id=claimed.signal_id))
        except StoreUnavailable:
            return None
        if now.status is not SignalStatus.CLAIMED:
            return f"stopped: the signal is {now.status} now"
        if not now.held_by_claim(agent.name, claimed.claim_token):
            return "stopped: the claim is held by another worker now"
        return None

    def hand_over(
        self,
        agent: AgentDefinition,
        claimed: AgentSignal,
        outcome: HandlerOutcome,
        started: float,
        usage: SignalUsage | None = None,
        folder: Path | None = None,
        stalled: float | None = None,
    ) -> None:
        """`usage`: what a runner's run cost, recorded with the outcome; `folder`: where a relative
        artifact path leads from (a run's workdir; the agent file's folder by default); `stalled`: the run
        was stopped for showing no progress that many seconds (a failure, recorded as a stall with it). A run
        that failed after its claim lapsed failed for that (the keeper may have killed it): it says so."""
        self.output.finish()  # a follower that sees the outcome has seen every line before it
        lapsed = self.held.release(claimed.signal_id)
        if lapsed is not None and not outcome.succeeded:
            logger.warning("%s %s", claimed.signal_id, lapsed)
            if not (outcome.error or "").startswith(lapsed):  # stopped for it already: said as it was
                outcome, stalled = HandlerOutcome(False, error=lapsed), None
        if stalled is not None:
            logger.warning("%s %s", claimed.signal_id, outcome.error)
        command = self._command(agent, claimed, outcome, usage, folder)
        if stalled is not None and isinstance(command, FailSignal):
            command = command.model_copy(update={"stalled": stalled})
        took = time.monotonic() - started
        self._service.tracer.ran(claimed, agent.name, time.time_ns() - int(took * 1e9), outcome.succeeded)
        self._recorder.hand_over(Done(claimed, command, took))

    def _command(
        self,
        agent: AgentDefinition,
        claimed: AgentSignal,
        outcome: HandlerOutcome,
        usage: SignalUsage | None = None,
        folder: Path | None = None,
    ) -> CompleteSignal | FailSignal:
        common = {
            "signal_id": claimed.signal_id,
            "agent_id": agent.name,
            "token": claimed.claim_token,
            "blackboard_id": claimed.blackboard_id,
            "usage": usage,
            "attempt": claimed.attempt,
        }
        if (
            outcome.succeeded
            and outcome.artifact_path is not None
            and (
                refused := artifact_refusal(
                    outcome.artifact_path, folder or agent.path.resolve().parent, self._artifacts_dir
                )
            )
        ):
            return FailSignal(**common, error=f"handler output refused: artifact_path {refused}")
        if outcome.succeeded:
            try:
                return CompleteSignal(
                    **common, artifact_path=outcome.artifact_path, knowledge_items=outcome.knowledge_items
                )
            except ValidationError as bad:  # e.g. an empty artifact_path: the handler's mistake, said as such
                return FailSignal(**common, error=f"handler output refused: {invalid_input(bad)}")
            except InvalidInput as bad:  # a knowledge item no entry could hold: refused whole, nothing lands
                return FailSignal(**common, error=f"handler output refused: {bad}")
        return FailSignal(**common, error=outcome.error or "handler failed", retry_after=outcome.retry_after)


def said(error: BaseException) -> str:
    """`Type: message`, even for an exception whose str() itself raises."""
    try:
        return f"{type(error).__name__}: {error}"
    except Exception:  # noqa: BLE001
        return type(error).__name__
