"""The one fold: events into the signal tables (and entry events into the entry tables) with the domain's own
evolution, many events per write.

It serves a command's commit (seeded with the rows the command loaded, so it reads nothing), a
catch-up and a rebuild (reading, in one query each, the rows and dependants a page touches, or
keeping every signal in memory when the rebuild starts from empty).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import Connection, String, Table, and_, bindparam, delete, func, insert, or_, select, update

from blackboard.application.ports import Recorded
from blackboard.domain.capabilities import canonical_capability
from blackboard.domain.events import (
    AgentSignalApproved,
    AgentSignalAttemptFailed,
    AgentSignalCompleted,
    AgentSignalFailed,
    AgentSignalPosted,
    AgentSignalRunCharged,
    BlackboardEvent,
    BoardBudgetSet,
    CheckpointEvent,
    EntryEvent,
    SolveDecisionFailed,
    SolveEvent,
    SolveSolved,
    SolveStepPosted,
    SolveSynthesized,
)
from blackboard.domain.evolution import evolve
from blackboard.domain.signals import AgentSignal, SignalUsage
from blackboard.infrastructure.persistence import lean
from blackboard.infrastructure.persistence.codec import (
    CHANGING_COLUMNS,
    SIGNAL_COLUMNS,
    changing_values,
    signal_from_row,
    signal_values,
)
from blackboard.infrastructure.persistence.dialect import dialect_of
from blackboard.infrastructure.persistence.notice import payload
from blackboard.infrastructure.persistence.tables import (
    BOARD_BUDGETS,
    CAPABILITIES,
    CHECKPOINTS,
    DEPENDENCIES,
    SIGNAL_USAGE,
    SIGNALS,
    SOLVE_USAGE,
)

NAME = "blackboard_signals"
CHANGING = CHANGING_COLUMNS  # the columns a signal's later events change (`codec.changing_values`)
_CAPABILITY_COLUMNS = ("signal_id", "capability")
_DEPENDENCY_COLUMNS = ("signal_id", "upstream_id")
USAGE_COLUMNS = (  # `usage_row`'s keys, in its order
    "signal_id",
    "blackboard_id",
    "agent",
    "runner",
    "model",
    "input_tokens",
    "output_tokens",
    "cost_usd",
    "turns",
    "duration_ms",
)
GET_SIGNAL = select(SIGNALS).where(SIGNALS.c.signal_id == bindparam("signal_id"))
GET_SIGNALS = select(SIGNALS).where(SIGNALS.c.signal_id.in_(bindparam("signal_ids", expanding=True)))
GET_ALL_DEPENDANTS = select(DEPENDENCIES.c.upstream_id, DEPENDENCIES.c.signal_id).where(
    DEPENDENCIES.c.upstream_id.in_(bindparam("upstream_ids", expanding=True))
)
GET_CHECKPOINT = select(CHECKPOINTS.c.position).where(CHECKPOINTS.c.name == NAME)
SET_CHECKPOINT = update(CHECKPOINTS).where(CHECKPOINTS.c.name == NAME).values(position=bindparam("position"))
SET_CHECKPOINT_NOTIFY = SET_CHECKPOINT.returning(  # PostgreSQL only (set_checkpoint_and_notify)
    func.pg_notify(bindparam("channel", type_=String()), bindparam("payload", type_=String()))
)


@dataclass
class FoldCache:
    """Signal states known to match the tables; `complete` when it holds every signal (a rebuild)."""

    signals: dict[str, AgentSignal] = field(default_factory=dict)
    dependants: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    complete: bool = False
    position: int = 0  # the checkpoint the cache matches, for a rebuild going page by page
    entries: dict[tuple[str, str], Any] = field(
        default_factory=dict
    )  # (board, key) -> Entry | None: entry_projection


class RowWriter:
    """How a fold's rows reach the tables. The fold hands each table's rows as tuples, in the order of the
    column names it gives (no dict a row); this one binds them through the dialect's many-row insert and
    update (a command's few rows on the driver, lean.py; PostgreSQL's bulk form for many), each value as
    its column's type. `persistence/replay.py` has one that hands the driver values it converted itself
    (a rebuild)."""

    def insert(
        self, conn: Connection, table: Table, names: Sequence[str], rows: list[tuple[Any, ...]]
    ) -> None:
        dialect_of(conn.engine).insert_many(conn, table, [dict(zip(names, row, strict=True)) for row in rows])

    def update(
        self, conn: Connection, table: Table, key: str, columns: Sequence[str], rows: list[tuple[Any, ...]]
    ) -> None:
        """Each row: the key's value, then `columns`' values in their order."""
        keys = [f"b_{key}", *(f"b_{c}" for c in columns)]
        dialect_of(conn.engine).update_many(
            conn, table, key, columns, [dict(zip(keys, row, strict=True)) for row in rows], prefix="b_"
        )


class Fold:
    """One transaction's worth of folding: reads what it needs, writes each changed signal once."""

    def __init__(
        self,
        conn: Connection,
        cache: FoldCache | None = None,
        dependants: Mapping[str, list[str]] | None = None,
        writer: RowWriter | None = None,
    ) -> None:
        self._conn = conn
        self._writer = writer or RowWriter()
        self._cache = cache or FoldCache()
        self._new: dict[str, AgentSignal] = {}
        self._changed: dict[str, AgentSignal] = {}
        self._new_dependencies: list[tuple[str, str]] = []  # (signal_id, upstream_id)
        self._posts: dict[str, str] = {}  # signal -> its post's event_id, for its row's post_event_id
        # runs recorded by these events, each signal's attempts together: the rows summary and status total
        self._usage: dict[str, dict[str, Any]] = {}
        self._usage_again: set[str] = set()  # signals retried before: their row may be there already
        # upstream -> its dependants in the tables: given (a command loaded them) or prefetched
        self._stored_dependants: dict[str, list[str]] = dict(dependants or {})

    def apply(self, events: Sequence[BlackboardEvent]) -> None:
        """Fold these events, having read in one query each the stored signals and dependants they
        will ask for (instead of a query or two per event)."""
        self._prefetch(events)
        fold = self._apply
        for event in events:
            fold(event)

    def _prefetch(self, events: Sequence[BlackboardEvent]) -> None:
        if self._cache.complete:  # it holds every signal (a rebuild from empty): none stored to read
            return
        posted = {e.signal_id for e in events if isinstance(e, AgentSignalPosted)}
        wanted = {u for e in events if isinstance(e, AgentSignalPosted) for u in e.after}
        wanted |= {e.signal_id for e in events if not isinstance(e, AgentSignalPosted)}
        # only a completion (or a gate's approval) changes its dependants (a failure expires them with
        # events of their own)
        ended = [e.signal_id for e in events if isinstance(e, (AgentSignalCompleted, AgentSignalApproved))]
        ended = [sid for sid in ended if sid not in self._stored_dependants]
        if ended:
            for sid in ended:
                self._stored_dependants[sid] = []
            for upstream, dependant in self._conn.execute(GET_ALL_DEPENDANTS, {"upstream_ids": ended}):
                self._stored_dependants[upstream].append(dependant)
            wanted |= {d for sid in ended for d in self._stored_dependants[sid]}
        missing = sorted(wanted - posted - self._cache.signals.keys())
        if missing:
            for row in self._conn.execute(GET_SIGNALS, {"signal_ids": missing}):
                self._cache.signals[row.signal_id] = signal_from_row(row)

    def _apply(self, event: BlackboardEvent) -> None:
        posted = isinstance(event, AgentSignalPosted)
        signals, new = self._cache.signals, self._new
        for signal in evolve(event, self._lookup, self._dependants):
            signal_id = signal.signal_id
            signals[signal_id] = signal
            if signal_id in new or (posted and signal_id == event.signal_id):
                new[signal_id] = signal
            else:
                self._changed[signal_id] = signal
        if (
            isinstance(
                event,
                (AgentSignalCompleted, AgentSignalFailed, AgentSignalAttemptFailed, AgentSignalRunCharged),
            )
            and event.usage is not None
        ):
            total = signals[event.signal_id]
            self._usage[event.signal_id] = usage_row(event, total.usage)
            if total.attempts or isinstance(event, AgentSignalRunCharged):  # its row may be there already
                self._usage_again.add(event.signal_id)
        if posted:
            self._posts[event.signal_id] = event.event_id
            for upstream in event.after:
                self._cache.dependants[upstream].append(event.signal_id)
                self._new_dependencies.append((event.signal_id, upstream))

    def flush(self) -> None:
        write, conn = self._writer, self._conn
        if self._new:
            posts = self._posts.get
            write.insert(
                conn,
                SIGNALS,
                SIGNAL_COLUMNS,
                [signal_values(s, posts(s.signal_id)) for s in self._new.values()],
            )
            write.insert(
                conn,
                CAPABILITIES,
                _CAPABILITY_COLUMNS,
                [
                    (s.signal_id, c)
                    for s in self._new.values()
                    for c in dict.fromkeys(map(canonical_capability, s.target_capabilities))
                ],  # compared in that form
            )
        if self._new_dependencies:
            write.insert(conn, DEPENDENCIES, _DEPENDENCY_COLUMNS, self._new_dependencies)
        if self._usage_again:
            conn.execute(delete(SIGNAL_USAGE).where(SIGNAL_USAGE.c.signal_id.in_(sorted(self._usage_again))))
        if self._usage:
            write.insert(
                conn,
                SIGNAL_USAGE,
                USAGE_COLUMNS,
                [tuple(map(row.__getitem__, USAGE_COLUMNS)) for row in self._usage.values()],
            )
            refresh_reached(conn, {row["blackboard_id"] for row in self._usage.values()})
        if self._changed:
            write.update(
                conn, SIGNALS, "signal_id", CHANGING, [changing_values(s) for s in self._changed.values()]
            )

    def _lookup(self, signal_id: str) -> AgentSignal:
        """The signal as it stands: `_prefetch` read every stored one these events touch."""
        if (known := self._cache.signals.get(signal_id)) is None:
            raise LookupError(f"the read model has no signal {signal_id}; rebuild the projection")
        return known

    def _dependants(self, upstream_id: str) -> list[str]:
        if self._cache.complete:
            return self._cache.dependants.get(upstream_id, [])
        stored = self._stored_dependants.get(upstream_id, [])  # `_prefetch` read those of every completion
        pending = [signal for signal, upstream in self._new_dependencies if upstream == upstream_id]
        return list(dict.fromkeys([*stored, *pending]))


