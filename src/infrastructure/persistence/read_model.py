"""The SignalReadModel port on the blackboard_signals tables."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import Any, ParamSpec, TypeVar

from sqlalchemy import Engine, Select, bindparam, case, func, or_, select, text, true, union_all
from sqlalchemy.exc import DBAPIError

from blackboard.application.ports import (
    CLAIM_WAIT,
    BoardSignals,
    Durations,
    Look,
    Recorded,
    SignalFilter,
    SignalReadModel,
    SignalState,
    StoreUnavailable,
)
from blackboard.application.ports.reading import STALLED_LISTED, BoardStalls, Timed
from blackboard.application.usage import UsageTotal
from blackboard.domain.capabilities import canonical_capability, targets_auto
from blackboard.domain.flows import FlowCounts, newest_first, ordered
from blackboard.domain.limits import Budget, Spent
from blackboard.domain.signals import AgentSignal, Candidate, SignalStatus, signal_text
from blackboard.infrastructure.persistence import fold
from blackboard.infrastructure.persistence.codec import signal_from_row
from blackboard.infrastructure.persistence.dialect import dialect_of
from blackboard.infrastructure.persistence.engine import read_connection, write_transaction
from blackboard.infrastructure.persistence.fold import CAPABILITIES, GET_SIGNAL, SIGNALS, FoldCache
from blackboard.infrastructure.persistence.tables import (
    BOARD_BUDGETS,
    CHECKPOINTS,
    EVENTS,
    SIGNAL_USAGE,
    SOLVE_USAGE,
    claimable_where,
    open_gate_where,
)

OVER_BUDGET = select(BOARD_BUDGETS.c.blackboard_id).where(BOARD_BUDGETS.c.reached)
BOARDS_APART = "\x1f"  # between the boards of a look's `stopped` (a board id has no control character)
CANDIDATE_COLUMNS = (
    SIGNALS.c.signal_id,
    SIGNALS.c.blackboard_id,
    SIGNALS.c.target_capabilities,
    SIGNALS.c.created_at,
    SIGNALS.c.payload_json,
    SIGNALS.c.priority,
)

BOARD_OF = select(SIGNALS.c.blackboard_id).where(SIGNALS.c.signal_id == bindparam("signal_id"))
FLOW = (  # a flow's signals, by the index of its board and flow
    select(SIGNALS)
    .where(SIGNALS.c.blackboard_id == bindparam("board"), SIGNALS.c.flow_id == bindparam("flow"))
    .order_by(SIGNALS.c.created_at, SIGNALS.c.signal_id)
)
_RETRY = SIGNALS.alias("retry")
# each flow's steps at their latest signal (one no signal retries: the retry_of index), counted by status
FLOW_COUNTS = (
    select(SIGNALS.c.blackboard_id, SIGNALS.c.flow_id, SIGNALS.c.status, func.count())
    .where(
        SIGNALS.c.flow_id.is_not(None),
        ~select(_RETRY.c.signal_id).where(_RETRY.c.retry_of == SIGNALS.c.signal_id).exists(),
    )
    .group_by(SIGNALS.c.blackboard_id, SIGNALS.c.flow_id, SIGNALS.c.status)
)
# when each flow was run: its first signal's post (a retried step's first signal included)
FLOW_STARTS = (
    select(SIGNALS.c.blackboard_id, SIGNALS.c.flow_id, func.min(SIGNALS.c.created_at))
    .where(SIGNALS.c.flow_id.is_not(None))
    .group_by(SIGNALS.c.blackboard_id, SIGNALS.c.flow_id)
)
# the checkpoint's row joined to the signals' rows by their key: the position and the states in one
# statement (a consistent read), and the position even when none of the rows is there (a rebuild)
STATES = (
    select(
        CHECKPOINTS.c.position,
        SIGNALS.c.signal_id,
        SIGNALS.c.status,
        SIGNALS.c.claim_token,
        case((SIGNALS.c.status == "CANCELLED", SIGNALS.c.result_json)),  # only a cancel's reason is read
        SIGNALS.c.nudges,
    )
    .select_from(
        CHECKPOINTS.outerjoin(SIGNALS, SIGNALS.c.signal_id.in_(bindparam("signal_ids", expanding=True)))
    )
    .where(CHECKPOINTS.c.name == fold.NAME)
)
P = ParamSpec("P")
R = TypeVar("R")


def _translated(method: Callable[P, R]) -> Callable[P, R]:
    """Driver errors leave as the port's StoreUnavailable, like the event store's."""

    @functools.wraps(method)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return method(*args, **kwargs)
        except (DBAPIError, OSError) as exc:  # OSError: the writer lock file of `apply`
            raise StoreUnavailable(f"could not reach the signals: {getattr(exc, 'orig', exc)}") from exc

    return call


# the catch-up's check before reads: the log's end past the rows' position (Projector.catch_up's comparison)
BEHIND = select(
    select(func.coalesce(func.max(EVENTS.c.position), 0)).scalar_subquery()
    > func.coalesce(fold.GET_CHECKPOINT.scalar_subquery(), 0)
)


class SqlSignalReadModel(SignalReadModel):
    """Commands write these rows in their own transactions (unit_of_work.py); `apply` and `reset` are
    for catching up and rebuilding, and hold the projection against commands while they write."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._cache = FoldCache()  # signal states a rebuild from empty keeps across its pages

    @_translated
    def get(self, signal_id: str) -> AgentSignal | None:
        with read_connection(self._engine) as conn:
            row = conn.execute(GET_SIGNAL, {"signal_id": signal_id}).one_or_none()
        return signal_from_row(row) if row else None

    @_translated
    def states(self, signal_ids: Sequence[str]) -> tuple[int, list[SignalState]]:
        """One statement, whatever the number of signals; no signal row is decoded."""
        if not signal_ids:
            return self.position(), []
        with read_connection(self._engine) as conn:
            rows = conn.execute(STATES, {"signal_ids": list(signal_ids)}).all()
        states = [
            SignalState(
                sid,
                SignalStatus(status),
                token,
                json.loads(result).get("error") if result else None,
                nudges or 0,
            )
            for _, sid, status, token, result, nudges in rows
            if sid is not None  # the checkpoint's row alone: none of the signals has a row
        ]
        return (rows[0][0] if rows else 0), states

    @_translated
    def find(self, criteria: SignalFilter) -> list[AgentSignal]:
        with read_connection(self._engine) as conn:
            return [signal_from_row(row) for row in conn.execute(_matching(select(SIGNALS), criteria))]

    @_translated
    def candidates(
        self,
        capabilities: Sequence[str],
        limit: int,
        blackboard_id: str | None = None,
        due_at: datetime | None = None,
    ) -> list[Candidate]:
        query = _claimable(SignalFilter.claimable(capabilities, limit, blackboard_id, due_at))
        with read_connection(self._engine) as conn:
            return [_candidate(*row) for row in conn.execute(query)]

    @_translated
    def look(
        self,
        capabilities: Sequence[str],
        limit: int,
        blackboard_id: str | None = None,
        due_at: datetime | None = None,
    ) -> Look:
        """One statement: the checkpoint's row, the boards over budget, and the candidates joined to it
        (a consistent read: the position is what the rows read were folded up to, even with none)."""
        query = _look(tuple(capabilities), limit, blackboard_id, due_at is not None)
        with read_connection(self._engine) as conn:
            rows = conn.execute(query, {"due_at": due_at} if due_at is not None else {}).all()
        if not rows:  # nothing folded yet
            return Look((), 0)
        position, boards = rows[0][0], rows[0][1]
        return Look(
            tuple(_candidate(*row[2:]) for row in rows if row[2] is not None),
            position,
            frozenset(boards.split(BOARDS_APART)) if boards else frozenset(),
        )

    @_translated
    def candidates_named(self, signal_ids: Sequence[str]) -> list[Candidate]:
        if not signal_ids:
            return []
        query = select(*CANDIDATE_COLUMNS).where(SIGNALS.c.signal_id.in_(list(signal_ids)))
        with read_connection(self._engine) as conn:
            return [_candidate(*row) for row in conn.execute(query)]

    @_translated
    def next_due(
        self, capabilities: Sequence[str], after: datetime, blackboard_id: str | None = None
    ) -> datetime | None:
        criteria = SignalFilter(
            status=SignalStatus.POSTED,
            capabilities=tuple(capabilities),
            blackboard_id=blackboard_id,
            claimable_only=True,
        )
        query = _matching(select(func.min(SIGNALS.c.not_before)), criteria).order_by(None).limit(None)
        with read_connection(self._engine) as conn:
            return _utc(conn.scalar(query.where(SIGNALS.c.not_before > after)))

    @_translated
    def board_of(self, signal_id: str) -> str | None:
        with read_connection(self._engine) as conn:
            return conn.scalar(BOARD_OF, {"signal_id": signal_id})

    @_translated
    def live_boards(self, blackboard_id: str | None = None) -> list[str]:
        query = select(SIGNALS.c.blackboard_id).where(SIGNALS.c.status.in_(("POSTED", "CLAIMED"))).distinct()
        if blackboard_id is not None:
            query = query.where(SIGNALS.c.blackboard_id == blackboard_id)
        with read_connection(self._engine) as conn:
            return list(conn.scalars(query))

    @_translated
    def count_by_status(self, blackboard_id: str) -> dict[str, int]:
        query = (
            select(SIGNALS.c.status, func.count())
            .where(SIGNALS.c.blackboard_id == blackboard_id)
            .group_by(SIGNALS.c.status)
        )
        with read_connection(self._engine) as conn:
            return dict(conn.execute(query).all())

    @_translated
    def open_gates(self, blackboard_id: str | None = None) -> list[AgentSignal]:
        query = select(SIGNALS).where(open_gate_where()).order_by(SIGNALS.c.created_at, SIGNALS.c.signal_id)
        if blackboard_id is not None:
            query = query.where(SIGNALS.c.blackboard_id == blackboard_id)
        with read_connection(self._engine) as conn:
            return [signal_from_row(row) for row in conn.execute(query)]

    @_translated
    def flow_signals(self, blackboard_id: str, flow_id: str) -> list[AgentSignal]:
        with read_connection(self._engine) as conn:
            return [
                signal_from_row(row) for row in conn.execute(FLOW, {"board": blackboard_id, "flow": flow_id})
            ]

    @_translated
    def flow_counts(self, blackboard_id: str | None = None) -> list[FlowCounts]:
        """Two GROUP BYs over the flows' rows (the flow index), whatever the length of the log."""
        mine = () if blackboard_id is None else (SIGNALS.c.blackboard_id == blackboard_id,)
        counts: dict[tuple[str, str], dict[str, int]] = {}
        with read_connection(self._engine) as conn:
            for board, flow, status, n in conn.execute(FLOW_COUNTS.where(*mine)):
                counts.setdefault((board, flow), {})[status] = n
            started = {
                (board, flow): _utc(first) for board, flow, first in conn.execute(FLOW_STARTS.where(*mine))
            }
        return newest_first(FlowCounts(b, f, ordered(c), started[(b, f)]) for (b, f), c in counts.items())

    @_translated
    def board_statuses(
        self, live_since: datetime, blackboard_id: str | None = None, labels: Sequence[str] = ()
    ) -> list[BoardSignals]:
        """Three GROUP BYs over the rows (the board index), whatever the length of the log."""
        board, status = SIGNALS.c.blackboard_id, SIGNALS.c.status
        mine = ((board == blackboard_id,) if blackboard_id is not None else ()) + tuple(labelled(labels))
        lease = func.coalesce(SIGNALS.c.renewed_at, SIGNALS.c.claimed_at)
        with read_connection(self._engine) as conn:
            counts = conn.execute(
                select(board, status, func.count()).where(*mine).group_by(board, status)
            ).all()
            oldest = dict(
                conn.execute(
                    select(board, func.min(SIGNALS.c.created_at))
                    .where(*mine, status == "POSTED")
                    .group_by(board)
                ).all()
            )
            live = conn.execute(
                select(board, SIGNALS.c.claimed_by)
                .distinct()
                .where(*mine, status == "CLAIMED", lease >= live_since)
            ).all()
        by_board: dict[str, dict[str, int]] = {}
        for name, state, n in counts:
            by_board.setdefault(name, {})[state] = n
        workers: dict[str, list[str]] = {}
        for name, agent in live:
            workers.setdefault(name, []).append(agent)
        return [
            BoardSignals(name, by_status, _utc(oldest.get(name)), tuple(sorted(workers.get(name, ()))))
            for name, by_status in sorted(by_board.items())
        ]

    @_translated
    def stalls(self, blackboard_id: str | None = None) -> dict[str, BoardStalls]:
        """One GROUP BY and one read over the rows that stalled (their partial index), whatever the log's length."""
        s = SIGNALS.c
        stalled = (text("stalls > 0"),) + (
            (s.blackboard_id == blackboard_id,) if blackboard_id is not None else ()
        )
        with read_connection(self._engine) as conn:
            counts = conn.execute(
                select(s.blackboard_id, func.sum(s.stalls)).where(*stalled).group_by(s.blackboard_id)
            ).all()
            listed: dict[str, list[str]] = {}
            for board, _ in counts:
                listed[board] = list(
                    conn.scalars(
                        select(s.signal_id)
                        .where(text("stalls > 0"), s.blackboard_id == board)
                        .order_by(s.created_at.desc(), s.signal_id.desc())
                        .limit(STALLED_LISTED)
                    )
                )
        return {board: BoardStalls(board, int(n), tuple(listed[board])) for board, n in sorted(counts)}

    @_translated
    def budgets(self, blackboard_id: str | None = None) -> dict[str, Budget]:
        b = BOARD_BUDGETS.c
        query = select(b.blackboard_id, b.usd, b.tokens)
        if blackboard_id is not None:
            query = query.where(b.blackboard_id == blackboard_id)
        with read_connection(self._engine) as conn:
            return {board: Budget(usd, tokens) for board, usd, tokens in conn.execute(query)}

    @_translated
    def reserved(
        self, blackboard_id: str | None = None, lapsed_before: datetime | None = None
    ) -> dict[str, Spent]:
        """One GROUP BY over the CLAIMED rows (their partial index), whatever the number of signals."""
        s = SIGNALS.c
        query = (
            select(s.blackboard_id, func.sum(s.reserved_usd), func.sum(s.reserved_tokens))
            .where(
                text("status = 'CLAIMED'"), or_(s.reserved_usd.is_not(None), s.reserved_tokens.is_not(None))
            )
            .group_by(s.blackboard_id)
        )
        if blackboard_id is not None:
            query = query.where(s.blackboard_id == blackboard_id)
        if lapsed_before is not None:
            query = query.where(func.coalesce(s.renewed_at, s.claimed_at) > lapsed_before)
        with read_connection(self._engine) as conn:
            return {
                board: Spent(float(usd or 0.0), int(tokens or 0))
                for board, usd, tokens in conn.execute(query)
            }

    @_translated
    def claimed_under(self, lapsed_before: datetime | None = None) -> dict[str, int]:
        """One GROUP BY over the CLAIMED rows under a key (the index on key and status)."""
        s = SIGNALS.c
        query = (
            select(s.concurrency_key, func.count())
            .where(s.concurrency_key.is_not(None), s.status == "CLAIMED")
            .group_by(s.concurrency_key)
        )
        if lapsed_before is not None:
            query = query.where(func.coalesce(s.renewed_at, s.claimed_at) > lapsed_before)
        with read_connection(self._engine) as conn:
            return {key: int(n) for key, n in conn.execute(query)}

    @_translated
    def usage_totals(self, blackboard_id: str | None = None) -> dict[str, dict[str, UsageTotal]]:
        """One GROUP BY over the runs of signals and of solve controllers (signal_usage and solve_usage, their
        board indexes), whatever the length of the log."""
        runs = []
        for table in (SIGNAL_USAGE, SOLVE_USAGE):
            t = table.c
            run = select(
                t.blackboard_id, t.agent, t.input_tokens, t.output_tokens, t.cost_usd, t.turns, t.duration_ms
            )
            runs.append(run if blackboard_id is None else run.where(t.blackboard_id == blackboard_id))
        u = union_all(*runs).subquery().c
        query = select(
            u.blackboard_id,
            u.agent,
            func.count(),
            func.sum(u.input_tokens),
            func.sum(u.output_tokens),
            func.sum(func.coalesce(u.cost_usd, 0.0)),
            func.count() - func.count(u.cost_usd),  # COUNT(column) leaves the NULLs out
            func.sum(u.turns),
            func.sum(u.duration_ms),
        ).group_by(u.blackboard_id, u.agent)
        totals: dict[str, dict[str, UsageTotal]] = {}
        with read_connection(self._engine) as conn:
            for board, agent, runs, tokens_in, tokens_out, cost, unpriced, turns, ms in conn.execute(query):
                totals.setdefault(board, {})[agent] = UsageTotal(
                    int(runs),
                    int(tokens_in),
                    int(tokens_out),
                    float(cost),
                    int(unpriced),
                    int(turns),
                    int(ms),
                )
        return totals

    @_translated
    def timeline(self, blackboard_id: str, since: datetime) -> list[Timed]:
        """One read of the board's rows (its index) posted, claimed or ended since then: their times and their
        run's usage row, no payload decoded, whatever the length of the log."""
        s, u = SIGNALS.c, SIGNAL_USAGE.c
        query = (
            select(s.status, s.created_at, s.claimed_at, s.completed_at, u.agent)
            .add_columns(u.input_tokens, u.output_tokens, u.cost_usd, u.turns, u.duration_ms)
            .select_from(SIGNALS.outerjoin(SIGNAL_USAGE, u.signal_id == s.signal_id))
            .where(
                s.blackboard_id == blackboard_id,
                or_(s.created_at >= since, s.claimed_at >= since, s.completed_at >= since),
            )
        )
        with read_connection(self._engine) as conn:
            rows = conn.execute(query).all()
        return [
            Timed(
                SignalStatus(status),
                _utc(posted),  # type: ignore[arg-type]
                _utc(claimed),
                _utc(ended),
                agent,
                None
                if agent is None
                else UsageTotal(
                    1, int(tin), int(tout), float(cost or 0.0), int(cost is None), int(turns), int(ms)
                ),
            )
            for status, posted, claimed, ended, agent, tin, tout, cost, turns, ms in rows
        ]

    @_translated
    def durations(self, kind: str, bounds: Sequence[float]) -> list[Durations]:
        """One GROUP BY over the signal rows, a sum per bound: one row per board (and status), whatever
        the number of signals; the seconds are counted by the database, no signal row leaves it. Each
        row's seconds are worked out once (a MATERIALIZED CTE: else the expression is evaluated again
        for every bound, 2.5 times slower on SQLite)."""
        s = SIGNALS.c
        if kind == CLAIM_WAIT:
            seconds = dialect_of(self._engine).seconds_between(s.created_at, s.claimed_at)
            keys, measured = [s.blackboard_id], s.claimed_at.is_not(None)
        else:
            seconds = dialect_of(self._engine).seconds_between(s.claimed_at, s.completed_at)
            keys = [s.blackboard_id, s.status]
            measured = s.claimed_at.is_not(None) & s.completed_at.is_not(None)
        # clocks of the processes that posted, claimed and ended it may disagree: a negative span counts as 0
        at_least = func.max if self._engine.dialect.name == "sqlite" else func.greatest
        rows = (
            select(*keys, at_least(seconds, 0.0).label("seconds"))
            .where(measured)
            .cte("measured")
            .prefix_with("MATERIALIZED")
        )
        grouped = [rows.c[key.name] for key in keys]
        within = [func.sum(case((rows.c.seconds <= bound, 1), else_=0)) for bound in bounds]
        query = select(*grouped, func.count(), func.sum(rows.c.seconds), *within).group_by(*grouped)
        with read_connection(self._engine) as conn:
            found = conn.execute(query.order_by(*grouped)).all()
        return [
            Durations(
                row[0],
                row[1] if kind != CLAIM_WAIT else None,
                tuple(int(n) for n in row[len(keys) + 2 :]),
                int(row[len(keys)]),
                float(row[len(keys) + 1] or 0.0),
            )
            for row in found
        ]

    @_translated
    def position(self) -> int:
        with read_connection(self._engine) as conn:
            return fold.checkpoint(conn)

    @_translated
    def behind(self) -> bool:
        """Whether the log (in this database) holds events past the rows' position: one statement, so both
        are read in one snapshot (a commit cannot land between the two reads and look like a page to fold)."""
        with read_connection(self._engine) as conn:
            return bool(conn.scalar(BEHIND))

    @_translated
    def apply(self, records: Iterable[Recorded], flat: bool = False) -> None:
        records = list(records)
        with write_transaction(self._engine) as conn:
            dialect_of(self._engine).hold_projection(conn)
            reached = fold.checkpoint(conn)
            if flat:  # each page reads the rows it touches: memory flat in the log's length
                self._cache = FoldCache()
            elif not self._cache.complete or reached != self._cache.position:
                self._cache = FoldCache(complete=reached == 0)  # from empty, every signal passes through it
            fold.fold(conn, records, self._cache, after=reached)
            self._cache.position = max(reached, records[-1].position if records else 0)

    @_translated
    def replay(self, limit: int, flat: bool = False) -> int:
        """Fold the next `limit` events of the log (the same database) into the rows, read and decoded by
        the fast path (`replay.py`) and written through the driver; returns how many were folded. `flat`:
        as `apply`'s, each page reads the rows it touches (memory flat in the log's length)."""
        from blackboard.infrastructure.persistence import replay

        with write_transaction(self._engine) as conn, replay.collector_paused():
            dialect_of(self._engine).hold_projection(conn)
            reached = fold.checkpoint(conn)
            if flat:
                self._cache = FoldCache()
            elif not self._cache.complete or reached != self._cache.position:
                self._cache = FoldCache(complete=reached == 0)  # from empty, every signal passes through it
            texts: replay.Texts = {}  # the page's times as read: written as read (SQLite)
            page = replay.events(replay.read_page(conn, reached, limit, texts))
            if page:
                fold.fold_events(conn, page, self._cache, writer=replay.DriverWriter(texts))
                self._cache.position = page[-1][0]
        return len(page)

    @_translated
    def reset(self) -> None:
        with write_transaction(self._engine) as conn:
            dialect_of(self._engine).hold_projection(conn)
            fold.clear(conn)
        self._cache = FoldCache(complete=True)


