"""Ports: what the application needs from the outside world, stated as contracts adapters keep."""

from __future__ import annotations

import abc
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from enum import Enum
from typing import TYPE_CHECKING, Any

from blackboard.application.errors import ConcurrencyConflict, StoreUnavailable  # noqa: F401 - the errors of these ports
from blackboard.application.loading import load_scope
from blackboard.application.usage import UsageTotal
from blackboard.domain.blackboard import BlackboardAggregate
from blackboard.domain.capabilities import (
    AgentProfile,
    canonical_capability,
    targets_auto,
    targets_capability,
)
from blackboard.domain.errors import InvalidInput
from blackboard.domain.events import BlackboardEvent
from blackboard.domain.flows import FlowCounts, counted, latest, newest_first
from blackboard.domain.limits import Budget, Limits, Spent
from blackboard.domain.signals import AgentSignal, Candidate, SignalStatus, has_labels

if TYPE_CHECKING:
    from blackboard.application.knowledge.ports import EntryTransaction


@dataclass(frozen=True, slots=True)
class Recorded:
    """An event as stored: its global position (commit order) and when it was recorded."""

    position: int
    event: BlackboardEvent
    recorded_at: datetime
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """An event exactly as the log keeps it: its data in the schema version it was written in (not
    upcast), its metadata and both times. What an export carries and an import puts back, so a
    round trip loses nothing."""

    position: int
    event_id: str
    stream_id: str  # the board's, or an entry key's (`<board>\x1f<key>`)
    version: int
    event_type: str
    schema_version: int
    data: Mapping[str, Any]
    metadata: Mapping[str, Any]
    occurred_at: datetime
    recorded_at: datetime


class EventStore(abc.ABC):
    """Append-only log of blackboard events, one stream per blackboard. Commands write through a
    `UnitOfWork`; `append` on its own is for tools that bring events of their own (imports, tests)."""

    @abc.abstractmethod
    def append(
        self,
        blackboard_id: str,
        expected_version: int,
        events: Sequence[BlackboardEvent],
        metadata: Mapping[str, Any] | None = None,
    ) -> list[Recorded]:
        """Store all of `events` or none of them.

        The board must be at `expected_version` and the events must carry the versions after it;
        otherwise raise ConcurrencyConflict and store nothing. Appending events whose ids are all
        stored already is a no-op that returns []. `metadata` (actor, correlation and causation
        ids) is kept with every event. Returns the stored events with their global positions.
        Raises StoreUnavailable when the store cannot be reached.
        """

    @abc.abstractmethod
    def load(self, blackboard_id: str, after_version: int = 0) -> list[BlackboardEvent]:
        """The board's events with a version above `after_version`, in version order ([] if none)."""

    @abc.abstractmethod
    def read_all(self, after: int = 0, limit: int | None = None) -> list[Recorded]:
        """Events of every board with a position above `after`, in position order, never skipping one."""

    @abc.abstractmethod
    def last_position(self) -> int:
        """The highest stored position (0 when empty)."""

    def posted_with(self, correlation_id: str, blackboard_id: str | None = None) -> list[tuple[str, str]]:
        """(board, signal id) of every signal posted with this correlation id (on that board, or on any),
        in posting order: what `cancel --correlation-id` ends. This default reads the whole log; a
        store searches where the rows are."""
        return [
            (r.event.blackboard_id, r.event.signal_id)
            for r in self.read_all()
            if r.event.event_type == "AgentSignalPosted"
            and r.metadata.get("correlation_id") == correlation_id
            and (blackboard_id is None or r.event.blackboard_id == blackboard_id)
        ]

    def completion_of(self, blackboard_id: str, signal_id: str) -> BlackboardEvent | None:
        """The AgentSignalCompleted of the signal on that board (a signal completes at most once), or None.
        This default reads the board's whole stream; a store reads that one event."""
        return next(
            (
                e
                for e in reversed(self.load(blackboard_id))
                if e.event_type == "AgentSignalCompleted" and e.signal_id == signal_id
            ),
            None,
        )

    def board_events(self, blackboard_id: str) -> list[StoredEvent]:
        """Every event of the board's stream and of its entry streams, as stored, in position order
        ([] when the store does not hold the board). What `export` writes."""
        raise NotImplementedError(f"{type(self).__name__} does not export")

    def stream_board_events(self, blackboard_id: str) -> Iterator[StoredEvent]:
        """`board_events` one at a time, reading the log in chunks: what `export` writes as it reads
        (memory flat in the board's size). This default reads them all at once."""
        return iter(self.board_events(blackboard_id))

    def import_stream(self, blackboard_id: str, events: Iterable[StoredEvent]) -> ImportedRange:
        """`import_events` of events read as they come, all or none: the store keeps nothing of them
        in memory but a chunk, and refuses (InvalidInput naming `events[i].event_id`, writing nothing)
        an event id that comes twice. This default holds them all."""
        listed = list(events)
        ids: set[str] = set()
        for i, event in enumerate(listed):
            if event.event_id in ids:
                raise InvalidInput(f"events[{i}].event_id", f"must be unique, {event.event_id} comes twice")
            ids.add(event.event_id)
        positions = self.import_events(blackboard_id, listed)
        return ImportedRange(
            len(listed), positions[0], positions[-1], positions == [e.position for e in listed]
        )

    def import_events(self, blackboard_id: str, events: Sequence[StoredEvent]) -> list[int]:
        """Store events recorded elsewhere (an export of the board), all or none, in the order given
        (their position order), keeping their ids, versions, data, metadata and both times; only
        appends, leaving the read model to a catch-up. Their positions are kept when all come after
        the log's end (always so in an empty store), else new ones are handed out in their order.
        Returns the positions. Raises BoardExists (writing nothing) if the store holds any event of
        the board's streams, or any of these event ids; StoreUnavailable when it cannot be reached."""
        raise NotImplementedError(f"{type(self).__name__} does not import")


