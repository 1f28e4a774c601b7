"""The claim loop: claim what the claim policy picks for the free slots, sweep now and then, sleep on the log."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime

from blackboard.application.claiming import plan_claims, search_for
from blackboard.application.commands import ClaimSignals, ExpireSignals, GetOpenSignals
from blackboard.application.ports import EventStore, LogNotifier, StoreUnavailable
from blackboard.application.queries import BlackboardQueries
from blackboard.application.service import BlackboardService
from blackboard.domain.capabilities import AgentProfile
from blackboard.domain.errors import AgentNotFound, AlreadyClaimed, BlackboardError
from blackboard.domain.signals import AgentSignal, Candidate
from blackboard.infrastructure.agents.parsing import AgentDefinition
from blackboard.infrastructure.worker.options import WorkerOptions

logger = logging.getLogger("blackboard.worker")  # the whole worker logs under one name, which users filter on


class ClaimLoop:
    """Rounds of: note the log position, sweep expired signals when due, claim for the free slots and
    `start` each claim; having claimed nothing, sleep until the log moves past the noted position, so a
    signal posted or released meanwhile wakes it at once and none is missed. A slot stays taken until
    `release` (its outcome recorded)."""

    def __init__(
        self,
        options: WorkerOptions,
        service: BlackboardService,
        queries: BlackboardQueries,
        store: EventStore,
        notifier: LogNotifier,
        agents: Callable[[str], AgentDefinition | None],
        everyone: Callable[[], list[AgentProfile]],
        threshold: float,
        token: str,
        start: Callable[[AgentDefinition, AgentSignal], None],
    ) -> None:
        self._options, self._service, self._queries = options, service, queries
        self._store, self._notifier = store, notifier
        self._agents, self._others, self._threshold = agents, everyone, threshold
        self._token, self._start = token, start
        self._slots = 1 if options.once else options.concurrency
        self._active: dict[str, AgentSignal] = {}  # claimed and not yet recorded
        self.stopping = threading.Event()
        self.freed = threading.Event()  # a slot was freed (or the worker was told to stop)
        self._next_sweep = 0.0

    @property
    def running(self) -> int:
        return len(self._active)

    def running_signals(self) -> list[tuple[str, str]]:
        """(signal id, board) of each claim not yet recorded: what the beat says this worker runs."""
        return [(s.signal_id, s.blackboard_id) for s in list(self._active.values())]

    def stop(self) -> None:
        self.stopping.set()
        self.freed.set()

    def release(self, signal_ids: Iterable[str]) -> None:
        for signal_id in signal_ids:
            self._active.pop(signal_id, None)
        self.freed.set()

    def definition(
        self,
    ) -> AgentDefinition:  # as its file says now: a changed file counts from the next round
        agent = self._agents(self._options.agent)
        if agent is None:
            raise AgentNotFound(self._options.agent)
        return agent

    def run(self) -> None:
        outage = 0
        while not self.stopping.is_set():
            self.freed.clear()  # before looking: a slot freed from here on wakes the waits below
            if self._slots - len(self._active) <= 0:  # busy: nothing to claim until a slot frees
                self.freed.wait(max(0.0, self._next_sweep - time.monotonic()))
                if self.freed.is_set():
                    continue
            try:
                # before looking, so nothing posted from now on is missed; the notifier usually knows it
                position = self._notifier.seen()
                if position is None:
                    position = self._store.last_position()
                self._sweep_if_due()
                claimed = self._claim_what_fits()
            except StoreUnavailable as down:  # a restart or a network cut: wait, then carry on
                outage += 1
                logger.warning("database unavailable (%s); retrying", down)
                self.stopping.wait(min(5.0, 0.25 * 2**outage))
                continue
            outage = 0
            if self._options.once:  # at most one signal: the one just claimed, or none
                break
            if not claimed:
                self._sleep_until_something_happens(position, self._due_in())

    def _claim_what_fits(self) -> bool:
        """Claim what the claim policy picks for the free slots, one command per board; True if any was claimed."""
        free = self._slots - len(self._active)
        if free <= 0:
            return False
        agent, claimed_any = self.definition(), False
        plan = plan_claims(
            self._candidates(agent.profile, free),
            agent.profile,
            self._others,
            self._threshold,
            self._options.head_start,
            free,
            self._queries.scorer.profile,
        )
        if plan.wait:
            time.sleep(plan.wait)  # so that an agent fitting better gets there first
        for board in plan.claims:
            if free <= 0 or self.stopping.is_set():
                break
            claims = self._service.claim_signals(
                ClaimSignals(
                    blackboard_id=board.blackboard_id,
                    signal_ids=board.signal_ids,
                    agent_id=agent.name,
                    token=self._token,
                    limit=free,
                )
            )
            for signal_id, refused in claims.skipped.items():
                _log_skipped(agent, signal_id, refused)
            for claimed in claims.claimed:
                logger.info(
                    "claimed %s %s %r (score %.2f)",
                    claimed.signal_id,
                    claimed.signal_type,
                    claimed.payload.topic,
                    self._queries.scorer.profile(agent.profile, claimed).score(claimed),
                )
                self._active[claimed.signal_id] = claimed
                self._start(agent, claimed)
            free, claimed_any = free - len(claims.claimed), claimed_any or bool(claims.claimed)
        return claimed_any

    def _candidates(self, profile: AgentProfile, free: int) -> list[Candidate]:
        search, found = search_for(profile, self._threshold, free), []
        for capability in search.capabilities:  # a few of the oldest per capability
            # as the read model stands: appends fold into it as they commit, and a stale candidate costs
            # nothing (the claim decides on the board itself)
            query = GetOpenSignals(
                capabilities=(capability,),
                limit=search.limit,
                blackboard_id=self._options.blackboard_id,
                catch_up=False,
            )
            found.extend(self._queries.open_candidates(query))
        return found

    def _sweep_if_due(self) -> None:
        if time.monotonic() < self._next_sweep:
            return
        self._next_sweep = time.monotonic() + self._options.sweep_every
        for ended in self._service.expire_signals(ExpireSignals(blackboard_id=self._options.blackboard_id)):
            if ended.status.is_final:
                logger.info("expired %s: %s", ended.signal_id, ended.result.error if ended.result else "")
            else:  # its claim lapsed with attempts left: posted again (docs/control.md, "Retries")
                logger.info(
                    "%s will be retried (attempt %d): its claim lapsed", ended.signal_id, ended.attempt
                )

    def _due_in(self) -> float | None:
        """Seconds until the earliest signal posted for later that this worker may claim comes due (None:
        none waits), so a worker that claimed nothing wakes for it: nothing is appended when it comes due.
        One query per idle round, which is no more often than the worker looks at the log."""
        try:
            profile = self.definition().profile
            search = search_for(profile, self._threshold, 1)
            due = self._queries.next_due(
                GetOpenSignals(
                    capabilities=search.capabilities, limit=1, blackboard_id=self._options.blackboard_id
                )
            )
        except (StoreUnavailable, BlackboardError):
            return None
        if due is None:
            return None
        return max(0.0, (due - datetime.now(UTC)).total_seconds())

    def _sleep_until_something_happens(self, position: int, due_in: float | None = None) -> None:
        """Until the log moves past `position`, a slot frees, a sweep is due, a signal posted for later
        comes due (`due_in` seconds), or the worker is told to stop. The notifier knows when the log
        moves (a notification, or its own look at the log)."""
        until = self._next_sweep
        if due_in is not None:
            until = min(until, time.monotonic() + due_in)
        while not (self.stopping.is_set() or self.freed.is_set()):
            remaining = until - time.monotonic()
            if remaining <= 0 or self._notifier.wait(position, min(0.25, remaining)):
                return


def _log_skipped(agent: AgentDefinition, signal_id: str, refused: BlackboardError) -> None:
    # normal in a race: said at INFO only when a different agent took the signal
    other = isinstance(refused, AlreadyClaimed) and refused.claimed_by != agent.name
    logger.log(
        logging.INFO if other else logging.DEBUG,
        "%s %s",
        signal_id,
        f"went to {refused.claimed_by}" if isinstance(refused, AlreadyClaimed) else f"skipped: {refused}",
    )
