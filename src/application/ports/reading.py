"""The signal read model's port: the filters, counts and durations every query reads, and its fold."""

from __future__ import annotations

import abc
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING

from blackboard.application.ports.log import Recorded
from blackboard.application.usage import UsageTotal
from blackboard.domain.capabilities import (
    canonical_capability,
    targets_auto,
    targets_capability,
)
from blackboard.domain.flows import FlowCounts, counted, latest, newest_first
from blackboard.domain.limits import Budget, Spent
from blackboard.domain.signals import AgentSignal, Candidate, SignalStatus, has_labels

if TYPE_CHECKING:
    pass

# ---------------------------------------------------------------- reading


@dataclass(frozen=True, slots=True)
class SignalFilter:
    status: SignalStatus | None = None
    signal_type: str | None = None
    capabilities: tuple[str, ...] = ()
    blackboard_id: str | None = None
    claimable_only: bool = False
    limit: int | None = None
    urgent_first: bool = False  # ordered by priority (0 first), then oldest: the claim order's first key
    due_at: datetime | None = None  # with claimable_only: only signals whose not_before has come by then
    labels: tuple[str, ...] = ()  # only signals carrying every one of these

    def matches(self, signal: AgentSignal) -> bool:
        """Whether a signal meets every criterion that is set (what `SignalReadModel.find` selects)."""
        return (
            (self.status is None or signal.status is self.status)
            and (self.signal_type is None or signal.signal_type == self.signal_type)
            and (
                not self.capabilities
                or any(targets_capability(signal, canonical_capability(c)) for c in self.capabilities)
            )
            and (self.blackboard_id is None or signal.blackboard_id == self.blackboard_id)
            and (not self.claimable_only or signal.is_claimable)
            and (self.due_at is None or signal.due(self.due_at))
            and has_labels(signal, self.labels)
        )

    @classmethod
    def claimable(
        cls,
        capabilities: Sequence[str],
        limit: int,
        blackboard_id: str | None = None,
        due_at: datetime | None = None,
    ) -> SignalFilter:
        """POSTED signals with nothing left to wait for, targeting any of `capabilities`."""
        return cls(
            status=SignalStatus.POSTED,
            capabilities=tuple(capabilities),
            blackboard_id=blackboard_id,
            claimable_only=True,
            limit=limit,
            urgent_first=True,
            due_at=due_at,
        )


@dataclass(frozen=True, slots=True)
class BoardSignals:
    """What `status` tells of one board's signals."""

    blackboard_id: str
    by_status: dict[str, int]
    oldest_waiting: datetime | None  # when the oldest POSTED signal was posted
    workers: tuple[str, ...]  # agents holding a claim taken or renewed since `live_since`


@dataclass(frozen=True, slots=True)
class BoardStalls:
    """What `status` and /metrics tell of one board's stalled runs (docs/control.md, "Stalls"): how many
    attempts' runs stalled in all, and the signals they were of, the most recent first (at most STALLED_LISTED)."""

    blackboard_id: str
    stalls: int
    signals: tuple[str, ...]


STALLED_LISTED = 10  # stalled signals `status` names per board (the count is of them all)


@dataclass(frozen=True, slots=True)
class Durations:
    """One histogram's numbers for some signals of a board (and, for run times, of one status): how many
    took at most each bound, cumulative and in the bounds' order; how many in all; their seconds summed."""

    blackboard_id: str
    status: str | None  # the signals' status (run times); None: every status (claim waits)
    within: tuple[int, ...]
    count: int
    seconds: float


# What `durations` measures: from the post to the (current) claim, or from the claim to the end.
CLAIM_WAIT, RUN_TIME = "claim_wait", "run_time"


def span_seconds(start: datetime, end: datetime) -> float:
    """A claim wait's or a run time's seconds, as the histograms and the web view's charts count them: a
    negative span (the clocks of two processes disagree) counts as 0."""
    return max((end - start).total_seconds(), 0.0)


