"""Who writes: the UnitOfWork port on SQLAlchemy, the one place a command's events and rows are written.

`board(id)` opens one write transaction and holds the board in it (SQLite: the database's write
lock; PostgreSQL: the board's advisory lock, see postgres.py). Under that hold the read-model rows
of the board are its state at its current version, because every commit on the board wrote them
in its own transaction: so a decision loads only the rows it touches (`BoardRows`), never the whole
board. `commit` (`commit_in`) holds the log, has the event store append the events (it only
appends), and folds the recorded events into those rows with the one fold (fold.py), seeded
with the rows the decision loaded, so it reads nothing more. While a rebuild has the read model
behind the log, decisions replay the board's events instead and leave the rows to the rebuild.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    Connection,
    Engine,
    bindparam,
    exists,
    false,
    func,
    null,
    or_,
    select,
    text,
    union_all,
)

from blackboard.application.ports import (
    BoardHoldNeeded,
    BoardRows,
    BoardTransaction,
    ConcurrencyConflict,
    Hold,
    Overdue,
    Recorded,
    UnitOfWork,
)
from blackboard.domain.blackboard import BlackboardAggregate, highest_entry
from blackboard.domain.events import AgentSignalClaimed, BlackboardEvent, entry_stream_id
from blackboard.domain.limits import Budget, Limits, Spent
from blackboard.domain.rates import RateLimit, RateWindow
from blackboard.domain.signals import AgentSignal
from blackboard.infrastructure.persistence import fold, lean
from blackboard.infrastructure.persistence.codec import signal_from_row
from blackboard.infrastructure.persistence.dialect import Dialect, dialect_of
from blackboard.infrastructure.persistence.engine import write_transaction
from blackboard.infrastructure.persistence.event_store import (
    LAST_POSITION,
    VERSION,
    append_in,
    append_one_after,
    load_in,
    translated,
)
from blackboard.infrastructure.persistence.rate_windows import held_window, keep_window
from blackboard.infrastructure.persistence.tables import (
    BOARD_BUDGETS,
    DEPENDENCIES,
    SIGNAL_USAGE,
    SIGNALS,
    SOLVE_USAGE,
    Moment,
)

if TYPE_CHECKING:
    from blackboard.application.knowledge.ports import EntryTransaction

# One round trip: the stream's version, the log's end, the read model's checkpoint.
_STATE = (
    VERSION.scalar_subquery(),
    LAST_POSITION.scalar_subquery(),
    select(fold.CHECKPOINTS.c.position).where(fold.CHECKPOINTS.c.name == fold.NAME).scalar_subquery(),
)
STATE = select(*_STATE)
_BUDGET_ROW = BOARD_BUDGETS.c.blackboard_id == bindparam("board")
# a claim that was not taken nor renewed after `lapsed` has lapsed: it counts no more (Scope.lapse)
_LIVE_CLAIM = func.coalesce(SIGNALS.c.renewed_at, SIGNALS.c.claimed_at) > bindparam("lapsed", type_=Moment())
# the board's open claims, through the partial index of its CLAIMED rows (its predicate written as it is)
_OPEN_CLAIMS = (SIGNALS.c.blackboard_id == bindparam("board"), text("status = 'CLAIMED'"), _LIVE_CLAIM)
_BUDGET = (  # a board without a budget gives NULLs
    select(BOARD_BUDGETS.c.usd).where(_BUDGET_ROW).scalar_subquery(),
    select(BOARD_BUDGETS.c.tokens).where(_BUDGET_ROW).scalar_subquery(),
    select(BOARD_BUDGETS.c.reached).where(_BUDGET_ROW).scalar_subquery(),
    select(BOARD_BUDGETS.c.spent_usd).where(_BUDGET_ROW).scalar_subquery(),
    select(BOARD_BUDGETS.c.spent_tokens).where(_BUDGET_ROW).scalar_subquery(),
)
# what the board's open claims reserved, totalled only for a claim that reserves (Scope.reserves) on a board
# with a budget: a claim whose runs record no usage does not pay for the sum
_RESERVED = (
    select(func.sum(SIGNALS.c.reserved_usd))
    .where(*_OPEN_CLAIMS, exists().where(_BUDGET_ROW))
    .scalar_subquery(),
    select(func.sum(SIGNALS.c.reserved_tokens))
    .where(*_OPEN_CLAIMS, exists().where(_BUDGET_ROW))
    .scalar_subquery(),
)
_NOT_TOTALLED = (null(), null())
# a claim without a concurrency key: the same and the board's budget, still one round trip
STATE_AND_BUDGET = select(*_STATE, *_BUDGET, *_NOT_TOTALLED)
STATE_AND_RESERVED = select(*_STATE, *_BUDGET, *_RESERVED)
BY_ID = select(SIGNALS).where(
    SIGNALS.c.blackboard_id == bindparam("board"), SIGNALS.c.signal_id == bindparam("id")
)
BY_IDS = select(SIGNALS).where(
    SIGNALS.c.blackboard_id == bindparam("board"), SIGNALS.c.signal_id.in_(bindparam("ids", expanding=True))
)
DEPENDANTS = (
    select(SIGNALS)
    .join(DEPENDENCIES, DEPENDENCIES.c.signal_id == SIGNALS.c.signal_id)
    .where(
        DEPENDENCIES.c.upstream_id.in_(bindparam("ids", expanding=True)),
        SIGNALS.c.blackboard_id == bindparam("board"),
    )
)
WITH_KEY = select(SIGNALS).where(
    SIGNALS.c.blackboard_id == bindparam("board"), SIGNALS.c.dedupe_key == bindparam("key")
)
RETRIES = select(SIGNALS).where(
    SIGNALS.c.blackboard_id == bindparam("board"), SIGNALS.c.retry_of.in_(bindparam("ids", expanding=True))
)
FLOW = select(SIGNALS).where(  # a flow's signals, by its index (blackboard_id, flow_id)
    SIGNALS.c.blackboard_id == bindparam("board"), SIGNALS.c.flow_id == bindparam("flow")
)
OVERDUE = select(SIGNALS).where(
    SIGNALS.c.blackboard_id == bindparam("board"),
    or_(
        # the default post timeout, for a signal without one of its own (posted_before NULL: it is off)
        (SIGNALS.c.status == "POSTED")
        & SIGNALS.c.gate.is_(false())
        & SIGNALS.c.timeout_s.is_(None)
        & (SIGNALS.c.claimable_since <= bindparam("posted_before", type_=Moment())),
        # its own timeout (a gate's, or a post's --timeout)
        (SIGNALS.c.status == "POSTED") & (SIGNALS.c.expires_at <= bindparam("at", type_=Moment())),
        (SIGNALS.c.status == "CLAIMED")
        & (
            func.coalesce(SIGNALS.c.renewed_at, SIGNALS.c.claimed_at)
            <= bindparam("claimed_before", type_=Moment())
        ),
    ),
)


@dataclass(frozen=True, slots=True)
class _Queries:
    by_id: Any
    by_ids: Any
    dependants: Any
    with_key: Any
    retries: Any
    overdue: Any
    flow: Any


def _locking(query: Any, skip_locked: bool = False) -> Any:
    # rows in id order, so two transactions locking overlapping sets lock them in the same order
    return query.order_by(SIGNALS.c.signal_id).with_for_update(of=SIGNALS, skip_locked=skip_locked)


_PLAIN = _Queries(BY_ID, BY_IDS, DEPENDANTS, WITH_KEY, RETRIES, OVERDUE, FLOW)
_LOCKED = _Queries(*(_locking(q) for q in (BY_ID, BY_IDS, DEPENDANTS, WITH_KEY, RETRIES, OVERDUE, FLOW)))
_SKIP_LOCKED = _Queries(
    _locking(BY_ID, skip_locked=True),
    _locking(BY_IDS, skip_locked=True),
    _LOCKED.dependants,  # what a decision must change is waited for, never skipped
    _LOCKED.with_key,
    _LOCKED.retries,
    _LOCKED.overdue,
    _LOCKED.flow,
)
TAKEN = select(SIGNALS.c.signal_id).where(SIGNALS.c.signal_id == bindparam("id"))
# the board's highest e-N, on its index (ix_blackboard_signals_entry): a post numbering its entry
HIGHEST_ENTRY = select(func.coalesce(func.max(SIGNALS.c.entry_number), 0)).where(
    SIGNALS.c.blackboard_id == bindparam("board")
)
_HELD = (  # no key (NULL) counts nothing
    select(func.count())
    .where(SIGNALS.c.concurrency_key == bindparam("key"), SIGNALS.c.status == "CLAIMED", _LIVE_CLAIM)
    .scalar_subquery()
)
LIMITS = select(*_BUDGET, *_NOT_TOTALLED, _HELD)
LIMITS_RESERVED = select(*_BUDGET, *_RESERVED, _HELD)
EVER = datetime(1970, 1, 1, tzinfo=UTC)  # no lapse given: every claim counts
BUDGET = select(BOARD_BUDGETS.c.usd, BOARD_BUDGETS.c.tokens).where(
    BOARD_BUDGETS.c.blackboard_id == bindparam("board")
)
_RUNS = [  # what the board's runs recorded: its signals' runs and its solve controllers'
    select(u.c.cost_usd, (u.c.input_tokens + u.c.output_tokens).label("tokens")).where(
        u.c.blackboard_id == bindparam("board")
    )
    for u in (SIGNAL_USAGE, SOLVE_USAGE)
]
_RUN = union_all(*_RUNS).subquery()
SPENT = select(func.coalesce(func.sum(_RUN.c.cost_usd), 0.0), func.coalesce(func.sum(_RUN.c.tokens), 0))


@dataclass(frozen=True, slots=True)
class LogState:
    """A stream's version, the log's end and how far the read model has folded it, read together."""

    version: int
    end: int
    checkpoint: int

    @property
    def live(self) -> bool:
        """The read model has folded the whole log (no rebuild is running, no catch-up is owed)."""
        return self.checkpoint == self.end


def read_log(conn: Connection, stream_id: str, hold: Sequence[lean.Step] = ()) -> LogState:
    """The stream's state; after `hold` (a dialect's lock statements: `log_hold`, `entry_hold`), taken
    first in the same round trip (lean.run_all): the read is a statement of its own after the lock, so it
    sees every commit of those who held it before."""
    *_, found = lean.run_all(conn, [*hold, (STATE, {"stream": stream_id})])
    ((version, end, checkpoint),) = found
    return LogState(version, end, checkpoint or 0)


def hold_log(
    conn: Connection,
    stream_id: str,
    known: LogState | None = None,
    reserving: Mapping[str, Any] | None = None,
) -> LogState:
    """Hold the log from here to the commit (positions follow commit order) and read its state under
    the hold, in one round trip (the lock, then the read as a statement of its own: lean.run_all). `known`,
    read earlier in this transaction, is still true where the database has one writer at a time (SQLite),
    and is not read again.

    `reserving` (the board and the claims' lapse: claims of the board that reserved, holding only their
    signals, whose rows are written): in the same statement, what the board's runs spent and its open
    claims reserved, these claims' included; past the budget, another claim of the board took the room
    since this one decided, and ConcurrencyConflict rolls it back to be decided again. Under the log's
    lock every other claim has committed or waits, so the sum is the board's as this one commits."""
    dialect = dialect_of(conn.engine)
    if known is not None and dialect.one_writer:
        return known
    if reserving is None:
        return read_log(conn, stream_id, dialect.log_hold())
    *_, found = lean.run_all(
        conn, [*dialect.log_hold(), (STATE_AND_RESERVED, {"stream": stream_id, **reserving})]
    )
    ((version, end, checkpoint, *budget),) = found
    seen = _limits(*budget)
    if seen.budget.exceeded_by(seen.spent + seen.reserved):
        raise ConcurrencyConflict(stream_id, version)
    return LogState(version, end, checkpoint or 0)


