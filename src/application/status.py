"""The overview of the store (`blackboard status`): per board, its signals by status, how long its
oldest waiting signal has waited, its open conflicts and the workers live on it. Counted by the read
models where the rows are (never a replay), so it costs the same on a log of any length.

Live workers are the ones that announced themselves (application/presence.py) and still beat: each
with what it runs. An agent holding a claim taken or renewed within the claim timeout counts as working
on its board too (a claim by hand, or a worker started before workers beat)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from blackboard.application.budgets import spent_of
from blackboard.application.commands import ListSignals
from blackboard.application.knowledge.ports import EntryReadModel
from blackboard.application.knowledge.queries import BoardNotFound
from blackboard.application.ports import Clock, Durations, SignalFilter, SignalReadModel
from blackboard.application.presence import PresenceStore, unattended
from blackboard.application.projection import Projector
from blackboard.application.scoring import Scorer
from blackboard.application.usage import UsageTotal, total
from blackboard.domain.capabilities import DEFAULT_THRESHOLD
from blackboard.domain.flows import FlowCounts
from blackboard.domain.limits import Budget, Spent
from blackboard.domain.presence import WorkerPresence
from blackboard.domain.signals import AgentSignal, SignalStatus, has_labels

WAITING_READ = 1000  # claimable signals `status` reads to say which wait for a worker that fits
ENDED_FLOWS = 3  # flows that ended which a board's status still lists (every running one is listed)


@dataclass(frozen=True, slots=True)
class BoardStatus:
    blackboard_id: str
    signals: dict[str, int]  # by status, statuses with none left out
    oldest_waiting: datetime | None  # when the oldest POSTED signal was posted
    waiting_seconds: float | None  # and how long ago that was
    entries: int
    open_conflicts: int  # keys in conflict
    live_workers: tuple[str, ...]  # agents of the live workers serving it, and of its live claims
    workers: tuple[WorkerPresence, ...] = ()  # the live workers serving it
    usage: dict[str, UsageTotal] = field(default_factory=dict)  # what runners' runs cost, per agent
    open_gates: tuple[AgentSignal, ...] = ()  # gates a person may decide now (approve, reject), oldest first
    budget: Budget = field(default_factory=Budget)  # `blackboard budget`: its signals wait once reached
    reserved: Spent = field(
        default_factory=Spent
    )  # what its open claims reserved of it, until their runs end
    # claimable signals no live worker fits, by what they target (`RESEARCH` -> how many): each waits for a
    # worker that fits (the first WAITING_READ claimable signals of the store, most urgent first, are read)
    waiting_for_workers: dict[str, int] = field(default_factory=dict)
    # its flows with a step still open, and the last ENDED_FLOWS that ended, newest first
    flows: tuple[FlowCounts, ...] = ()
    flow_states: dict[str, int] = field(
        default_factory=dict
    )  # all its flows, by state (`running` -> how many)
    stalls: int = 0  # attempts whose run stalled, in all (docs/control.md, "Stalls")
    stalled: tuple[str, ...] = ()  # the signals they were of, the most recent first (at most STALLED_LISTED)
    # POSTED signals a rate limit holds (their best agent's window has no room now), by key
    rate_limited: dict[str, int] = field(default_factory=dict)

    @property
    def usage_total(self) -> UsageTotal:
        return total(self.usage.values())

    @property
    def over_budget(self) -> str | None:
        """Why its signals wait for a higher budget (None: they do not)."""
        return self.budget.reached(spent_of(self.usage))

    @property
    def fully_reserved(self) -> str | None:
        """Why claims of runs that reserve wait for room (what was spent and reserved has reached the
        budget), when the budget itself is not reached (None: there is room)."""
        committed, budget = spent_of(self.usage) + self.reserved, self.budget
        if self.over_budget is not None:
            return None
        if budget.usd is not None and committed.usd >= budget.usd:
            return f"fully reserved: ${committed.usd:.4f} of ${budget.usd:g} spent or reserved"
        if budget.tokens is not None and committed.tokens >= budget.tokens:
            return f"fully reserved: {committed.tokens:,} of {budget.tokens:,} tokens spent or reserved"
        return None


@dataclass(frozen=True, slots=True)
class LiveFleet:
    """The live workers as the board sees them at `at` (the clock's now), and the signals they run now, by
    id, as the read model holds them: each still CLAIMED (one that ended since its worker's last beat is not
    here, so it leaves the worker's row before the next beat says so)."""

    at: datetime
    workers: tuple[WorkerPresence, ...]
    claims: dict[str, AgentSignal]

    def runs(self, worker: WorkerPresence) -> list[tuple[AgentSignal, datetime]]:
        """What `worker` runs now, in the order it said: the signals of its `running` still claimed, each
        with when it was claimed."""
        found = [self.claims[sid] for sid, _ in worker.running if sid in self.claims]
        return [(s, s.claimed_at) for s in found if s.claimed_at is not None]


def _shown(flows: list[FlowCounts]) -> tuple[FlowCounts, ...]:
    """Of a board's flows (newest first), those running and the last ENDED_FLOWS that ended."""
    ended = [f for f in flows if f.state != "running"][:ENDED_FLOWS]
    return tuple(f for f in flows if f.state == "running" or f in ended)


class StatusQueries:
    def __init__(
        self,
        signals: SignalReadModel,
        entries: EntryReadModel,
        projector: Projector,
        clock: Clock,
        claim_timeout: timedelta,
        presence: PresenceStore | None = None,
        scorer: Callable[[], Scorer] | None = None,
        claim_threshold: float = DEFAULT_THRESHOLD,
        rate_limited: Callable[[str | None], dict[str, dict[str, int]]] | None = None,
    ) -> None:
        """`scorer` (built only when a live worker may fit a signal) and `claim_threshold` judge which
        signals wait for a worker that fits, as a claim would."""
        self._signals = signals
        self._entries = entries
        self._projector = projector
        self._clock = clock
        self._claim_timeout = claim_timeout
        self._presence = presence
        self._scorer = scorer
        self._threshold = claim_threshold
        self._rate_limited = (
            rate_limited  # per board, the signals each rate limit holds (ranking.rate_limited)
        )

    def live_workers(
        self, blackboard_id: str | None = None, at: datetime | None = None
    ) -> list[WorkerPresence]:
        """Every worker that beats now (or at `at`; stopped and stale ones left out), by agent; with a board,
        those serving it (a worker that serves every board serves it)."""
        if self._presence is None:
            return []
        now = self._clock.now() if at is None else at
        return [
            w
            for w in self._presence.workers()
            if w.is_live(now) and (blackboard_id is None or w.serves(blackboard_id))
        ]

    def fleet(self, blackboard_id: str | None = None) -> LiveFleet:
        """The live workers (those serving the board named) and what each runs now (LiveFleet), read in one
        query of the claimed signals however many workers run something."""
        self._projector.catch_up()
        now = self._clock.now()
        workers = tuple(self.live_workers(blackboard_id, now))
        running = {sid for w in workers for sid, _ in w.running}
        claimed = self._signals.find(SignalFilter(status=SignalStatus.CLAIMED)) if running else []
        return LiveFleet(now, workers, {s.signal_id: s for s in claimed if s.signal_id in running})

    def overview(
        self, blackboard_id: str | None = None, catch_up: bool = True, labels: tuple[str, ...] = ()
    ) -> list[BoardStatus]:
        """Every board the store holds (or the one named: BoardNotFound if it holds none), in board order.
        `catch_up` False: the read model as it stands (a scrape that found an event it cannot read).
        `labels`: the boards holding a signal that carries every one of them, their signal counts, oldest
        waiting signal, claimers and open gates of those signals alone (the rest is the board's)."""
        labels = ListSignals(labels=labels).labels  # the rule of a label, said as everywhere
        if catch_up:
            self._projector.catch_up()
        now = self._clock.now()
        signals = {
            b.blackboard_id: b
            for b in self._signals.board_statuses(now - self._claim_timeout, blackboard_id, labels)
        }
        entries = self._entries.board_counts(blackboard_id)
        usage = self._signals.usage_totals(blackboard_id)
        stalls = self._signals.stalls(blackboard_id)  # the board's, whatever `labels` (as its usage)
        budgets = self._signals.budgets(blackboard_id)
        reserved = self._signals.reserved(blackboard_id, now - self._claim_timeout) if budgets else {}
        if (
            blackboard_id is not None
            and not signals
            and not entries
            and not (labels and self._signals.count_by_status(blackboard_id))  # a board, none labelled so
        ):
            raise BoardNotFound(blackboard_id)
        live = self.live_workers()
        unattended = self._unattended(blackboard_id, live)
        gates: dict[str, list[AgentSignal]] = {}
        for gate in self._signals.open_gates(blackboard_id):
            if has_labels(gate, labels):
                gates.setdefault(gate.blackboard_id, []).append(gate)
        rate_held = self._rate_limited(blackboard_id) if self._rate_limited is not None else {}
        flows: dict[str, list[FlowCounts]] = {}
        for flow in self._signals.flow_counts(blackboard_id):
            flows.setdefault(flow.blackboard_id, []).append(flow)
        boards = []
        for board in sorted(signals.keys() | (entries.keys() if not labels else set())):
            counted = signals.get(board)
            oldest = counted.oldest_waiting if counted else None
            held, conflicts = entries.get(board, (0, 0))
            serving = tuple(w for w in live if w.serves(board))
            boards.append(
                BoardStatus(
                    board,
                    dict(sorted(counted.by_status.items())) if counted else {},
                    oldest,
                    (now - oldest).total_seconds() if oldest else None,
                    held,
                    conflicts,
                    tuple(sorted({*(counted.workers if counted else ()), *(w.agent_id for w in serving)})),
                    serving,
                    usage.get(board, {}),
                    tuple(gates.get(board, ())),
                    budgets.get(board, Budget()),
                    reserved.get(board, Spent()),
                    unattended.get(board, {}),
                    _shown(flows.get(board, [])),
                    dict(Counter(f.state for f in flows.get(board, []))),
                    rate_limited=rate_held.get(board, {}),
                    stalls=stalls[board].stalls if board in stalls else 0,
                    stalled=stalls[board].signals if board in stalls else (),
                )
            )
        return boards

    def labelled_counts(self, labels: tuple[str, ...]) -> dict[str, dict[str, dict[str, int]]]:
        """For each label, each board's signals carrying it, counted by status (the read model as it stands:
        `overview` caught it up); a board with none left out."""
        live_since = self._clock.now() - self._claim_timeout
        return {
            label: {
                b.blackboard_id: b.by_status for b in self._signals.board_statuses(live_since, None, (label,))
            }
            for label in labels
        }

    def _unattended(self, blackboard_id: str | None, live: list[WorkerPresence]) -> dict[str, dict[str, int]]:
        """Per board, the claimable signals no live worker fits, counted by their targets (`RESEARCH`,
        `REVIEW, ANALYSIS`): the first WAITING_READ claimable signals, in claim order, are judged."""
        if self._presence is None:
            return {}
        found = self._signals.candidates((), WAITING_READ, blackboard_id)
        if found and live:  # scored as a claim is (by text for a signal targeting auto)
            if self._scorer is None:
                return {}
            found = unattended(found, live, self._scorer(), self._threshold, self._clock.now())
        counted: dict[str, dict[str, int]] = {}
        for candidate in found:
            targets = ", ".join(candidate.target_capabilities)
            by_target = counted.setdefault(candidate.blackboard_id, {})
            by_target[targets] = by_target.get(targets, 0) + 1
        return counted

    def durations(self, kind: str, bounds: tuple[float, ...]) -> list[Durations]:
        """How long signals waited for a claim (CLAIM_WAIT) or ran (RUN_TIME), per board, counted where
        the rows are (SignalReadModel.durations); read after `overview`, which caught up."""
        return self._signals.durations(kind, bounds)

    def require_board(self, blackboard_id: str | None) -> None:
        """BoardNotFound (exit 4) unless the store holds a signal or an entry of the board (None: no board named)."""
        if blackboard_id is None:
            return
        self._projector.catch_up()
        if not self._signals.count_by_status(blackboard_id) and not self._entries.board_counts(blackboard_id):
            raise BoardNotFound(blackboard_id)