@dataclass(frozen=True, slots=True)
class Timed:
    """A signal's times, and what its runs cost, as the web view's charts read them (application/flow_charts.py):
    no more of it. `agent`: who its usage is counted to (as `usage_totals` counts it), None without usage."""

    status: SignalStatus
    created_at: datetime
    claimed_at: datetime | None
    completed_at: datetime | None
    agent: str | None = None
    usage: UsageTotal | None = None

    @classmethod
    def of(cls, signal: AgentSignal) -> Timed:
        usage = UsageTotal.of(signal.usage) if signal.usage is not None else None
        return cls(
            signal.status,
            signal.created_at,
            signal.claimed_at,
            signal.completed_at,
            str(signal.claimed_by) if usage is not None else None,
            usage,
        )

    @property
    def spent_at(self) -> datetime:
        """When its runs' cost counts as spent: when it ended, else (a failed attempt's run, the signal posted
        again for its retry) its last claim, else its post."""
        return self.completed_at or self.claimed_at or self.created_at


def usage_of(signals: Iterable[AgentSignal]) -> dict[str, dict[str, UsageTotal]]:
    """What runners' runs cost, per board and agent (who completed or failed the signal), from the signals
    themselves: the rule `usage_totals` keeps wherever the rows are."""
    totals: dict[str, dict[str, UsageTotal]] = {}
    for signal in signals:
        timed = Timed.of(signal)
        if timed.usage is None or timed.agent is None:
            continue
        agents = totals.setdefault(signal.blackboard_id, {})
        agents[timed.agent] = agents.get(timed.agent, UsageTotal()) + timed.usage
    return totals


@dataclass(frozen=True, slots=True)
class SignalState:
    """What a worker watching the signals it runs reads of each (worker/cancels.py): no more."""

    signal_id: str
    status: SignalStatus
    claim_token: str | None
    error: str | None  # a CANCELLED signal's reason (its result's error); else None
    nudges: int = (
        0  # how many nudges its runs were sent (a run takes those for its attempt: worker/nudges.py)
    )


@dataclass(frozen=True, slots=True)
class Look:
    """A worker's look at the claimable signals: the candidates, the position the rows were folded up to
    when they were read (a rebuild or an import under way leaves them behind the log), and the boards
    whose budget is reached, whose signals were left out (a claim of one is refused)."""

    candidates: tuple[Candidate, ...]
    folded: int
    stopped: frozenset[str] = frozenset()