def commit_in(
    conn: Connection,
    stream_id: str,
    events: Sequence[BlackboardEvent],
    metadata: Mapping[str, Any],
    seed: fold.FoldCache,
    dependants: Mapping[str, list[str]] | None = None,
    known: LogState | None = None,
    signals_only: bool = False,
    reserving: Mapping[str, Any] | None = None,
) -> list[Recorded]:
    """Append the events (the event store) and fold the recorded ones into the rows (the one fold), in
    `conn`'s transaction, which holds the stream: both land at the commit or neither. The fold starts
    from `seed` (the states the decision loaded) and `dependants` (those it loaded of them), so it
    reads nothing it already has. While the read model is behind the log (a rebuild runs, or a
    catch-up is owed) the rows are left to the projector, which folds these events in their turn.

    `signals_only`: the transaction holds the signals it loaded, not the stream (Hold.SIGNALS), so
    other transactions of the board append meanwhile. The events are then numbered in the stream
    under the log's lock, after whatever committed first (their versions count the board's events;
    nothing else reads them), and the rows, which do not depend on positions or versions, are
    written before the log's lock is taken, so the lock covers only the insert, the checkpoint and
    the commit. Should an append that was not folded (a bare append, an import) have come in since
    the rows were read, the fold would run twice over it: ConcurrencyConflict, nothing written, and
    the command decides again. `reserving`: see `hold_log` (the rows must be written first: `early`).

    A command of one event holding its stream (the most common: a post, a LangGraph put, an entry's write)
    sends the log's hold, the state read under it and the event's insert in one round trip
    (`append_one_after`); the fold's writes then go with the read model's position and the notification in
    one more (`fold.finish`)."""
    early = signals_only and known is not None and known.live
    # the budget rows the fold writes, locked before the log's lock, as every writer takes them: a budget
    # set, and a run's usage (a completion's, a solve controller's), so no two writers wait on each other's
    fold.lock_budgets(conn, fold.budget_rows_written(events))
    if early:  # the rows first, outside the log's lock (they hold no position)
        fold.fold_rows(conn, events, seed, dependants)
    dialect = dialect_of(conn.engine)
    if not signals_only and len(events) == 1 and not (known is not None and dialect.one_writer):
        # a command's one event (the most common): the log's hold, its state read under it and the event's
        # insert go in one round trip; the state says after whether the rows are to be written here
        found, one = append_one_after(
            conn, stream_id, events[0], metadata, [*dialect.log_hold(), (STATE, {"stream": stream_id})]
        )
        ((_, end, checkpoint),) = found[-1]
        if (checkpoint or 0) != end:  # the read model is behind: the projector folds it, told by this
            dialect.notify(conn, one.position, events)
        else:
            fold.fold(conn, [one], seed, after=end, dependants=dependants, notify=events)
        return [one]
    log = hold_log(conn, stream_id, known, reserving if early else None)
    if early and not log.live:
        raise ConcurrencyConflict(stream_id, events[0].version - 1)
    if signals_only and log.version != events[0].version - 1:  # others of the board committed first
        events = [e.model_copy(update={"version": log.version + i}) for i, e in enumerate(events, 1)]
    # the listeners are told with the checkpoint's move where the rows are written here (fold.finish), by
    # the append where they are not (the read model is behind: the projector folds them)
    recorded = append_in(
        conn,
        stream_id,
        events[0].version - 1,
        events,
        metadata,
        version=log.version,
        notify=not early and not log.live,
    )
    if early:
        if len(recorded) != len(events):
            raise ConcurrencyConflict(stream_id, events[0].version - 1)
        fold.set_checkpoint_and_notify(conn, recorded[-1].position, events)
    elif recorded and log.live:  # the read model is live: it stays so
        fold.fold(conn, recorded, seed, after=log.end, dependants=dependants, notify=events)
    return recorded