@dataclass(frozen=True, slots=True)
class ImportedRange:
    """What an import stored: how many events, the first and last positions they got, and whether
    those are the export's own (the store's log ended before them)."""

    events: int
    first_position: int
    last_position: int
    kept_positions: bool


@dataclass(frozen=True, slots=True)
class Overdue:
    """Which signals are past their timeouts at `at` (`post_timeout`: the default, None when off; a signal
    posted with a timeout of its own is measured by that)."""

    at: datetime
    post_timeout: timedelta | None
    claim_timeout: timedelta


@dataclass(frozen=True, slots=True)
class Scope:
    """What a decision reads of a board: the signals it names (and every signal of the flow it names; `ends`:
    and every signal that waits on them, since ending one ends or releases those), a new signal's
    upstreams, a dedupe key, the signals past their timeouts, and (`retries`) the latest retries of the
    named signals' upstreams.
    `at_most`: of the named signals still open (POSTED), only the first this many are read, in the order
    named, with every named one no longer open (a worker's batch claim names more candidates than it may
    take; where rows are locked, it locks only what it may take, and one another transaction holds is
    passed over for the next)."""

    signals: tuple[str, ...] = ()
    ends: bool = False
    upstreams: tuple[str, ...] = ()
    flow: str | None = None  # a flow's id: every signal of it is named too (its steps and their retries)
    key: str | None = None
    overdue: Overdue | None = None
    retries: bool = False
    at_most: int | None = None
    # a claim without a concurrency key: the board's limits (its budget) are read with the board's state,
    # in one statement where the store can (`BoardTransaction.limits(None)` then reads nothing more)
    limits: bool = False
    # a claim: the claim timeout of the process deciding it; a claim not taken nor renewed within it before
    # the decision's time counts neither under its concurrency key nor with its reservation (it lapsed,
    # swept or not)
    lapse: timedelta | None = None
    # a claim whose claimer's runs reserve (domain/reservations.py): what the board's open claims reserved is
    # totalled with its budget (`BoardTransaction.limits`); a claim that reserves nothing does not pay for it
    reserves: bool = False