class SignalReadModel(abc.ABC):
    """The query side: signals folded from the event log, and the position folded up to."""

    @abc.abstractmethod
    def get(self, signal_id: str) -> AgentSignal | None: ...

    def states(self, signal_ids: Sequence[str]) -> tuple[int, list[SignalState]]:
        """The position the rows are folded up to, and the state of each of these signals that has a
        row (in no particular order), read together. This default asks for each; a store reads them
        all in one statement."""
        position = self.position()  # first: the rows read after are at least as new
        found = [s for s in (self.get(sid) for sid in signal_ids) if s is not None]
        return position, [
            SignalState(
                s.signal_id,
                s.status,
                s.claim_token,
                s.result.error if s.status is SignalStatus.CANCELLED and s.result else None,
                s.nudges,
            )
            for s in found
        ]

    @abc.abstractmethod
    def find(self, criteria: SignalFilter) -> list[AgentSignal]:
        """Signals matching every given criterion, oldest first (created_at, then id); with
        `urgent_first`, by priority first."""

    def candidates(
        self,
        capabilities: Sequence[str],
        limit: int,
        blackboard_id: str | None = None,
        due_at: datetime | None = None,
    ) -> list[Candidate]:
        """Claimable signals (POSTED, nothing to wait for) that target any of `capabilities`, the most
        urgent first, then the oldest: what `find` gives with `claimable_only` and `urgent_first`, but
        only what choosing one needs (a worker reads many per round and claims only some)."""
        criteria = SignalFilter.claimable(capabilities, limit, blackboard_id, due_at)
        if stopped := self._over_budget():  # left out: their signals wait, and crowd out no other board's
            criteria = replace(criteria, limit=None)
            found = [s for s in self.find(criteria) if s.blackboard_id not in stopped][:limit]
        else:
            found = self.find(criteria)
        return [_candidate(s) for s in found]

    def look(
        self,
        capabilities: Sequence[str],
        limit: int,
        blackboard_id: str | None = None,
        due_at: datetime | None = None,
    ) -> Look:
        """`candidates`, with the position the rows were folded up to when they were read and the boards
        whose budget is reached (their signals left out): a worker's look, which counts as every
        claimable signal only as of what the rows had folded. This default reads the position first (the
        rows read after are at least as new); a store reads them in one statement."""
        position = self.position()
        found = self.candidates(capabilities, limit, blackboard_id, due_at)
        return Look(tuple(found), position, frozenset(self._over_budget()))

    def candidates_named(self, signal_ids: Sequence[str]) -> list[Candidate]:
        """The candidate of each of these signals that has a row (whatever its status), its text read
        for one targeting auto: what a notification told of a signal, less its text. This default asks
        for each; a store reads them in one statement."""
        found = [s for s in (self.get(sid) for sid in signal_ids) if s is not None]
        return [_candidate(s) for s in found]

    def next_due(
        self, capabilities: Sequence[str], after: datetime, blackboard_id: str | None = None
    ) -> datetime | None:
        """The earliest `not_before` later than `after` among the POSTED signals with nothing to wait for
        that target any of `capabilities`: when a worker of them must look again though nothing is
        appended meanwhile (None: no such signal). This default reads them all; a store asks for the MIN."""
        found = self.find(
            SignalFilter(
                status=SignalStatus.POSTED,
                capabilities=tuple(capabilities),
                blackboard_id=blackboard_id,
                claimable_only=True,
            )
        )
        return min(
            (s.not_before for s in found if s.not_before is not None and s.not_before > after), default=None
        )

    def board_of(self, signal_id: str) -> str | None:
        """The board the signal is on (None if unknown): all a command needs to find it."""
        signal = self.get(signal_id)
        return signal.blackboard_id if signal else None

    def live_boards(self, blackboard_id: str | None = None) -> list[str]:
        """The boards holding a POSTED or CLAIMED signal (what an expiry sweep must look at)."""
        return list(
            dict.fromkeys(
                s.blackboard_id
                for status in (SignalStatus.POSTED, SignalStatus.CLAIMED)
                for s in self.find(SignalFilter(status=status, blackboard_id=blackboard_id))
            )
        )

    def count_by_status(self, blackboard_id: str) -> dict[str, int]:
        """How many of the board's signals are in each status (statuses with none left out)."""
        counts: dict[str, int] = {}
        for signal in self.find(SignalFilter(blackboard_id=blackboard_id)):
            counts[str(signal.status)] = counts.get(str(signal.status), 0) + 1
        return counts

    def open_gates(self, blackboard_id: str | None = None) -> list[AgentSignal]:
        """The gates a person may decide now (POSTED, nothing to wait for), on every board or on one,
        oldest first: what `status` and the web view list. This default reads the POSTED signals; a store
        asks for the gates alone."""
        found = self.find(SignalFilter(status=SignalStatus.POSTED, blackboard_id=blackboard_id))
        return [s for s in found if s.is_open_gate]

    def flow_signals(self, blackboard_id: str, flow_id: str) -> list[AgentSignal]:
        """Every signal of a flow (its steps and their retries), oldest first; [] for no such flow. This
        default reads the board's signals; a store reads the flow's alone."""
        return [s for s in self.find(SignalFilter(blackboard_id=blackboard_id)) if s.flow_id == flow_id]

    def flow_counts(self, blackboard_id: str | None = None) -> list[FlowCounts]:
        """Each flow of every board (or of the one named): its steps counted by the status each stands at
        (a step retried stands at its latest signal's), and when it was started; by board, newest flow
        first. This default reads every signal; a store counts where the rows are."""
        by_flow: dict[tuple[str, str], list[AgentSignal]] = {}
        for s in self.find(SignalFilter(blackboard_id=blackboard_id)):
            if s.flow_id is not None:
                by_flow.setdefault((s.blackboard_id, s.flow_id), []).append(s)
        found = [
            FlowCounts(
                board, flow, counted(s.status for s in latest(signals)), min(s.created_at for s in signals)
            )
            for (board, flow), signals in by_flow.items()
        ]
        return newest_first(found)

    def board_statuses(
        self, live_since: datetime, blackboard_id: str | None = None, labels: Sequence[str] = ()
    ) -> list[BoardSignals]:
        """Each board's (or one board's) signal counts, in board order; with `labels`, of the signals
        carrying every one of them. This default reads every signal; a store counts where the rows are."""
        boards: dict[str, list[AgentSignal]] = {}
        for signal in self.find(SignalFilter(blackboard_id=blackboard_id, labels=tuple(labels))):
            boards.setdefault(signal.blackboard_id, []).append(signal)
        return [
            BoardSignals(
                board,
                {
                    str(st): sum(s.status is st for s in found)
                    for st in SignalStatus
                    if any(s.status is st for s in found)
                },
                min((s.created_at for s in found if s.status is SignalStatus.POSTED), default=None),
                tuple(
                    sorted(
                        {
                            str(s.claimed_by)
                            for s in found
                            if s.status is SignalStatus.CLAIMED
                            and s.lease_started is not None
                            and s.lease_started >= live_since
                        }
                    )
                ),
            )
            for board, found in sorted(boards.items())
        ]

    def _over_budget(self) -> set[str]:
        budgets = self.budgets()
        if not budgets:
            return set()
        usage = self.usage_totals()
        spent = {
            board: Spent(
                sum(t.cost_usd for t in by_agent.values()),
                sum(t.input_tokens + t.output_tokens for t in by_agent.values()),
            )
            for board, by_agent in usage.items()
        }
        return {board for board, b in budgets.items() if b.reached(spent.get(board, Spent()))}

    def stalls(self, blackboard_id: str | None = None) -> dict[str, BoardStalls]:
        """Each board's (or the named board's) stalled runs, boards with none left out. This default reads
        every signal; a store counts where the rows are."""
        by_board: dict[str, list[AgentSignal]] = {}
        for signal in self.find(SignalFilter(blackboard_id=blackboard_id)):
            if signal.stalls:
                by_board.setdefault(signal.blackboard_id, []).append(signal)
        return {
            board: BoardStalls(
                board,
                sum(len(s.stalls) for s in found),
                tuple(
                    s.signal_id
                    for s in sorted(found, key=lambda s: (s.created_at, s.signal_id), reverse=True)
                )[:STALLED_LISTED],
            )
            for board, found in sorted(by_board.items())
        }

    def budgets(self, blackboard_id: str | None = None) -> dict[str, Budget]:
        """Each board's budget (`blackboard budget`), or the named board's; boards without one left out.
        This default knows of none; a store reads where its budgets are kept."""
        return {}

    def reserved(
        self, blackboard_id: str | None = None, lapsed_before: datetime | None = None
    ) -> dict[str, Spent]:
        """What the open claims of each board (or the one named) reserved of its budget (domain/reservations.py),
        boards whose claims reserved nothing left out; a claim taken or renewed no later than `lapsed_before`
        has lapsed and counts no more. This default reads the CLAIMED signals; a store sums where the rows are."""
        found: dict[str, Spent] = {}
        for s in self.find(SignalFilter(status=SignalStatus.CLAIMED, blackboard_id=blackboard_id)):
            if s.reserved is None or (
                lapsed_before is not None and (s.lease_started is None or s.lease_started <= lapsed_before)
            ):
                continue
            found[s.blackboard_id] = found.get(s.blackboard_id, Spent()) + Spent.reserved_by(s.reserved)
        return found

    def claimed_under(self, lapsed_before: datetime | None = None) -> dict[str, int]:
        """How many signals are claimed under each concurrency key now, on every board, as a claim counts
        them (domain/limits.py): keys with none left out; a claim taken or renewed no later than
        `lapsed_before` has lapsed and counts no more. This default reads the CLAIMED signals; a store
        counts where the rows are."""
        found: dict[str, int] = {}
        for s in self.find(SignalFilter(status=SignalStatus.CLAIMED)):
            if s.concurrency_key is None or (
                lapsed_before is not None and (s.lease_started is None or s.lease_started <= lapsed_before)
            ):
                continue
            found[s.concurrency_key] = found.get(s.concurrency_key, 0) + 1
        return found

    def usage_totals(self, blackboard_id: str | None = None) -> dict[str, dict[str, UsageTotal]]:
        """What runners' runs cost, per board and agent (who completed or failed the signal): board ->
        agent -> total, for every board (or the one named) where a run was recorded. This default reads
        every signal; a store totals where the rows are."""
        return usage_of(self.find(SignalFilter(blackboard_id=blackboard_id)))

    def timeline(self, blackboard_id: str, since: datetime) -> list[Timed]:
        """The board's signals posted, claimed or ended at `since` or later, each as its times and what its runs
        cost (the web view's charts). This default reads every signal; a store reads those columns alone."""
        return [
            Timed.of(s)
            for s in self.find(SignalFilter(blackboard_id=blackboard_id))
            if any(t is not None and t >= since for t in (s.created_at, s.claimed_at, s.completed_at))
        ]

    def durations(self, kind: str, bounds: Sequence[float]) -> list[Durations]:
        """Per board, how long its signals took (the web view's /metrics histograms), as the rows hold
        them now: CLAIM_WAIT from the post to the claim, of every signal with a claim (a retried one: its
        current claim); RUN_TIME from the claim to the end, of every ended signal that was claimed, per
        status. A negative span (the clocks of two processes disagree) counts as 0. This default reads
        every signal; a store totals where the rows are."""
        groups: dict[tuple[str, str | None], list[float]] = {}
        for s in self.find(SignalFilter()):
            if s.claimed_at is None:
                continue
            if kind == CLAIM_WAIT:
                groups.setdefault((s.blackboard_id, None), []).append(
                    span_seconds(s.created_at, s.claimed_at)
                )
            elif s.completed_at is not None:
                seconds = span_seconds(s.claimed_at, s.completed_at)
                groups.setdefault((s.blackboard_id, str(s.status)), []).append(seconds)
        return [
            Durations(board, status, tuple(sum(x <= b for x in xs) for b in bounds), len(xs), sum(xs))
            for (board, status), xs in sorted(groups.items(), key=lambda item: (item[0][0], item[0][1] or ""))
        ]

    @abc.abstractmethod
    def position(self) -> int:
        """The global position of the last event folded in."""

    @abc.abstractmethod
    def apply(self, records: Iterable[Recorded], flat: bool = False) -> None:
        """Fold events in position order; records at or below `position()` are ignored. `flat`: keep
        no more in memory than the records need, even from empty (a rebuild may keep every signal)."""

    @abc.abstractmethod
    def reset(self) -> None:
        """Forget everything, back to position 0 (the start of a rebuild)."""


# ---------------------------------------------------------------- reading


def _candidate(signal: AgentSignal) -> Candidate:
    """What choosing a signal needs of it: its text only where it targets auto (scored by text)."""
    return Candidate(
        signal.signal_id,
        signal.blackboard_id,
        signal.target_capabilities,
        signal.created_at,
        signal.text if targets_auto(signal) else "",
        signal.priority,
    )
