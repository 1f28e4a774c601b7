"""The claim loop: claim what the claim policy picks for the free slots, sweep now and then, sleep on the log."""

from __future__ import annotations

import logging
import math
import secrets
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from blackboard.application.claiming import Search, plan_claims, search_for
from blackboard.application.commands import ClaimSignals, ExpireSignals, GetOpenSignals
from blackboard.application.ports import EventStore, LogNews, LogNotifier, StoreUnavailable
from blackboard.application.queries import BlackboardQueries
from blackboard.application.service import BlackboardService
from blackboard.domain.capabilities import AgentProfile, canonical_capability, targets_auto
from blackboard.domain.errors import (
    AgentNotFound,
    AlreadyClaimed,
    BlackboardError,
    InvalidTransition,
    SignalNotClaimable,
)
from blackboard.domain.limits import BudgetReached
from blackboard.domain.rates import RateLimited
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
        start: Callable[[AgentDefinition, AgentSignal], None],
        worker_id: str | None = None,
        runner_of: Callable[[AgentDefinition], str | None] = lambda agent: None,
    ) -> None:
        """`worker_id`: the worker's public id, kept in its claims' metadata (no token: each claim draws its own).
        `runner_of`: the runner its claims of an agent are run with, which each claim records (None: a handler)."""
        self._worker_id = worker_id
        self._runner_of = runner_of
        self._options, self._service, self._queries = options, service, queries
        self._store, self._notifier = store, notifier
        self._agents, self._others, self._threshold = agents, everyone, threshold
        self._start = start
        self._slots = 1 if options.once else options.concurrency
        self._active: dict[str, AgentSignal] = {}  # claimed and not yet recorded
        self.stopping = threading.Event()
        self.freed = threading.Event()  # a slot was freed (or the worker was told to stop)
        self._next_sweep = 0.0
        self._view: _View | None = None  # what it knows is claimable without a query (`_known`)
        self._due: float | None = None  # when a signal posted for later comes due (`_due_by`)
        self._room_at: float | None = None  # when a rate limit that refused a claim has room again

    @property
    def running(self) -> int:
        return len(self._active)

    def running_signals(self) -> list[tuple[str, str]]:
        """(signal id, board) of each claim not yet recorded: what the beat says this worker runs."""
        return [(s.signal_id, s.blackboard_id) for s in list(self._active.values())]

    def active(self) -> dict[str, AgentSignal]:
        """Each claim not yet recorded, by signal, as it was claimed."""
        return dict(self._active)

    def claims(self) -> dict[str, str | None]:
        """The token of each claim not yet recorded, by signal: a claim's own, secret, never shown."""
        return {s.signal_id: s.claim_token for s in list(self._active.values())}

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
                swept = self._sweep_if_due()
                claimed = self._claim_what_fits(position, fresh=swept)
            except StoreUnavailable as down:  # a restart or a network cut: wait, then carry on
                outage += 1
                self._view = None
                logger.warning("database unavailable (%s); retrying", down)
                self.stopping.wait(min(5.0, 0.25 * 2**outage))
                continue
            outage = 0
            if self._options.once:  # at most one signal: the one just claimed, or none
                break
            if not claimed:
                due = self._due if self._due is not None else self._due_by()
                if self._room_at is not None:  # no event says a rate limit has room again: its time does
                    due = self._room_at if due is None else min(due, self._room_at)
                self._sleep_until_something_happens(position, due)

    def _claim_what_fits(self, position: int, fresh: bool = False) -> bool:
        """Claim what the claim policy picks for the free slots, one command per board; True if any was
        claimed. The candidates are what the worker knew at its last look plus what was posted since, as
        the log's notifications told it, less what they say was claimed (`_known`); else (or `fresh`: a
        sweep just changed the board) asked of the read model."""
        free, self._due, self._room_at = self._slots - len(self._active), None, None
        if free <= 0:
            return False
        agent, claimed_any = self.definition(), False
        search = search_for(agent.profile, self._threshold, free)
        strays = self._notifier.strays()  # before looking: one heard from now on sends the next round to look
        known = None if fresh else self._known(search, position, strays)
        if known is not None:
            found, stopped = known
            complete = True
        else:
            looked_at = datetime.now(UTC)
            found, stopped, complete = self._look(search, position)
            complete = complete and self._notifier.tells_news  # else (polling) it looks every round
            if complete:  # what it knows holds until the first signal posted for later comes due after
                # the look (one coming due while it looked ends it at once: no notification tells it)
                self._due = self._due_by(looked_at)
                complete = self._due is not None
        view = found if complete else None
        plan = plan_claims(
            list(found.values()),
            agent.profile,
            self._others,
            self._threshold,
            self._options.head_start,
            free,
            self._queries.scorer.profile,
            at_most=search.limit,  # the best few: what a round names stays bounded whatever the backlog
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
                    tokens={signal_id: new_token() for signal_id in board.signal_ids},
                    limit=free,
                    worker_id=self._worker_id,
                    runner=self._runner_of(agent),
                )
            )
            for signal_id, refused in claims.skipped.items():
                _log_skipped(agent, signal_id, refused)
                if isinstance(refused, RateLimited):  # try again once the window has room
                    room_at = time.monotonic() + refused.wait
                    self._room_at = room_at if self._room_at is None else min(self._room_at, room_at)
                if isinstance(refused, BudgetReached):  # the board's: none of its signals is claimed (nor
                    # one posted there taken from a notification) until a look says its budget allows
                    stopped = stopped | {board.blackboard_id}
                    if view is not None:
                        view.pop(signal_id, None)  # a look finds it again once the budget allows
                elif view is not None and isinstance(refused, SignalNotClaimable | InvalidTransition):
                    view.pop(signal_id, None)  # no longer open (taken, ended): for good
                else:  # refused by a rule that may change (a limit), or held by a racing claim
                    view = None
            for claimed in claims.claimed:
                logger.info(
                    "claimed %s %s %r (score %.2f)",
                    claimed.signal_id,
                    claimed.signal_type,
                    claimed.payload.topic,
                    self._queries.scorer.profile(agent.profile, claimed).score(claimed),
                )
                if view is not None:
                    view.pop(claimed.signal_id, None)
                self._active[claimed.signal_id] = claimed
                self._start(agent, claimed)
            free, claimed_any = free - len(claims.claimed), claimed_any or bool(claims.claimed)
        self._view = (
            None
            if view is None
            else _View(position, search.capabilities, view, self._due or 0.0, stopped, strays)
        )
        return claimed_any

    def _known(
        self, search: Search, position: int, strays: int
    ) -> tuple[dict[str, Candidate], frozenset[str]] | None:
        """Every claimable signal this worker may want as of `position`, without a query: what its last
        complete look found and left open, plus what the log's notifications say was posted since, less
        what they say was claimed; and the boards it knows refuse claims (their budget reached). None
        when it cannot tell: no complete look, other capabilities now, a signal posted for later came
        due, a notification not the log's was heard (`strays` moved), an append since did more than
        post and claim (or went unheard), or more was posted than a look keeps."""
        view = self._view
        if (
            view is None
            or view.capabilities != search.capabilities
            or time.monotonic() >= view.until
            or strays != view.strays
        ):
            return None
        news = self._notifier.news(view.position, position)
        if news is None:
            return None
        found = self._told(dict(view.candidates), news, search, view.stopped)
        if found is None:
            return None
        self._due = view.until
        return found, view.stopped

    def _told(
        self, found: dict[str, Candidate], news: LogNews, search: Search, stopped: frozenset[str]
    ) -> dict[str, Candidate] | None:
        """`found` with what `news` posted that this worker may want (as the read model would answer: of
        its capabilities, its board, and no board over budget) and less what it claimed; None past what
        a look keeps (`search.limit` a capability: a backlog is queried, the best first), or when a
        signal targeting auto, whose text the notification leaves out, has no row to read it from yet."""
        wanted = {canonical_capability(c) for c in search.capabilities}
        board, most = self._options.blackboard_id, search.limit * len(search.capabilities)
        textless = []
        for candidate in news.posted:
            if candidate.blackboard_id in stopped or (board is not None and candidate.blackboard_id != board):
                continue
            if not any(canonical_capability(t) in wanted for t in candidate.target_capabilities):
                continue
            found[candidate.signal_id] = candidate
            if targets_auto(candidate):  # scored by its text: read from its row below
                textless.append(candidate.signal_id)
            if len(found) > most + len(news.taken):  # more than the claims below could bring under it
                return None
        for signal_id in news.taken:  # claimed since (by this worker or another): no longer open
            found.pop(signal_id, None)
        if len(found) > most:
            return None
        textless = [signal_id for signal_id in textless if signal_id in found]
        if textless:  # one statement for them all, by id
            rows = self._queries.candidates_named(textless)
            if len(rows) < len(textless):  # not folded yet (a bare append, an import): the look tells
                return None
            found.update((row.signal_id, row) for row in rows)
        return found

    def _look(self, search: Search, position: int) -> tuple[dict[str, Candidate], frozenset[str], bool]:
        """A few of the most urgent open signals per capability, the boards over budget (left out), and
        whether that is every claimable signal as of `position`: each query found fewer than its limit,
        and the rows it read were folded up to `position` (else the notifications past how far they were
        tell what they missed: a rebuild or an import under way leaves them behind the log)."""
        found: dict[str, Candidate] = {}
        stopped: frozenset[str] = frozenset()
        complete, folded = True, position
        for capability in search.capabilities:  # a few of the oldest per capability
            # as the read model stands: appends fold into it as they commit, and a stale candidate costs
            # nothing (the claim decides on the board itself)
            query = GetOpenSignals(
                capabilities=(capability,),
                limit=search.limit,
                blackboard_id=self._options.blackboard_id,
                catch_up=False,
            )
            look = self._queries.look(query)
            complete = complete and len(look.candidates) < search.limit
            folded, stopped = min(folded, look.folded), stopped | look.stopped
            for candidate in look.candidates:
                found.setdefault(candidate.signal_id, candidate)
        if complete and folded < position:
            news = self._notifier.news(folded, position)
            told = None if news is None else self._told(found, news, search, stopped)
            if told is None:
                complete = False
            else:
                found = told
        return found, stopped, complete

    def _sweep_if_due(self) -> bool:
        """Sweep expired signals when it is time; True if it swept."""
        if time.monotonic() < self._next_sweep:
            return False
        self._next_sweep = time.monotonic() + self._options.sweep_every
        for ended in self._service.expire_signals(ExpireSignals(blackboard_id=self._options.blackboard_id)):
            if ended.status.is_final:
                logger.info("expired %s: %s", ended.signal_id, ended.result.error if ended.result else "")
            else:  # its claim lapsed with attempts left: posted again (docs/control.md, "Retries")
                logger.info(
                    "%s will be retried (attempt %d): its claim lapsed", ended.signal_id, ended.attempt
                )
        return True

    def _due_by(self, after: datetime | None = None) -> float | None:
        """The moment (time.monotonic) the earliest signal posted for later that this worker may claim
        comes due after `after` (default: now), math.inf when none waits, None when it could not tell; so
        a worker that claimed nothing wakes for it: nothing is appended when it comes due. One query per
        idle round, which is no more often than the worker looks at the log."""
        started, now = time.monotonic(), datetime.now(UTC)
        try:
            profile = self.definition().profile
            search = search_for(profile, self._threshold, 1)
            due = self._queries.next_due(
                GetOpenSignals(
                    capabilities=search.capabilities, limit=1, blackboard_id=self._options.blackboard_id
                ),
                after,
            )
        except (StoreUnavailable, BlackboardError):
            return None
        if due is None:
            return math.inf
        return started + max(0.0, (due - now).total_seconds())

    def _sleep_until_something_happens(self, position: int, due: float | None = None) -> None:
        """Until the log moves past `position`, a slot frees, a sweep is due, a signal posted for later
        comes due (at `due`, time.monotonic), or the worker is told to stop. The notifier knows when the
        log moves (a notification, or its own look at the log)."""
        until = self._next_sweep if due is None else min(self._next_sweep, due)
        while not (self.stopping.is_set() or self.freed.is_set()):
            remaining = until - time.monotonic()
            if remaining <= 0 or self._notifier.wait(position, min(0.25, remaining)):
                return


@dataclass(frozen=True, slots=True)
class _View:
    """What a worker knows is claimable for it as of a log position (a look that found every one, less
    what it took or found gone since), until a signal posted for later comes due (time.monotonic).
    At most `Search.limit` a capability: past that, it looks again."""

    position: int
    capabilities: tuple[str, ...]
    candidates: dict[str, Candidate]
    until: float
    stopped: frozenset[str] = frozenset()  # boards refusing claims (budget reached) as of the look
    strays: int = 0  # notifications not the log's heard before the look (LogNotifier.strays)


def new_token() -> str:
    """A claim's token: its proof, secret, a fresh one for every claim (a run holds only its own). Hex, so
    it never starts with '-' (`--token TOKEN` on a command line would read it as an option)."""
    return secrets.token_hex(24)


def _log_skipped(agent: AgentDefinition, signal_id: str, refused: BlackboardError) -> None:
    # normal in a race: said at INFO only when a different agent took the signal
    other = isinstance(refused, AlreadyClaimed) and refused.claimed_by != agent.name
    logger.log(
        logging.INFO if other else logging.DEBUG,
        "%s %s",
        signal_id,
        f"went to {refused.claimed_by}" if isinstance(refused, AlreadyClaimed) else f"skipped: {refused}",
    )