class SqlUnitOfWork(UnitOfWork):
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    @contextmanager
    def board(self, blackboard_id: str, hold: Hold = Hold.BOARD) -> Iterator[BoardTransaction]:
        with (
            translated(f"could not write to {blackboard_id}", blackboard_id),
            write_transaction(self._engine) as conn,
        ):
            dialect = dialect_of(self._engine)
            if hold is Hold.BOARD or dialect.one_writer:  # SQLite: the one writer holds it all anyway
                dialect.hold_board(conn, blackboard_id)
                hold = Hold.BOARD
            else:  # the signals' rows are locked as they are loaded (_SqlRows)
                dialect.share_board(conn, blackboard_id, projection=True)
            yield _SqlTransaction(blackboard_id, conn, hold)

    @contextmanager
    def entry(self, blackboard_id: str, key: str) -> Iterator[EntryTransaction]:
        """The key's own stream is held (PostgreSQL: its advisory lock, never the board's), so
        writers of different keys, and of the board's signals, do not wait on each other."""
        from blackboard.infrastructure.persistence.knowledge.transaction import (
            SqlEntryTransaction,
        )  # not for signals

        stream = entry_stream_id(blackboard_id, key)
        with (
            translated(f"could not write {key} on {blackboard_id}", stream),
            write_transaction(self._engine) as conn,
        ):
            # the key's hold goes with the transaction's first statements (one round trip), before them
            yield SqlEntryTransaction(blackboard_id, key, conn, dialect_of(self._engine).entry_hold(stream))