class BoardRows(abc.ABC):
    """One held board's read-model rows, as the last commit on it left them."""

    version: int  # the board's stream version

    @abc.abstractmethod
    def signals(self, signal_ids: Collection[str], at_most: int | None = None) -> list[AgentSignal]:
        """This board's signals among `signal_ids` (others, and unknown ids, are left out); with
        `at_most`, of those still POSTED only the first that many in the order of `signal_ids`."""

    @abc.abstractmethod
    def dependants(self, signal_ids: Collection[str]) -> list[AgentSignal]:
        """Every signal of this board posted after (waiting on) any of `signal_ids`."""

    @abc.abstractmethod
    def with_key(self, dedupe_key: str) -> AgentSignal | None:
        """The board's signal posted with this dedupe key, if any."""

    @abc.abstractmethod
    def retries(self, signal_ids: Collection[str]) -> list[AgentSignal]:
        """The board's signals that retry any of `signal_ids`."""

    @abc.abstractmethod
    def overdue(self, overdue: Overdue) -> list[AgentSignal]:
        """The board's POSTED and CLAIMED signals past their timeouts."""

    @abc.abstractmethod
    def flow(self, flow_id: str) -> list[AgentSignal]:
        """The board's signals of this flow (`flow_id`), its steps and their retries."""


class BoardTransaction(abc.ABC):
    """One write transaction holding one board: no other writer appends to it until it ends.

    `load` reads what a decision needs (`Scope`) under the hold and gives it as an aggregate;
    `commit` appends the aggregate's new events and writes the read-model rows they leave, in this
    transaction; leaving the `UnitOfWork.board` block commits it (or rolls it back on an error).
    """

    def __init__(self, blackboard_id: str) -> None:
        self.blackboard_id = blackboard_id
        self.loaded: dict[str, AgentSignal] = {}  # the signals as `load` found them, before any decision
        self.loaded_dependants: dict[str, list[str]] = {}
        self.scope = Scope()  # what `load` reads
        self.at: datetime | None = None  # the decision's time, as `load` was told it

    def load(self, scope: Scope, at: datetime | None = None) -> BlackboardAggregate:
        self.scope, self.at = scope, at if at is not None else self.at
        rows = self.rows()
        if rows is None:  # the read model is being rebuilt: decide on the board's whole history
            board = BlackboardAggregate.replay(self.blackboard_id, self.history())
        else:
            board = load_scope(self.blackboard_id, rows, scope)
        self.loaded = dict(board.signals)
        self.loaded_dependants = {sid: board.dependants_of(sid) for sid in self.loaded}
        return board

    @abc.abstractmethod
    def rows(self) -> BoardRows | None:
        """The board's rows, or None while the read model is behind the log (a rebuild runs)."""

    @abc.abstractmethod
    def history(self) -> list[BlackboardEvent]:
        """Every event of the board, in version order."""

    @abc.abstractmethod
    def taken(self, signal_id: str) -> bool:
        """Whether any board holds a signal with this id (ids are unique across boards)."""

    @abc.abstractmethod
    def highest_entry(self) -> int:
        """The highest N of the entry ids `e-N` of the board's signals, 0 for a board with none, as of this
        transaction (from its log while the read model is behind it). Under the board's hold (Hold.BOARD)
        no other post lands until this transaction ends, so a post numbering its entry N + 1 takes a number
        no signal of the board has."""

    @abc.abstractmethod
    def commit(self, board: BlackboardAggregate, metadata: Mapping[str, Any]) -> list[Recorded]:
        """Append the board's pending events at the version it was loaded at, and write the rows they
        leave (while the read model is live); returns them as stored ([] when there were none)."""

    @property
    def lapsed_before(self) -> datetime | None:
        """A claim taken or renewed no later than this has lapsed at the decision's time (`Scope.lapse`)."""
        if self.at is None or self.scope.lapse is None:
            return None
        return self.at - self.scope.lapse

    @abc.abstractmethod
    def limits(self, key: str | None) -> Limits:
        """What limits a claim, read in one go: with a concurrency key, hold it until this transaction
        ends (a claim under it on any board waits here meanwhile) and count, after the hold, the signals
        CLAIMED under it on every board; and the board's budget with whether it is reached, what its runs
        spent and what its open claims reserved (domain/limits.py). A claim that lapsed before the
        decision (`lapsed_before`) counts in neither."""

    @abc.abstractmethod
    def budget(self) -> Budget:
        """The board's budget (`blackboard budget`), as of this transaction."""

    @abc.abstractmethod
    def spent(self) -> Spent:
        """What the runners' runs recorded on the board have cost, as of this transaction."""