def usage_row(
    event: AgentSignalCompleted | AgentSignalFailed | AgentSignalAttemptFailed | AgentSignalRunCharged,
    total: SignalUsage | None = None,
) -> dict[str, Any]:
    """A run's usage as the row `summary` and `status` total; the agent is who completed or failed it (or
    whose run was charged). `total`: what every attempt's runs cost together (the signal's usage), when it
    was retried or charged before."""
    usage = total or event.usage
    assert usage is not None
    if isinstance(event, AgentSignalCompleted):
        agent = event.completed_by
    elif isinstance(event, AgentSignalFailed):
        agent = event.failed_by
    elif isinstance(event, AgentSignalRunCharged):
        agent = event.charged_to
    else:
        agent = event.claimed_by or "unknown"
    return {
        "signal_id": event.signal_id,
        "blackboard_id": event.blackboard_id,
        "agent": agent,
        "runner": usage.runner,
        "model": usage.model,
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cost_usd": usage.cost_usd,
        "turns": usage.turns,
        "duration_ms": usage.duration_ms,
    }


def checkpoint(conn: Connection) -> int:
    return conn.scalar(GET_CHECKPOINT) or 0


def set_checkpoint_and_notify(
    conn: Connection, position: int, events: Sequence[BlackboardEvent] = ()
) -> None:
    """Move the checkpoint to the append's last position and tell the log's listeners (on commit) what
    the append of `events` did (notice.py), in one round trip where the database can notify from a
    statement (PostgreSQL): both run under the log's lock, which every other append waits for."""
    dialect = dialect_of(conn.engine)
    if dialect.notify_channel is None:
        set_checkpoint(conn, position)
        dialect.notify(conn, position, events)
        return
    params = {"position": position, "channel": dialect.notify_channel, "payload": payload(position, events)}
    if lean.one(conn, SET_CHECKPOINT_NOTIFY, params) is None:  # no checkpoint row yet
        set_checkpoint(conn, position)
        dialect.notify(conn, position, events)


