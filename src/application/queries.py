"""Read side: queries answered from the read model and the event log, never by replaying a board."""

from __future__ import annotations

import copy
import itertools
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from blackboard.application.authority import Authority
from blackboard.application.budgets import BoardBudget, board_budget
from blackboard.application.callers import Caller
from blackboard.application.commands import GetOpenSignals, GetSignalById, ListSignals, WatchSignals
from blackboard.application.ports import (
    AgentRegistry,
    Clock,
    EventStore,
    Look,
    Recorded,
    SignalFilter,
    SignalReadModel,
    SignalState,
)
from blackboard.application.presence import C, PresenceStore, fitting, unattended
from blackboard.application.projection import Projector
from blackboard.application.scoring import Scorer
from blackboard.domain.blackboard import BlackboardAggregate, deadline
from blackboard.domain.capabilities import Volunteer, rank
from blackboard.domain.errors import SignalNotFound
from blackboard.domain.events import AgentSignalApproved, AgentSignalCompleted
from blackboard.domain.presence import WorkerPresence
from blackboard.domain.signals import AgentSignal, Candidate, has_labels


@dataclass(frozen=True, slots=True)
class WatchResult:
    """Completions found, and the position to pass as `since` next time."""

    signals: list[AgentSignal]
    position: int
    # the log position of each signal's completion: `since` that sees the signals after this one
    completed_at: list[int] = field(default_factory=list)