class Hold(Enum):
    """What a board transaction holds until it ends (docs/persistence.md, "Writing").

    BOARD: the whole board; no other writer of it gets past the hold (posts, cancels, sweeps, budgets:
    any rule that reads the board beyond the signals it names). SIGNALS: only the signals the
    transaction loads (their rows, and every dependant it loads with them), for commands that touch
    nothing else: claims, outcomes, renewals; such commands of one board run side by side, and a
    BOARD holder waits for them all (and they for it). FREE_SIGNALS: as SIGNALS, but a named signal
    another transaction holds is left out (as if absent) instead of waited for: a worker's claims
    go on to the next signal. Where one transaction holds the whole database (SQLite) all three are
    the same hold. A transaction that holds less than the board may be chosen as a deadlock's victim:
    it raises ConcurrencyConflict, having written nothing, and the command is decided again."""

    BOARD = "board"
    SIGNALS = "signals"
    FREE_SIGNALS = "free signals"


class BoardHoldNeeded(Exception):
    """Raised by a transaction that holds less than the board when its decision needs the whole board
    after all (the read model is behind the log, so the decision replays the board's history): it has
    written nothing; the command is decided again, holding the board from the start. Taking the board
    within the transaction instead would upgrade a shared hold, which two such transactions deadlock on."""


class UnitOfWork(abc.ABC):
    """Opens board transactions: the only way a command writes."""

    @abc.abstractmethod
    def board(self, blackboard_id: str, hold: Hold = Hold.BOARD) -> AbstractContextManager[BoardTransaction]:
        """Hold the board (or, `hold`, only the signals loaded in it) until the block ends; commit on a
        normal exit, roll back on an error."""

    def entry(self, blackboard_id: str, key: str) -> AbstractContextManager[EntryTransaction]:
        """Hold one entry key (not its board) until the block ends; commit on a normal exit, roll
        back on an error. A unit of work without entries refuses."""
        raise NotImplementedError(f"{type(self).__name__} holds no entries")


class AgentRegistry(abc.ABC):
    """The agents that may claim signals."""

    @abc.abstractmethod
    def get_all(self) -> list[AgentProfile]:
        """Every registered agent, ordered by name."""

    def get(self, agent_id: str) -> AgentProfile | None:
        return next((a for a in self.get_all() if a.agent_id == agent_id), None)

    def text_scores(self, text: str) -> dict[str, float]:
        """Each agent's text relevance to `text` in 0..1, by name (`post --capability auto`, docs/matching.md);
        an agent left out scores 0. A registry without text matching scores everyone 0."""
        return {}

    def can_run(self, agent_id: str) -> bool:
        """Whether a worker has a handler to run for the agent (`runnable`); what `next` may propose."""
        return True

    def get_by_capability(self, capability: str) -> list[AgentProfile]:
        """Agents declaring the capability, best score first."""
        able = [a for a in self.get_all() if a.score_for_capability(capability) > 0]
        return sorted(able, key=lambda a: (-a.score_for_capability(capability), a.agent_id))


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