def set_checkpoint(conn: Connection, position: int) -> None:
    if lean.execute(conn, SET_CHECKPOINT, {"position": position}) == 0:
        conn.execute(insert(CHECKPOINTS).values(name=NAME, position=position))


def fold(
    conn: Connection,
    records: Sequence[Recorded],
    cache: FoldCache | None = None,
    after: int | None = None,
    dependants: Mapping[str, list[str]] | None = None,
    writer: RowWriter | None = None,
    notify: Sequence[BlackboardEvent] | None = None,
) -> int:
    """Fold the records after the checkpoint (`after`, if the caller just read it) and move it, in
    the caller's transaction; returns how many were folded. `cache` holds signal states known to
    match the tables and `dependants` the stored dependants of some of them, so neither is read.
    `notify`: the events of the append that stored `records`, whose notice (notice.py) the caller left to
    the fold: sent with the checkpoint's move, in the same statement where the database can."""
    after = checkpoint(conn) if after is None else after
    fresh = [(r.position, r.event) for r in records if r.position > after]
    if fresh:
        fold_events(conn, fresh, cache, dependants, writer, notify)
    elif notify is not None and records:
        dialect_of(conn.engine).notify(conn, records[-1].position, notify)
    return len(fresh)


def fold_rows(
    conn: Connection,
    events: Sequence[BlackboardEvent],
    cache: FoldCache | None = None,
    dependants: Mapping[str, list[str]] | None = None,
) -> None:
    """Fold a command's signal events into the rows, without positions and without moving the
    checkpoint (the caller moves it once the events have theirs): the rows of signals depend on
    neither. Entry events hold positions in their rows: never given here."""
    if any(isinstance(e, EntryEvent) for e in events):
        raise ValueError("entry events are folded with their positions")
    signal_events = [e for e in events if not isinstance(e, SolveEvent | BoardBudgetSet)]
    if signal_events:
        batch = Fold(conn, cache if cache is not None else FoldCache(), dependants)
        batch.apply(signal_events)
        batch.flush()
    for event in events:
        if isinstance(event, BoardBudgetSet):
            set_budget_row(conn, event)
    controller_runs(conn, [e for e in events if isinstance(e, SolveEvent)])