class _SqlTransaction(BoardTransaction):
    def __init__(self, blackboard_id: str, conn: Connection, hold: Hold = Hold.BOARD) -> None:
        super().__init__(blackboard_id)
        self._conn = conn
        self._hold = hold
        self._log: LogState | None = None  # as `rows` found it
        self._limits: Limits | None = None  # a claim without a key: as `rows` found them

    def rows(self) -> BoardRows | None:
        if self.scope.limits:  # read now, in the log's statement: `limits(None)` has them
            ((version, end, checkpoint, *budget),) = lean.rows(
                self._conn,
                STATE_AND_RESERVED if self.scope.reserves else STATE_AND_BUDGET,
                {"stream": self.blackboard_id, **self._budget_params()},
            )
            self._log = log = LogState(version, end, checkpoint or 0)
            self._limits = _limits(*budget)
        else:
            self._log = log = read_log(self._conn, self.blackboard_id)
        if not log.live:
            if self._hold is not Hold.BOARD:
                # the decision replays the board's history: no row to lock, so the whole board it is,
                # taken from the start of a new transaction (not upgraded from the shared hold here)
                raise BoardHoldNeeded(self.blackboard_id)
            return None
        return _SqlRows(self._conn, self.blackboard_id, log.version, self._hold)

    def history(self) -> list[BlackboardEvent]:
        return load_in(self._conn, self.blackboard_id)

    def taken(self, signal_id: str) -> bool:
        # while a rebuild runs, a signal not yet folded back is not seen here; ids have 32 random bits
        return bool(lean.rows(self._conn, TAKEN, {"id": signal_id}))

    def highest_entry(self) -> int:
        if self._log is not None and not self._log.live:  # a rebuild runs: the rows are behind, not the log
            return highest_entry(self.history())
        ((highest,),) = lean.rows(self._conn, HIGHEST_ENTRY, {"board": self.blackboard_id})
        return int(highest)

    def limits(self, key: str | None) -> Limits:
        if key is None and self._limits is not None:  # read with the log's state, in this transaction
            return self._limits
        if key is not None:
            dialect_of(self._conn.engine).hold_key(self._conn, key)
        # one statement, after the hold: a claim that held the key before us has committed its row by now
        statement = LIMITS_RESERVED if self.scope.reserves else LIMITS
        ((*budget, held),) = lean.rows(self._conn, statement, {"key": key, **self._budget_params()})
        return _limits(*budget, held=held)

    def rate_window(self, limit: RateLimit, now: datetime) -> RateWindow:
        return held_window(self._conn, limit, now)

    def keep_rate_window(self, window: RateWindow) -> None:
        keep_window(self._conn, window)

    def _budget_params(self) -> dict[str, Any]:
        return {"board": self.blackboard_id, "lapsed": self.lapsed_before or EVER}

    def budget(self) -> Budget:
        row = self._conn.execute(BUDGET, {"board": self.blackboard_id}).first()
        return Budget() if row is None else Budget(row.usd, row.tokens)

    def spent(self) -> Spent:
        usd, tokens = self._conn.execute(SPENT, {"board": self.blackboard_id}).one()
        return Spent(float(usd), int(tokens))

    def commit(self, board: BlackboardAggregate, metadata: Mapping[str, Any]) -> list[Recorded]:
        events = board.collect_events()
        if not events:
            return []
        return commit_in(
            self._conn,
            board.id,
            events,
            metadata,
            fold.FoldCache(dict(self.loaded)),
            dependants=self.loaded_dependants,
            known=self._log,
            signals_only=self._hold is not Hold.BOARD,
            reserving=self._budget_params() if self._hold is not Hold.BOARD and _reserving(events) else None,
        )