def _matching(query: Select[Any], criteria: SignalFilter) -> Select[Any]:
    """`query` narrowed to the signals matching every given criterion, oldest first (created_at, then
    id), or with `urgent_first` by priority first (the order of ix_blackboard_signals_open)."""
    if criteria.status is not None:
        query = query.where(SIGNALS.c.status == criteria.status.value)
    if criteria.signal_type is not None:
        query = query.where(SIGNALS.c.signal_type == str(criteria.signal_type))
    if criteria.blackboard_id is not None:
        query = query.where(SIGNALS.c.blackboard_id == criteria.blackboard_id)
    if criteria.claimable_only:
        query = query.where(claimable_where())
    if criteria.due_at is not None:
        query = query.where(or_(SIGNALS.c.not_before.is_(None), SIGNALS.c.not_before <= criteria.due_at))
    query = query.where(*labelled(criteria.labels))
    if criteria.capabilities:  # EXISTS: a plan that does not depend on the table's statistics
        able = select(CAPABILITIES.c.signal_id).where(
            CAPABILITIES.c.signal_id == SIGNALS.c.signal_id,
            CAPABILITIES.c.capability.in_(
                [canonical_capability(c) for c in criteria.capabilities]  # the projection stores that form
            ),
        )
        query = query.where(able.exists())
    if criteria.urgent_first:  # the order of ix_blackboard_signals_open: a limit stops the walk early
        return query.order_by(SIGNALS.c.priority, SIGNALS.c.created_at, SIGNALS.c.signal_id).limit(
            criteria.limit
        )
    return query.order_by(SIGNALS.c.created_at, SIGNALS.c.signal_id).limit(criteria.limit)