class BlackboardQueries:
    def __init__(
        self,
        store: EventStore,
        read_model: SignalReadModel,
        registry: AgentRegistry,
        claim_threshold: float,
        clock: Clock | None = None,
        timeouts: tuple[timedelta | None, timedelta] | None = None,
        presence: PresenceStore | None = None,
        authority: Authority | None = None,
    ) -> None:
        self._authority = authority or Authority()  # a caller confined to a board reads no other (reach)
        self._store = store
        self._read_model = read_model
        self._registry = registry
        self._threshold = claim_threshold
        self._projector = Projector(store, read_model)
        self.scorer = Scorer(registry)  # agents as they score for one signal: declared, or by text for auto
        self._clock = clock
        self._timeouts = timeouts  # (post, claim): what `overdue` measures against (post None: off)
        self._presence = presence  # live workers: the deadline of a POSTED signal one fits is later

    def acting(self, caller: Caller) -> BlackboardQueries:
        """These queries for one caller, whoever the process is: an MCP session's."""
        clone = copy.copy(self)
        clone._authority = self._authority.acting(caller)
        return clone

    def reach(self, blackboard_id: str | None) -> str | None:
        """The board a read may reach (Authority.reach): for a confined caller, its own, and no other."""
        return self._authority.reach(blackboard_id)

    def overdue(self, signals: Iterable[AgentSignal]) -> dict[str, datetime]:
        """The deadline of each of `signals` that is past it now but not yet expired (the next command
        on it, or the next sweep, records the expiry), by the sweeper's rule (live workers included);
        {} without a clock and timeouts."""
        if self._clock is None:
            return {}
        now = self._clock.now()
        return {sid: due for sid, due in self.deadlines(signals, now).items() if now >= due}

    def deadlines(self, signals: Iterable[AgentSignal], now: datetime) -> dict[str, datetime]:
        """When each of `signals` that has a deadline runs out of time, by the board's rule (domain
        `deadline`): the earliest it can be while that is still to come at `now`; once it has come, with
        the live worker that fits it (one read of the live workers for all), which may put it later, as
        the command that finds it late decides. {} without timeouts."""
        if self._timeouts is None:
            return {}
        post, claim = self._timeouts
        signals = list(signals)
        due = {s.signal_id: d for s in signals if (d := deadline(s, post, claim)) is not None}
        late = [s for s in signals if s.signal_id in due and now >= due[s.signal_id]]
        if late and self._presence is not None:
            fits = fitting(late, self._presence.workers(), self.scorer, self._threshold)
            for s in late:
                due[s.signal_id] = deadline(s, post, claim, fits.get(s.signal_id)) or due[s.signal_id]
        return due

    def unattended(self, signals: Iterable[C]) -> list[C]:
        """Those of these claimable signals (or candidates) that no live worker fits now: each waits for a
        worker that fits (docs/control.md, "Work waits for its worker"). Without the live workers (no
        presence port) none is said to wait."""
        signals = list(signals)
        if not signals or self._presence is None or self._clock is None:
            return []
        return unattended(signals, self._presence.workers(), self.scorer, self._threshold, self._clock.now())

    def waiting_for_workers(self, signals: Iterable[AgentSignal]) -> set[str]:
        """The ids of those of `signals` that are claimable (POSTED, nothing to wait for, not a gate) and
        that no live worker fits now: what `show`, `signals` and `next` say wait for a worker that fits."""
        return {s.signal_id for s in self.unattended(s for s in signals if s.is_claimable)}

    def fitting_worker(self, signal: AgentSignal) -> WorkerPresence | None:
        """The live worker that would claim `signal` now, scored as its claim would be (None when no live
        worker fits it, it is not claimable, or this side knows no live workers)."""
        if self._presence is None or self._clock is None:
            return None
        now = self._clock.now()
        live = [w for w in self._presence.workers() if w.is_live(now)]
        return fitting([signal], live, self.scorer, self._threshold).get(signal.signal_id) if live else None

    def get_signal(self, query: GetSignalById) -> AgentSignal:
        self._projector.catch_up()
        signal = self._read_model.get(query.signal_id)
        if signal is not None and query.at is not None:  # a signal never changes board: replay that one
            signal = self._boards_at(query.at, signal.blackboard_id)[signal.blackboard_id].signals.get(
                query.signal_id
            )
        if signal is None:
            raise SignalNotFound(query.signal_id)
        self._authority.reach(signal.blackboard_id)  # another board's signal: refused to a confined caller
        return signal

    def signal_states(self, signal_ids: Sequence[str], seen: int | None = None) -> list[SignalState]:
        """The status, claim token and cancel reason of each of these signals that has a row (a row
        missing: a rebuild is under way), in one read of the rows, without `get_signal`'s catch-up: when
        the rows are folded up to `seen` (a log position the caller saw) they are caught up already.
        Rows behind it (a rebuild or an import under way) are caught up first, and read again."""
        position, states = self._read_model.states(signal_ids)
        if seen is not None and position < seen:
            self._projector.catch_up()
            position, states = self._read_model.states(signal_ids)
        return states

    def open_candidates(self, query: GetOpenSignals) -> list[Candidate]:
        """POSTED signals whose dependencies completed, targeting any of the capabilities, oldest
        first, as candidates: enough to choose which to claim."""
        if query.catch_up:
            self._projector.catch_up()
        now = self._clock.now() if self._clock is not None else None  # a signal posted for later waits
        return self._read_model.candidates(query.capabilities, query.limit, query.blackboard_id, now)

    def look(self, query: GetOpenSignals) -> Look:
        """`open_candidates`, with how far the rows read were folded and which boards are over budget
        (their signals left out): a worker's look, which it keeps as every claimable signal."""
        if query.catch_up:
            self._projector.catch_up()
        now = self._clock.now() if self._clock is not None else None
        return self._read_model.look(query.capabilities, query.limit, query.blackboard_id, now)

    def candidates_named(self, signal_ids: Sequence[str]) -> list[Candidate]:
        """The candidates of these signals as their rows stand (those with a row), text included: for a
        worker told of a signal targeting auto, whose text its notification leaves out."""
        return self._read_model.candidates_named(signal_ids)

    def next_due(self, query: GetOpenSignals, after: datetime | None = None) -> datetime | None:
        """When the earliest signal posted for later (`not_before`) among these comes due after `after`
        (default: now); None if none waits. What a worker with nothing to claim sleeps until, at the
        latest; `after`, the time it looked at the open signals, so one coming due since is not missed."""
        if self._clock is None:
            return None
        return self._read_model.next_due(query.capabilities, after or self._clock.now(), query.blackboard_id)

    def list_signals(self, query: ListSignals) -> list[AgentSignal]:
        query = query.model_copy(update={"blackboard_id": self.reach(query.blackboard_id)})
        self._projector.catch_up()
        criteria = SignalFilter(
            status=query.status,
            signal_type=query.signal_type,
            capabilities=((query.capability,) if query.capability else ()) + query.capabilities,
            blackboard_id=query.blackboard_id,
            limit=query.limit,
            labels=query.labels,
        )
        if query.at is None:
            return self._read_model.find(criteria)
        found = [
            s
            for board in self._boards_at(query.at, query.blackboard_id).values()
            for s in board.signals.values()
            if criteria.matches(s)
        ]
        found.sort(key=lambda s: (s.created_at, s.signal_id))  # the read model's order
        return found[: query.limit] if query.limit else found

    def board_at(self, blackboard_id: str, position: int) -> BlackboardAggregate:
        """The board as it was right after `position` (its signals and its budget then), replayed from the log."""
        board = str(self.reach(blackboard_id))
        return self._boards_at(position, board).get(board) or BlackboardAggregate(board)

    def _boards_at(
        self, position: int, blackboard_id: str | None = None
    ) -> defaultdict[str, BlackboardAggregate]:
        """Time travel: the boards (or one) as they were right after `position`, replayed from the log
        (its signal events: an entry key's events are in streams of their own). It reads the log up to
        there, so it costs in proportion to the log, not to what the answer holds."""
        boards: defaultdict[str, BlackboardAggregate] = defaultdict(lambda: BlackboardAggregate(""))
        after = 0
        while after < position and (page := self._store.read_all(after=after, limit=1000)):
            for record in page:
                event = record.event
                if record.position > position:
                    return boards
                if event.stream_id == event.blackboard_id and blackboard_id in (None, event.blackboard_id):
                    if event.blackboard_id not in boards:
                        boards[event.blackboard_id] = BlackboardAggregate(event.blackboard_id)
                    boards[event.blackboard_id].apply(event)
            after = page[-1].position
        return boards

    def watch(self, query: WatchSignals) -> WatchResult:
        """Signals of the given types that completed after position `since`, in completion order."""
        query = query.model_copy(update={"blackboard_id": self.reach(query.blackboard_id)})
        self._projector.catch_up()
        position, found, at = query.since, [], []
        while page := self._store.read_all(after=position, limit=1000):
            for record in page:
                if isinstance(
                    record.event, AgentSignalCompleted | AgentSignalApproved
                ):  # a gate completes so
                    signal = self._read_model.get(record.event.signal_id)
                    if (
                        signal
                        and signal.signal_type in query.signal_types
                        and (query.blackboard_id in (None, signal.blackboard_id))
                        and has_labels(signal, query.labels)
                    ):
                        found.append(signal)
                        at.append(record.position)
            position = page[-1].position
        return WatchResult(found, position, at)

    def events(
        self, since: int = 0, limit: int | None = None, blackboard_id: str | None = None
    ) -> list[Recorded]:
        """The log after position `since`, in order (only one board's, with `blackboard_id`), at most `limit`."""
        return list(itertools.islice(self.logged(since, blackboard_id), limit))

    def logged(self, since: int = 0, blackboard_id: str | None = None) -> Iterator[Recorded]:
        """The same, read 1000 events at a time as the caller goes: only one page is ever held, however
        long the log (`events --all` streams it)."""
        blackboard_id = self.reach(blackboard_id)
        position = since
        while page := self._store.read_all(after=position, limit=1000):
            yield from (r for r in page if blackboard_id in (None, r.event.blackboard_id))
            position = page[-1].position

    def budget(self, blackboard_id: str, lapsed_before: datetime | None = None) -> BoardBudget:
        """The board's budget, what its runs spent and what its open claims reserved (budgets.board_budget)."""
        return board_budget(self._read_model, str(self.reach(blackboard_id)), lapsed_before)

    def match(self, query: GetSignalById) -> list[Volunteer]:
        """Every registered agent ranked by its score for the signal; `passes` marks who may claim."""
        signal = self.get_signal(query)
        return rank(signal, self.scorer.profiles(signal), self._threshold)
