"""`blackboard worker`: an agent as a process that finds work it can do, claims it and does it.

The loop: note the log position, sweep expired signals now and then, pick the claimable signals
this agent may take (best score first, then oldest), claim one with this process's token (losing
a race is normal and quiet), run the agent's handler in a thread while renewing the claim, then
complete or fail. Between rounds it sleeps until the log moves past the noted position, so a
signal posted or released meanwhile wakes it at once and none is missed.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from application.commands import (
    ClaimSignal,
    CompleteSignal,
    ExpireSignals,
    FailSignal,
    GetOpenSignals,
    GetSignalById,
    RenewClaim,
)
from application.ports import EventStore, LogNotifier, StoreUnavailable
from application.queries import BlackboardQueries
from application.service import BlackboardService
from domain.errors import AgentNotFound, AlreadyClaimed, BlackboardError, InvalidInput, RuleViolation
from domain.capabilities import AgentProfile
from domain.signals import AgentSignal
from infrastructure.agents.handler import HandlerOutcome, run_handler
from infrastructure.agents.parsing import AgentDefinition

logger = logging.getLogger("blackboard.worker")


@dataclass(frozen=True, slots=True)
class WorkerOptions:
    agent: str
    once: bool = False
    concurrency: int = 1
    blackboard_id: str | None = None
    grace: float = 30.0  # seconds a stopping worker lets running handlers finish
    sweep_every: float = 5.0  # seconds between expiry sweeps
    renew_every: float = 100.0  # seconds between lease renewals while a handler runs
    head_start: float = 0.1  # seconds per point of score: an agent waits (best other score - its own)
    # x this before claiming, so when several agents fit one signal the best fit usually gets it


class Worker:
    def __init__(
        self,
        options: WorkerOptions,
        service: BlackboardService,
        queries: BlackboardQueries,
        agents: Callable[[str], AgentDefinition | None],
        everyone: Callable[[], list[AgentProfile]],
        store: EventStore,
        notifier: LogNotifier,
        threshold: float,
    ) -> None:
        self._options = options
        self._service = service
        self._queries = queries
        self._agents = agents
        self._others = everyone  # every registered agent: who might fit a signal better
        self._store = store
        self._notifier = notifier
        self._threshold = threshold
        self.token = f"{options.agent}/{uuid.uuid4()}"  # this process's claims, and no one else's
        self._stopping = threading.Event()
        self._cancel = threading.Event()
        self._finished = threading.Event()
        self._active: dict[str, threading.Thread] = {}
        self._handled = 0
        self._next_sweep = 0.0
        self._stopped_at: float | None = None

    @property
    def handled(self) -> int:
        return self._handled

    def stop(self, *_: Any) -> None:
        """Stop claiming; running handlers may finish within the grace period."""
        if not self._stopping.is_set():
            self._stopped_at = time.monotonic()
            logger.info("stopping: no new claims; %d handler(s) running, %gs to finish", len(self._active), self._options.grace)
        self._stopping.set()

    def install_signal_handlers(self) -> None:
        signal.signal(signal.SIGTERM, self.stop)
        signal.signal(signal.SIGINT, self.stop)

    def run(self) -> int:
        """Work until stopped (or, with `once`, after at most one signal). Returns the exit code."""
        if not self._definition().runnable:  # an unknown agent, or one with nothing to run, fails now
            raise InvalidInput(
                "command", f"agent {self._options.agent} has no command or entrypoint in its file; a worker runs one"
            )
        logger.info("worker %s started (token %s, concurrency %d)", self._options.agent, self.token, self._options.concurrency)
        outage = 0
        while not self._stopping.is_set():
            self._finished.clear()  # before looking: a handler ending from here on wakes the sleep below
            try:
                position = self._store.last_position()  # before looking, so nothing posted now is missed
                self._sweep_if_due()
                claimed = self._claim_what_fits()
            except StoreUnavailable as down:  # a restart or a network cut: wait, then carry on
                outage += 1
                logger.warning("database unavailable (%s); retrying", down)
                self._stopping.wait(min(5.0, 0.25 * 2**outage))
                continue
            outage = 0
            if self._options.once:  # at most one signal: the one just claimed, or none
                break
            if not claimed:
                self._sleep_until_something_happens(position)
        self._drain()
        logger.info("worker %s stopped after %d signal(s)", self._options.agent, self._handled)
        return 0

    # ------------------------------------------------------------------ finding and claiming work
    def _claim_what_fits(self) -> bool:
        """Claim signals for the free handler slots; True if any was claimed."""
        free = (1 if self._options.once else self._options.concurrency) - len(self._active)
        if free <= 0:
            return False
        agent, claimed_any = self._definition(), False
        candidates = self._candidates(agent)
        if candidates and self._options.head_start:
            time.sleep(self._yield_to_better_fits(agent, candidates[0]))
        for signal_ in candidates:
            if free <= 0 or self._stopping.is_set():
                break
            claim = ClaimSignal(  # naming the board spares the service a read-model lookup
                signal_id=signal_.signal_id, agent_id=agent.name, token=self.token, blackboard_id=signal_.blackboard_id
            )
            try:
                mine = self._service.claim_signal(claim)
            except AlreadyClaimed as lost:  # normal: say so only when a different agent took it
                level = logging.DEBUG if lost.claimed_by == agent.name else logging.INFO
                logger.log(level, "%s went to %s", signal_.signal_id, lost.claimed_by)
                continue
            except RuleViolation as refused:  # it changed meanwhile (expired, dependencies): quiet
                logger.debug("did not claim %s: %s", signal_.signal_id, refused)
                continue
            score = agent.profile.score(mine)
            logger.info("claimed %s %s %r (score %.2f)", mine.signal_id, mine.signal_type, mine.payload.topic, score)
            self._start(agent, mine)
            free, claimed_any = free - 1, True
        return claimed_any

    def _yield_to_better_fits(self, agent: AgentDefinition, signal_: AgentSignal) -> float:
        """Seconds to wait so that an agent fitting the signal better gets there first (0 if none does)."""
        mine = agent.profile.score(signal_)
        best_other = max((a.score(signal_) for a in self._others() if a.agent_id != agent.name), default=0.0)
        return max(0.0, best_other - mine) * self._options.head_start

    def _candidates(self, agent: AgentDefinition) -> list[AgentSignal]:
        """Claimable signals this agent may take: best score first, then oldest."""
        profile = agent.profile
        able = [c for c in profile.capabilities if c.score > profile.threshold_or(self._threshold)]
        slots = 1 if self._options.once else self._options.concurrency
        found: dict[str, AgentSignal] = {}
        for capability in sorted(able, key=lambda c: -c.score):  # a few of the oldest per capability
            query = GetOpenSignals(capabilities=(capability.type,), limit=8 * slots, blackboard_id=self._options.blackboard_id)
            found.update((s.signal_id, s) for s in self._queries.open_signals(query))
        fitting = [s for s in found.values() if profile.may_claim(s, self._threshold)]
        return sorted(fitting, key=lambda s: (-profile.score(s), s.created_at, s.signal_id))

    # ------------------------------------------------------------------------- doing the work
    def _start(self, agent: AgentDefinition, claimed: AgentSignal) -> None:
        thread = threading.Thread(target=self._work, args=(agent, claimed), name=claimed.signal_id, daemon=True)
        self._active[claimed.signal_id] = thread
        thread.start()

    def _work(self, agent: AgentDefinition, claimed: AgentSignal) -> None:
        started = time.monotonic()
        try:
            outcome = run_handler(
                agent, self._document(claimed), tick=lambda: self._renew(agent, claimed),
                tick_every=self._options.renew_every, cancel=self._cancel,
            )
            self._finish(agent, claimed, outcome, time.monotonic() - started)
        except Exception:  # noqa: BLE001 - a worker thread must never die silently
            logger.exception("handling %s went wrong", claimed.signal_id)
        finally:
            self._active.pop(claimed.signal_id, None)
            self._handled += 1
            self._finished.set()

    def _document(self, claimed: AgentSignal) -> dict[str, Any]:
        """The signal document, with the results of the signals it came after in context.upstream."""
        document = claimed.to_document()
        if claimed.after:
            document["payload"]["context"]["upstream"] = {
                upstream: self._queries.get_signal(GetSignalById(signal_id=upstream)).to_document()
                for upstream in claimed.after
            }
        return document

    def _renew(self, agent: AgentDefinition, claimed: AgentSignal) -> None:
        """A lost claim stops the handler (the work is someone else's now); an outage does not."""
        try:
            self._service.renew_claim(RenewClaim(
                signal_id=claimed.signal_id, agent_id=agent.name, token=self.token, blackboard_id=claimed.blackboard_id
            ))
        except StoreUnavailable as down:
            logger.warning("could not renew the claim on %s (%s); will try again", claimed.signal_id, down)
            return
        logger.debug("renewed the claim on %s", claimed.signal_id)

    def _finish(self, agent: AgentDefinition, claimed: AgentSignal, outcome: HandlerOutcome, took: float) -> None:
        """Record the outcome, through database outages, until it is stored or refused."""
        for attempt in range(1, 1000):
            try:
                self._record(agent, claimed, outcome, took)
                return
            except StoreUnavailable as down:
                logger.warning("could not record the outcome of %s (%s); retrying", claimed.signal_id, down)
                if self._cancel.wait(min(5.0, 0.25 * 2**attempt)):
                    return

    def _record(self, agent: AgentDefinition, claimed: AgentSignal, outcome: HandlerOutcome, took: float) -> None:
        sid = claimed.signal_id
        try:
            if outcome.succeeded:
                self._service.complete_signal(CompleteSignal(
                    signal_id=sid, agent_id=agent.name, token=self.token, blackboard_id=claimed.blackboard_id,
                    artifact_path=outcome.artifact_path, knowledge_items=outcome.knowledge_items,
                ))
                logger.info("completed %s in %.2fs: %s", sid, took, outcome.artifact_path or f"{len(outcome.knowledge_items)} knowledge item(s)")
            else:
                self._service.fail_signal(FailSignal(
                    signal_id=sid, agent_id=agent.name, token=self.token, blackboard_id=claimed.blackboard_id,
                    error=outcome.error or "handler failed",
                ))
                logger.info("failed %s after %.2fs: %s", sid, took, outcome.error)
        except BlackboardError as refused:  # the claim is no longer ours (it expired meanwhile)
            logger.warning("could not record the outcome of %s: %s", sid, refused)

    # ---------------------------------------------------------------------------- housekeeping
    def _definition(self) -> AgentDefinition:
        agent = self._agents(self._options.agent)
        if agent is None:
            raise AgentNotFound(self._options.agent)
        return agent

    def _sweep_if_due(self) -> None:
        if time.monotonic() < self._next_sweep:
            return
        self._next_sweep = time.monotonic() + self._options.sweep_every
        for ended in self._service.expire_signals(ExpireSignals(blackboard_id=self._options.blackboard_id)):
            logger.info("expired %s: %s", ended.signal_id, ended.result.error if ended.result else "")

    def _sleep_until_something_happens(self, position: int) -> None:
        """Until the log moves, a handler finishes, a sweep is due, or the worker is told to stop."""
        until = self._next_sweep
        while not (self._stopping.is_set() or self._finished.is_set()) and time.monotonic() < until:
            try:
                if self._store.last_position() > position:
                    return
            except StoreUnavailable:
                return  # the main loop waits the outage out
            # short slices while handlers run: the end of one frees a slot, and nothing else announces it
            step = 0.02 if self._active else 0.25
            self._notifier.wait(position, min(step, max(0.0, until - time.monotonic())))

    def _drain(self) -> None:
        """Let running handlers finish; once stopped and past the grace period, stop them too
        (their signals fail with the reason), so no claim is left without an owner."""
        while self._active:
            if self._stopped_at is not None and time.monotonic() >= self._stopped_at + self._options.grace:
                if not self._cancel.is_set():
                    logger.info("grace period over: stopping %d handler(s)", len(self._active))
                self._cancel.set()
            self._finished.wait(0.05)
            self._finished.clear()