def labelled(labels: Sequence[str]) -> list[Any]:
    """The conditions that a row carries each of `labels`: its JSON array holds the label in quotes (a label
    holds no quote, so none is part of another; `_` and `%` escaped for LIKE)."""
    return [SIGNALS.c.labels_json.contains(f'"{label}"', autoescape=True) for label in labels]


@functools.lru_cache(maxsize=64)
def _look(capabilities: tuple[str, ...], limit: int, blackboard_id: str | None, due: bool) -> Select[Any]:
    """A look's statement, built once per worker's shape (the time it is due at a parameter): building
    it costs more than the server's work (0.13-0.30 ms against 0.05-0.08 ms for 8 of 300 signals)."""
    due_at = bindparam("due_at", type_=SIGNALS.c.not_before.type) if due else None
    criteria = SignalFilter.claimable(capabilities, limit, blackboard_id, due_at)  # a parameter for the time
    found = _claimable(criteria).subquery()
    stopped = (
        select(func.aggregate_strings(BOARD_BUDGETS.c.blackboard_id, BOARDS_APART))
        .where(BOARD_BUDGETS.c.reached)
        .scalar_subquery()
    )
    return (
        select(CHECKPOINTS.c.position, stopped, *found.c)
        .select_from(CHECKPOINTS.outerjoin(found, true()))
        .where(CHECKPOINTS.c.name == fold.NAME)
        .order_by(found.c.priority, found.c.created_at, found.c.signal_id)
    )


def _claimable(criteria: SignalFilter) -> Select[Any]:
    # a board whose budget is reached is left out: its signals wait, and do not crowd out other boards'
    return _matching(select(*CANDIDATE_COLUMNS), criteria).where(SIGNALS.c.blackboard_id.not_in(OVER_BUDGET))


def _utc(moment: datetime | None) -> datetime | None:
    """An aggregate's result skips the column's type: SQLite gives the text back, and no zone."""
    if isinstance(moment, str):
        moment = datetime.fromisoformat(moment)
    return moment.replace(tzinfo=UTC) if moment is not None and moment.tzinfo is None else moment


def _candidate(
    signal_id: str, board: str, targets: str, created: Any, payload: str, priority: int
) -> Candidate:
    """A candidate row; the payload is parsed only for a signal targeting auto (its text is scored)."""
    candidate = Candidate(signal_id, board, tuple(json.loads(targets)), created, priority=priority)
    if not targets_auto(candidate):
        return candidate
    fields = json.loads(payload)
    return Candidate(
        signal_id,
        board,
        candidate.target_capabilities,
        created,
        signal_text(fields.get("topic", ""), fields.get("prompt", "")),
        priority,
    )