_NOT_SIGNALS = (EntryEvent, SolveEvent, BoardBudgetSet, CheckpointEvent)


def fold_events(
    conn: Connection,
    events: Sequence[tuple[int, BlackboardEvent]],
    cache: FoldCache | None = None,
    dependants: Mapping[str, list[str]] | None = None,
    writer: RowWriter | None = None,
    notify: Sequence[BlackboardEvent] | None = None,
) -> None:
    """Fold these (position, event) pairs, the log's next ones in order, and move the checkpoint to the last
    (`notify`: telling the log's listeners what the append of those events did, in the same round trip)."""
    cache = cache if cache is not None else FoldCache()
    # one pass sorts them (a page of a rebuild is 20,000 events, nearly all of signals)
    signal_events: list[BlackboardEvent] = []
    entry_records: list[Recorded] = []
    checkpoint_events: list[tuple[int, CheckpointEvent]] = []
    budgets: list[BoardBudgetSet] = []
    solves: list[SolveEvent] = []
    for p, e in events:
        if not isinstance(e, _NOT_SIGNALS):
            signal_events.append(e)
        elif isinstance(e, EntryEvent):
            entry_records.append(Recorded(p, e, e.occurred_at))
        elif isinstance(e, CheckpointEvent):
            checkpoint_events.append((p, e))
        elif isinstance(e, BoardBudgetSet):
            budgets.append(e)
        elif isinstance(e, SolveEvent):  # `solve --status` reads a run from the log; its controller's
            solves.append(e)  # runs are counted with the board's (`controller_runs`)
    if signal_events:
        batch = Fold(conn, cache, dependants, writer)
        batch.apply(signal_events)
        batch.flush()
    if entry_records:  # entries live in tables of their own: their order to signals is moot
        from blackboard.infrastructure.persistence.knowledge.fold import (
            fold_entries,
        )  # not for signals alone

        fold_entries(conn, entry_records, cache.entries, cache.complete)
    if checkpoint_events:  # LangGraph's checkpoints: tables of their own
        from blackboard.infrastructure.persistence import checkpoints  # not for signals alone

        checkpoints.fold(conn, checkpoint_events)
    if solves:
        controller_runs(conn, solves, writer)
    for budget in budgets:  # rare: a person sets a board's budget (`blackboard budget`)
        set_budget_row(conn, budget)
    if notify is None:
        set_checkpoint(conn, events[-1][0])
    else:
        set_checkpoint_and_notify(conn, events[-1][0], notify)


_SOLVE_USAGE_COLUMNS = ("event_id", *USAGE_COLUMNS[1:])


