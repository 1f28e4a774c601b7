"""`blackboard worker`: an agent as a process that finds work it can do, claims it and does it.

The loop: note the log position, sweep expired signals now and then, pick the claimable signals
this agent may take (best score first, then oldest), and claim as many as it has free handler
slots in one command with this process's token (signals other workers took meanwhile are skipped,
quietly). A `command` handler runs in a thread of a pool, which watches it and renews its claim;
a Python `entrypoint` runs on a lane (agents/lanes.py) that hands its outcome over itself, while
one supervisor thread keeps the timeouts and the grace period of every call and has the pool renew
their claims, so no thread per signal sits waiting. The outcomes go to a recorder thread that
stores every outcome ready at that moment in one command, so a busy worker writes one transaction
per batch, not one per signal. Between rounds the loop sleeps until the log moves past the noted
position, so a signal posted or released meanwhile wakes it at once and none is missed.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from blackboard.application.commands import (
    ClaimSignals,
    CompleteSignal,
    ExpireSignals,
    FailSignal,
    GetOpenSignals,
    GetSignalById,
    RecordOutcomes,
    RenewClaim,
)
from blackboard.application.ports import EventStore, LogNotifier, StoreUnavailable
from blackboard.application.queries import BlackboardQueries
from blackboard.application.service import BlackboardService
from blackboard.domain.errors import AgentNotFound, AlreadyClaimed, BlackboardError, InvalidInput
from blackboard.domain.capabilities import AgentProfile
from blackboard.domain.signals import AgentSignal, Candidate
from blackboard.infrastructure.agents.entrypoints import load_entrypoint
from blackboard.infrastructure.agents.handler import (
    ABANDONED,
    CANCELLED,
    POLL,
    HandlerOutcome,
    call_entrypoint_here,
    run_handler,
    timeout_of,
)
from blackboard.infrastructure.agents.lanes import start_call
from blackboard.infrastructure.agents.parsing import AgentDefinition

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


@dataclass(frozen=True, slots=True)
class _Done:
    """A handler's outcome, waiting for the recorder."""

    claimed: AgentSignal
    command: CompleteSignal | FailSignal
    took: float