@dataclass(frozen=True, slots=True)
class SignalState:
    """What a worker watching the signals it runs reads of each (worker/cancels.py): no more."""

    signal_id: str
    status: SignalStatus
    claim_token: str | None
    error: str | None  # a CANCELLED signal's reason (its result's error); else None


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

    def usage_totals(self, blackboard_id: str | None = None) -> dict[str, dict[str, UsageTotal]]:
        """What runners' runs cost, per board and agent (who completed or failed the signal): board ->
        agent -> total, for every board (or the one named) where a run was recorded. This default reads
        every signal; a store totals where the rows are."""
        totals: dict[str, dict[str, UsageTotal]] = {}
        for signal in self.find(SignalFilter(blackboard_id=blackboard_id)):
            if signal.usage is None:
                continue
            agents = totals.setdefault(signal.blackboard_id, {})
            agent = str(signal.claimed_by)
            agents[agent] = agents.get(agent, UsageTotal()) + UsageTotal.of(signal.usage)
        return totals

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
                    max((s.claimed_at - s.created_at).total_seconds(), 0.0)
                )
            elif s.completed_at is not None:
                seconds = max((s.completed_at - s.claimed_at).total_seconds(), 0.0)  # clocks may disagree
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


class Tracer:
    """Where the work is traced (docs/operate.md, "Traces"): each command that changed a board, and each
    handler or runner run, told after the fact with when it started, so a tracer makes its spans with
    their real times. This default traces nothing and costs a call."""

    def command(self, cmd: Any, metadata: Mapping[str, Any], outcome: Any, started_ns: int) -> None:
        """A command committed: its metadata (correlation_id, causation_id) and what it returned."""

    def ran(self, signal: AgentSignal, agent_id: str, started_ns: int, succeeded: bool) -> None:
        """A worker ran a handler or runner on a signal it claimed, from `started_ns` until now."""


class EventPublisher(abc.ABC):
    """Tells in-process subscribers about events after they are stored."""

    @abc.abstractmethod
    def publish(self, events: Sequence[BlackboardEvent]) -> None: ...


@dataclass(frozen=True, slots=True)
class LogNews:
    """What some appends did to the claimable signals: every signal they made claimable (`posted`), and
    every signal they claimed (`taken`, which no longer is)."""

    posted: tuple[Candidate, ...] = ()
    taken: frozenset[str] = frozenset()


class LogNotifier(abc.ABC):
    """Wakes a waiter when the event log may have grown (polling, or a database notification)."""

    tells_news = False  # whether `news` can ever answer (a notification carrying what an append did)

    @abc.abstractmethod
    def wait(self, after: int, timeout: float) -> bool:
        """Return once an event past position `after` may exist, or after `timeout` seconds.

        True when it knows the log has moved past `after` (the caller need not ask the store);
        False when the time ran out or it cannot tell. Returning early by mistake is harmless
        (the caller reads the log and waits again); sleeping through an append that is already
        there is not.
        """

    def appended(self, event: BlackboardEvent | None = None) -> None:
        """This process stored `event`: a notifier that would only see it at its next look may wake
        its waiters now. The default does nothing (notifications reach it anyway)."""

    def seen(self) -> int | None:
        """A position the log has reached, known without a query (from the last notification or
        poll), or None. Never past the log's end, and anything appended after it wakes a later
        `wait`: a waiter may note it instead of asking the store for the last position."""
        return None

    def strays(self) -> int:
        """How many notifications it heard that were not the log's (an operator's `NOTIFY` on the
        channel): each may mean anything, so a caller that noted this before a look and finds it grown
        looks again rather than trust `news`. The default hears none."""
        return 0

    def news(self, after: int, upto: int) -> LogNews | None:
        """What the appends past position `after` up to `upto` did to the claimable signals, as their
        notifications told it (without a query), or None when it cannot tell: one of them did more
        than post or claim, or was not heard (polling, a lost connection). The default cannot tell."""
        return None


class Clock(abc.ABC):
    @abc.abstractmethod
    def now(self) -> datetime:
        """The current time, timezone-aware."""


class IdGenerator(abc.ABC):
    @abc.abstractmethod
    def new_signal_id(self) -> str:
        """A fresh `sig-` + 8 hex id."""


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