def controller_runs(conn: Connection, events: Sequence[SolveEvent], writer: RowWriter | None = None) -> None:
    """The runs of solve controllers these events recorded (a decision's usage) as rows of `solve_usage`,
    the controller as agent, counted with the board's runs (`summary`, `status`, `/metrics`, the budget)."""
    rows = [
        (e.event_id, e.blackboard_id, e.actor, *_usage_values(e.usage))
        for e in events
        if isinstance(e, SolveStepPosted | SolveDecisionFailed | SolveSolved | SolveSynthesized)
        and e.usage is not None
    ]
    if rows:
        (writer or RowWriter()).insert(conn, SOLVE_USAGE, _SOLVE_USAGE_COLUMNS, rows)
        refresh_reached(conn, {row[1] for row in rows})


def _usage_values(usage: SignalUsage) -> tuple[Any, ...]:
    """`USAGE_COLUMNS` past the signal, the board and the agent, in their order."""
    return (
        usage.runner,
        usage.model,
        usage.input_tokens,
        usage.output_tokens,
        usage.cost_usd,
        usage.turns,
        usage.duration_ms,
    )


def set_budget_row(conn: Connection, event: BoardBudgetSet) -> None:
    values = {"usd": event.usd, "tokens": event.tokens}
    moved = conn.execute(
        update(BOARD_BUDGETS).where(BOARD_BUDGETS.c.blackboard_id == event.blackboard_id).values(**values)
    )
    if moved.rowcount == 0:
        conn.execute(insert(BOARD_BUDGETS).values(blackboard_id=event.blackboard_id, **values))
    refresh_reached(conn, {event.blackboard_id})


def refresh_reached(conn: Connection, boards: set[str]) -> None:
    """What each board's runs spent (its signals' runs and its solve controllers'), and whether that has
    reached its budget (Budget.reached's rule, in SQL), for the boards that have a budget among these:
    after a budget is set, and after runs are recorded."""
    b = BOARD_BUDGETS.c
    lock_budgets(conn, boards)
    runs = [  # each table's sums for the row's board
        (
            select(func.coalesce(func.sum(t.c.cost_usd), 0.0)).where(t.c.blackboard_id == b.blackboard_id),
            select(func.coalesce(func.sum(t.c.input_tokens + t.c.output_tokens), 0)).where(
                t.c.blackboard_id == b.blackboard_id
            ),
        )
        for t in (SIGNAL_USAGE, SOLVE_USAGE)
    ]
    usd = runs[0][0].scalar_subquery() + runs[1][0].scalar_subquery()
    tokens = runs[0][1].scalar_subquery() + runs[1][1].scalar_subquery()
    reached = or_(and_(b.usd.is_not(None), usd >= b.usd), and_(b.tokens.is_not(None), tokens >= b.tokens))
    conn.execute(
        update(BOARD_BUDGETS)
        .where(b.blackboard_id.in_(sorted(boards)))
        .values(spent_usd=usd, spent_tokens=tokens, reached=reached)
    )


def budget_rows_written(events: Sequence[BlackboardEvent]) -> set[str]:
    """The boards whose budget row folding these events writes: a budget set, or a run's usage recorded."""
    return {
        e.blackboard_id
        for e in events
        if isinstance(e, BoardBudgetSet) or getattr(e, "usage", None) is not None
    }


def lock_budgets(conn: Connection, boards: set[str]) -> None:
    """Where writers run side by side (PostgreSQL), lock these boards' budget rows (those they have) until
    the commit: completions of one board record runs side by side (Hold.SIGNALS), and so do its solve
    runs, so each locks the row before it sums the board's runs, and the sums count every run committed
    before it. Taken before the log's lock by every writer that records a run (the budget's, then the
    log's), so two of them never wait on each other's."""
    if not boards or dialect_of(conn.engine).one_writer:
        return
    b = BOARD_BUDGETS.c
    conn.execute(
        select(b.blackboard_id)
        .where(b.blackboard_id.in_(sorted(boards)))
        .order_by(b.blackboard_id)
        .with_for_update()
    )


def clear(conn: Connection) -> None:
    for table in (CAPABILITIES, DEPENDENCIES, SIGNAL_USAGE, SOLVE_USAGE, SIGNALS, BOARD_BUDGETS):
        conn.execute(delete(table))
    from blackboard.infrastructure.persistence.knowledge.fold import clear_entries

    clear_entries(conn)
    from blackboard.infrastructure.persistence import checkpoints

    checkpoints.clear(conn)
    set_checkpoint(conn, 0)