@dataclass(slots=True)
class _Flight:
    """An entrypoint call on a lane. Whoever ends it first (the lane with the function's outcome,
    or the supervisor with a reason to stop) hands the outcome to the recorder; the other is ignored."""

    agent: AgentDefinition
    claimed: AgentSignal
    started: float
    deadline: float
    next_tick: float
    ended: bool = False
    renewing: bool = False  # a renewal is under way in the pool


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
        self._slots = 1 if options.once else options.concurrency
        self._stopping = threading.Event()
        self._cancel = threading.Event()
        self._finished = threading.Event()  # a slot was freed (or the worker was told to stop)
        self._active: dict[str, AgentSignal] = {}  # claimed and not yet recorded
        self._ready: list[_Done] = []  # outcomes the recorder has not stored yet
        self._ready_changed = threading.Condition()
        self._flights: dict[str, _Flight] = {}  # entrypoint calls running on lanes, by signal
        self._flights_lock = threading.Lock()
        self._supervisor: threading.Thread | None = None  # started with the first entrypoint call
        self._drained = threading.Event()  # every claim recorded after a stop: the supervisor may end
        self._pool: ThreadPoolExecutor | None = None
        self._closing = False
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
        self._finished.set()

    def install_signal_handlers(self) -> None:
        signal.signal(signal.SIGTERM, self.stop)
        signal.signal(signal.SIGINT, self.stop)

    def run(self) -> int:
        """Work until stopped (or, with `once`, after at most one signal). Returns the exit code."""
        definition = self._definition()
        if not definition.runnable:  # an unknown agent, or one with nothing to run, fails now
            raise InvalidInput(
                "command", f"agent {self._options.agent} has no command or entrypoint in its file; a worker runs one"
            )
        if definition.entrypoint:
            load_entrypoint(definition)  # an entrypoint that does not import fails now too (exit 2)
        logger.info("worker %s started (token %s, concurrency %d)", self._options.agent, self.token, self._options.concurrency)
        recorder = threading.Thread(target=self._record_outcomes, name="recorder", daemon=True)
        recorder.start()
        with ThreadPoolExecutor(max_workers=self._slots, thread_name_prefix="handler") as pool:
            self._pool = pool
            try:
                self._loop(pool)
            finally:
                self._drain()
                self._drained.set()
                if self._supervisor is not None:
                    self._supervisor.join()
                with self._ready_changed:
                    self._closing = True
                    self._ready_changed.notify_all()
                recorder.join()
        logger.info("worker %s stopped after %d signal(s)", self._options.agent, self._handled)
        return 0

    def _loop(self, pool: ThreadPoolExecutor) -> None:
        outage = 0
        while not self._stopping.is_set():
            self._finished.clear()  # before looking: a slot freed from here on wakes the waits below
            if self._slots - len(self._active) <= 0:  # busy: nothing to claim until a slot frees
                self._finished.wait(max(0.0, self._next_sweep - time.monotonic()))
                if self._finished.is_set():
                    continue
            try:
                # before looking, so nothing posted from now on is missed; the notifier usually knows it
                position = self._notifier.seen()
                if position is None:
                    position = self._store.last_position()
                self._sweep_if_due()
                claimed = self._claim_what_fits(pool)
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

    # ------------------------------------------------------------------ finding and claiming work
    def _claim_what_fits(self, pool: ThreadPoolExecutor) -> bool:
        """Claim signals for the free handler slots; True if any was claimed."""
        free = self._slots - len(self._active)
        if free <= 0:
            return False
        agent, claimed_any = self._definition(), False
        candidates = self._candidates(agent, free)
        if candidates and self._options.head_start:
            time.sleep(self._yield_to_better_fits(agent, candidates[0]))
        by_board: dict[str, list[str]] = {}
        for signal_ in candidates:
            by_board.setdefault(signal_.blackboard_id, []).append(signal_.signal_id)
        for board_id, signal_ids in by_board.items():
            if free <= 0 or self._stopping.is_set():
                break
            claims = self._service.claim_signals(ClaimSignals(
                blackboard_id=board_id, signal_ids=tuple(signal_ids), agent_id=agent.name, token=self.token, limit=free
            ))
            for signal_id, refused in claims.skipped.items():  # normal: say so only when another agent took it
                other = isinstance(refused, AlreadyClaimed) and refused.claimed_by != agent.name
                logger.log(logging.INFO if other else logging.DEBUG, "%s %s", signal_id,
                           f"went to {refused.claimed_by}" if isinstance(refused, AlreadyClaimed) else f"skipped: {refused}")
            for claimed in claims.claimed:
                logger.info("claimed %s %s %r (score %.2f)", claimed.signal_id, claimed.signal_type,
                            claimed.payload.topic, agent.profile.score(claimed))
                self._active[claimed.signal_id] = claimed
                if agent.entrypoint:
                    self._start_on_lane(agent, claimed)
                else:
                    pool.submit(self._work, agent, claimed)
            free, claimed_any = free - len(claims.claimed), claimed_any or bool(claims.claimed)
        return claimed_any

    def _yield_to_better_fits(self, agent: AgentDefinition, signal_: Candidate) -> float:
        """Seconds to wait so that an agent fitting the signal better gets there first (0 if none does)."""
        mine = agent.profile.score(signal_)
        best_other = max((a.score(signal_) for a in self._others() if a.agent_id != agent.name), default=0.0)
        return max(0.0, best_other - mine) * self._options.head_start

    def _candidates(self, agent: AgentDefinition, free: int) -> list[Candidate]:
        """Claimable signals this agent may take: best score first, then oldest. More than the free
        slots, so that when other workers take the first ones meanwhile the claim goes on to the next."""
        profile = agent.profile
        able = [c for c in profile.capabilities if c.score > profile.threshold_or(self._threshold)]
        found: dict[str, Candidate] = {}
        for capability in sorted(able, key=lambda c: -c.score):  # a few of the oldest per capability
            # as the read model stands: appends fold into it as they commit, and a stale candidate costs
            # nothing (the claim decides on the board itself)
            query = GetOpenSignals(capabilities=(capability.type,), limit=max(8, 2 * free),
                                   blackboard_id=self._options.blackboard_id, catch_up=False)
            found.update((s.signal_id, s) for s in self._queries.open_candidates(query))
        fitting = [s for s in found.values() if profile.may_claim(s, self._threshold)]
        return sorted(fitting, key=lambda s: (-profile.score(s), s.created_at, s.signal_id))

    # ------------------------------------------------------------------------- doing the work
    def _work(self, agent: AgentDefinition, claimed: AgentSignal) -> None:
        """In a pool thread: run a command handler, hand its outcome to the recorder. Never raises."""
        started = time.monotonic()
        try:
            outcome = run_handler(
                agent, self._document(claimed), tick=lambda: self._renew(agent, claimed),
                tick_every=self._options.renew_every, cancel=self._cancel,
            )
        except Exception as exc:  # noqa: BLE001 - the signal fails with the reason, the worker goes on
            logger.exception("handling %s went wrong", claimed.signal_id)
            outcome = HandlerOutcome(False, error=f"the worker could not run the handler: {_said(exc)}")
        self._hand_over(agent, claimed, outcome, started)

    def _start_on_lane(self, agent: AgentDefinition, claimed: AgentSignal) -> None:
        now = time.monotonic()
        flight = _Flight(agent, claimed, now, now + timeout_of(agent), now + self._options.renew_every)
        with self._flights_lock:
            self._flights[claimed.signal_id] = flight
        if self._supervisor is None:  # only the loop's thread starts calls
            self._supervisor = threading.Thread(target=self._supervise, name="supervisor", daemon=True)
            self._supervisor.start()
        start_call(self._call_on_lane, flight)

    def _call_on_lane(self, flight: _Flight) -> None:
        """On a lane: build the document, call the entrypoint, hand the outcome over. Never raises:
        a flight that never landed would hold its slot until its timeout."""
        try:
            try:
                document = self._document(flight.claimed)
            except Exception as exc:  # noqa: BLE001 - e.g. the upstream results could not be read
                logger.exception("handling %s went wrong", flight.claimed.signal_id)
                outcome = HandlerOutcome(False, error=f"the worker could not run the handler: {_said(exc)}")
            else:
                outcome = call_entrypoint_here(flight.agent, document)  # a fresh document: no copy needed
        except BaseException as exc:  # noqa: BLE001 - e.g. an exception whose str() raises
            outcome = HandlerOutcome(False, error=f"the worker could not run the handler: {_said(exc)}")
        self._land(flight, outcome)

    def _land(self, flight: _Flight, outcome: HandlerOutcome) -> None:
        """The first outcome of a flight goes to the recorder (the function's, or the reason it was stopped)."""
        with self._flights_lock:
            if flight.ended:
                return
            flight.ended = True
            del self._flights[flight.claimed.signal_id]
        self._hand_over(flight.agent, flight.claimed, outcome, flight.started)

    def _supervise(self) -> None:
        """The supervisor thread: give up on the entrypoint calls past their timeout or, once the grace
        period is over, on all of them; have the pool renew the claims of long ones. Renewals run off
        this thread, so a slow one delays no timeout. Until the worker has drained."""
        while not self._drained.wait(POLL):
            with self._flights_lock:
                flights = [f for f in self._flights.values() if not f.ended]
            now = time.monotonic()
            for flight in flights:
                try:
                    if self._cancel.is_set():
                        self._land(flight, HandlerOutcome(False, error=CANCELLED + ABANDONED))
                    elif now >= flight.deadline:
                        timed_out = f"timed out after {timeout_of(flight.agent):g}s"
                        self._land(flight, HandlerOutcome(False, error=timed_out + ABANDONED))
                    elif now >= flight.next_tick and not flight.renewing and self._pool is not None:
                        flight.next_tick, flight.renewing = now + self._options.renew_every, True
                        self._pool.submit(self._renew_flight, flight)
                except Exception:  # noqa: BLE001 - the supervisor must not die: the others still need it
                    logger.exception("could not supervise the call on %s", flight.claimed.signal_id)

    def _renew_flight(self, flight: _Flight) -> None:
        """In the pool: renew one call's claim; a lost claim stops the call (the work is someone else's)."""
        try:
            if not flight.ended:
                self._renew(flight.agent, flight.claimed)
        except Exception as exc:  # noqa: BLE001 - the reason becomes the failure
            self._land(flight, HandlerOutcome(False, error=f"stopped: {exc}" + ABANDONED))
        finally:
            flight.renewing = False

    def _hand_over(self, agent: AgentDefinition, claimed: AgentSignal, outcome: HandlerOutcome, started: float) -> None:
        done = _Done(claimed, self._command(agent, claimed, outcome), time.monotonic() - started)
        with self._ready_changed:
            self._ready.append(done)
            self._ready_changed.notify()

    def _command(self, agent: AgentDefinition, claimed: AgentSignal, outcome: HandlerOutcome) -> CompleteSignal | FailSignal:
        common = {"signal_id": claimed.signal_id, "agent_id": agent.name, "token": self.token,
                  "blackboard_id": claimed.blackboard_id}
        if outcome.succeeded:
            try:
                return CompleteSignal(**common, artifact_path=outcome.artifact_path, knowledge_items=outcome.knowledge_items)
            except ValidationError as bad:  # e.g. an empty artifact_path: the handler's mistake, said as such
                problem = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in bad.errors())
                return FailSignal(**common, error=f"handler output refused: {problem}")
        return FailSignal(**common, error=outcome.error or "handler failed")

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

    # ------------------------------------------------------------------------ recording outcomes
    def _record_outcomes(self) -> None:
        """The recorder thread: store every outcome that is ready, one command per board, until closed.
        While one batch is being stored the next one gathers, so the batches grow with the load."""
        while True:
            with self._ready_changed:
                while not self._ready and not self._closing:
                    self._ready_changed.wait()
                if not self._ready:
                    return
                batch, self._ready = self._ready, []
            try:
                self._store_batch(batch)
            except Exception:  # noqa: BLE001 - the recorder must not die: these claims will expire
                logger.exception("could not record %d outcome(s)", len(batch))
            for done in batch:
                self._active.pop(done.claimed.signal_id, None)
            self._handled += len(batch)
            self._finished.set()

    def _store_batch(self, batch: list[_Done]) -> None:
        by_board: dict[str, list[_Done]] = {}
        for done in batch:
            by_board.setdefault(done.claimed.blackboard_id, []).append(done)
        for board_id, items in by_board.items():
            command = RecordOutcomes(
                blackboard_id=board_id, agent_id=self._options.agent, outcomes=tuple(d.command for d in items)
            )
            results = self._through_outages(command)
            if results is None:
                continue
            for done, result in zip(items, results, strict=True):
                self._log_outcome(done, result)

    def _through_outages(self, command: RecordOutcomes) -> list[AgentSignal | BlackboardError] | None:
        """Record, through database outages, until stored or refused; None if the worker was cancelled."""
        for attempt in range(1, 1000):
            try:
                return self._service.record_outcomes(command)
            except StoreUnavailable as down:
                logger.warning("could not record %d outcome(s) (%s); retrying", len(command.outcomes), down)
                if self._cancel.wait(min(5.0, 0.25 * 2**attempt)):
                    return None
        return None

    @staticmethod
    def _log_outcome(done: _Done, result: AgentSignal | BlackboardError) -> None:
        sid, command = done.claimed.signal_id, done.command
        if isinstance(result, BlackboardError):  # the claim is no longer ours (it expired meanwhile)
            logger.warning("could not record the outcome of %s: %s", sid, result)
        elif isinstance(command, CompleteSignal):
            logger.info("completed %s in %.2fs: %s", sid, done.took,
                        command.artifact_path or f"{len(command.knowledge_items)} knowledge item(s)")
        else:
            logger.info("failed %s after %.2fs: %s", sid, done.took, command.error)

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
        """Until the log moves past `position`, a slot frees, a sweep is due, or the worker is told to stop.
        The notifier knows when the log moves (a notification, or its own look at the log)."""
        until = self._next_sweep
        while not (self._stopping.is_set() or self._finished.is_set()):
            remaining = until - time.monotonic()
            if remaining <= 0 or self._notifier.wait(position, min(0.25, remaining)):
                return

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


def _said(error: BaseException) -> str:
    """`Type: message`, even for an exception whose str() itself raises."""
    try:
        return f"{type(error).__name__}: {error}"
    except Exception:  # noqa: BLE001
        return type(error).__name__