def _reserving(events: Sequence[BlackboardEvent]) -> bool:
    return any(isinstance(e, AgentSignalClaimed) and e.reserved is not None for e in events)


def _limits(
    usd: float | None,
    tokens: int | None,
    reached: bool | None,
    spent_usd: float | None,
    spent_tokens: int | None,
    reserved_usd: float | None,
    reserved_tokens: int | None,
    held: int | None = 0,
) -> Limits:
    """The budget's columns (`_BUDGET`) and the count under the key as the Limits they say."""
    return Limits(
        Budget(usd, tokens),
        bool(reached),
        int(held or 0),
        Spent(float(spent_usd or 0.0), int(spent_tokens or 0)),
        Spent(float(reserved_usd or 0.0), int(reserved_tokens or 0)),
    )


_FIRST_NAMED: dict[tuple[type[Dialect], str], tuple[Any, ...]] = {}


def _first_named(dialect: Dialect, kind: str) -> tuple[Any, ...]:
    """`_first_named_built`'s statements, kept per kind of database, not per engine's dialect: a cache keyed by
    the dialect would keep every engine's dialect (and what it holds: SQLite's writer lock file) alive."""
    key = (type(dialect), kind)
    found = _FIRST_NAMED.get(key)
    if found is None:
        found = _FIRST_NAMED[key] = _first_named_built(dialect, kind)
    return found


