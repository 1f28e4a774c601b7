"""A board's transaction: the rows a decision loads, the holds it takes, and the unit of work that opens it."""

from __future__ import annotations

import abc
from collections.abc import Collection, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import Enum
from typing import TYPE_CHECKING, Any

from blackboard.application.loading import load_scope
from blackboard.application.ports.log import Recorded
from blackboard.domain.blackboard import BlackboardAggregate
from blackboard.domain.events import BlackboardEvent
from blackboard.domain.limits import Budget, Limits, Spent
from blackboard.domain.rates import RateLimit, RateWindow
from blackboard.domain.signals import AgentSignal

if TYPE_CHECKING:
    from blackboard.application.knowledge.ports import EntryTransaction

# ---------------------------------------------------------------- boards


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
    def rate_window(self, limit: RateLimit, now: datetime) -> RateWindow:
        """The rate limit's window (domain/rates.py), held until this transaction ends: a claim or a call
        under its key, on any board and any host, waits meanwhile. A key never used has a full window."""

    @abc.abstractmethod
    def keep_rate_window(self, window: RateWindow) -> None:
        """Write the window this transaction holds (`rate_window`), committed with the transaction."""

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