def _first_named_built(dialect: Dialect, kind: str) -> tuple[Any, ...]:
    """`_SqlRows._first`'s statements, built once per database and hold (`kind`: plain, locked, skip):
    the named signals' first `at_most` open ones in the order named (`order`), then the named ones no
    longer open; locking, both in one statement, the others locked too (a lapsed claim among them may
    be expired)."""
    order = dialect.rank_named(SIGNALS.c.signal_id)
    open_ = BY_IDS.where(SIGNALS.c.status == "POSTED").order_by(order).limit(bindparam("at_most"))
    ended = BY_IDS.where(SIGNALS.c.status != "POSTED")
    if kind == "plain":
        return open_, ended
    skip = kind == "skip"
    taken = open_.with_for_update(of=SIGNALS, skip_locked=skip).cte("open_named")
    done = _locking(ended, skip_locked=skip).cte("ended_named")
    return (select(taken).union_all(select(done)),)


class _SqlRows(BoardRows):
    """The rows a decision reads. Holding the board, plain reads; holding only signals, each row read
    is locked for update until the commit (FOR UPDATE; FREE_SIGNALS: the named signals another
    transaction holds are skipped, SKIP LOCKED), so no other writer changes a row this decision read
    until it has written its own."""

    def __init__(self, conn: Connection, blackboard_id: str, version: int, hold: Hold = Hold.BOARD) -> None:
        self._conn = conn
        self._board = blackboard_id
        self.version = version
        self._queries = _PLAIN if hold is Hold.BOARD else _LOCKED
        self._named = _SKIP_LOCKED if hold is Hold.FREE_SIGNALS else self._queries

    def signals(self, signal_ids: Collection[str], at_most: int | None = None) -> list[AgentSignal]:
        if at_most is not None and len(signal_ids) > at_most:
            return self._first(list(signal_ids), at_most)
        if len(signal_ids) == 1:  # most commands name one: a statement that needs no list rendered
            return self._lean(self._named.by_id, id=next(iter(signal_ids)))
        return self._lean(self._named.by_ids, ids=sorted(signal_ids)) if signal_ids else []

    def _first(self, signal_ids: list[str], at_most: int) -> list[AgentSignal]:
        """Of the named signals, the first `at_most` open ones (POSTED) in the order named, each locked when
        holding only signals, and (FREE_SIGNALS) one another transaction holds passed over for the next:
        the database stops locking at the limit, so the rest stay free for others; and the named ones no
        longer open, which no claim can take (read, and locked as well, for the reason it is refused or
        the expiry of a lapsed claim among them). Locked
        in the order named, not the ids': a batch claim (FREE_SIGNALS) never waits on a row here (SKIP
        LOCKED), so no order is needed against deadlocks; a plain SIGNALS hold that waited could lose
        one, and is decided again. Locking, both are read in one statement (one round trip)."""
        dialect = dialect_of(self._conn.engine)
        kind = "plain" if self._named is _PLAIN else "skip" if self._named is _SKIP_LOCKED else "locked"
        order = dialect.order_named(signal_ids)
        return [
            signal
            for statement in _first_named(dialect, kind)
            for signal in self._lean(statement, ids=signal_ids, order=order, at_most=at_most)
        ]

    def dependants(self, signal_ids: Collection[str]) -> list[AgentSignal]:
        return self._lean(self._queries.dependants, ids=sorted(signal_ids)) if signal_ids else []

    def with_key(self, dedupe_key: str) -> AgentSignal | None:
        found = self._lean(self._queries.with_key, key=dedupe_key)
        return found[0] if found else None

    def retries(self, signal_ids: Collection[str]) -> list[AgentSignal]:
        return self._lean(self._queries.retries, ids=sorted(signal_ids)) if signal_ids else []

    def flow(self, flow_id: str) -> list[AgentSignal]:
        return self._lean(self._queries.flow, flow=flow_id)

    def overdue(self, overdue: Overdue) -> list[AgentSignal]:
        return self._lean(
            self._queries.overdue,
            posted_before=None if overdue.post_timeout is None else overdue.at - overdue.post_timeout,
            at=overdue.at,
            claimed_before=overdue.at - overdue.claim_timeout,
        )

    def _many(self, query: Any, **params: Any) -> list[AgentSignal]:
        return [signal_from_row(row) for row in self._conn.execute(query, {"board": self._board, **params})]

    def _lean(self, query: Any, **params: Any) -> list[AgentSignal]:
        """`_many` for the statements built once, on the driver (lean.py), rows as tuples."""
        made = SignalRow._make
        return [
            signal_from_row(made(row))
            for row in lean.rows(self._conn, query, {"board": self._board, **params})
        ]


# a row of SIGNALS as `signal_from_row` reads it (by name)
SignalRow = namedtuple("SignalRow", [column.name for column in SIGNALS.c])  # type: ignore[misc]
