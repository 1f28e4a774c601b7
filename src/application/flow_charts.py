"""Spend and flow over time (the web view's charts, docs/web.md "Spend and flow"): over a window of minutes that
ends now, or at a log position's time, in at most MAX_POINTS buckets of equal width: the signals that ended in
each bucket by their final status; the claim waits of the signals claimed in each (p50 and p90, by the rule of
/metrics' histogram: from the post to the current claim, a negative span 0); and each agent's spend, cumulative
at the end of each bucket, against the board's budget.

Fed by the signal read model /metrics and `status` read (`usage_totals`, `budgets`, and `timeline`: the rows of
the window alone, their times and usage, no payload decoded); the grouping is one pass in Python over those rows,
so the answer is bounded (MAX_POINTS per series) whatever the board holds. At a log position, the board replayed
up to it (the time travel of `--at`): its signals and budget then, its spend by the same rule (`usage_of`)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from blackboard.application.budgets import spent_of
from blackboard.application.ports import Clock, EventStore, SignalReadModel
from blackboard.application.ports.reading import Timed, span_seconds, usage_of
from blackboard.application.projection import Projector
from blackboard.application.queries import BlackboardQueries
from blackboard.application.usage import UsageTotal
from blackboard.domain.errors import InvalidInput
from blackboard.domain.limits import Budget, Spent
from blackboard.domain.signal_kinds import FINAL_STATUSES, SignalStatus

MAX_POINTS = 120  # buckets at most: a longer window widens them
MAX_WINDOW = 10_080  # minutes: a week
ENDED = tuple(s for s in SignalStatus if s in FINAL_STATUSES)  # in the board's order of statuses


@dataclass(frozen=True, slots=True)
class AgentSpend:
    """One agent's runs: spent by the end of each bucket (cumulative from the board's start, so the last point
    is its total), what of it was spent within the window, and its total as /metrics gives it."""

    agent: str
    usd: tuple[float, ...]  # of priced runs, as the budget counts them
    tokens: tuple[int, ...]  # input and output
    window_usd: float
    window_tokens: int
    total_usd: float | None  # None: it ran, and no run had a price (unknown is no $0)
    total_tokens: int
    unpriced_runs: int


@dataclass(frozen=True, slots=True)
class FlowCharts:
    start: datetime
    end: datetime
    bucket_seconds: float
    buckets: tuple[datetime, ...]  # each bucket's start
    finished: dict[str, tuple[int, ...]]  # final status -> signals that ended in each bucket
    claimed: tuple[int, ...]  # signals claimed in each bucket
    wait_p50: tuple[float | None, ...]  # seconds; None: none claimed in it
    wait_p90: tuple[float | None, ...]
    agents: tuple[AgentSpend, ...]  # by name
    spent: Spent  # the board's, as its budget is decided against
    budget: Budget


def percentile(values: Sequence[float], q: float) -> float:
    """Nearest rank: the smallest value with at least q% of them at or below it (q in 0..100)."""
    ordered = sorted(values)
    return ordered[min(len(ordered), max(1, math.ceil(q / 100 * len(ordered)))) - 1]


def window_bounds(window: int | str) -> int:
    """The window's minutes, checked: a whole number from 1 to MAX_WINDOW (InvalidInput naming `window`); a
    query parameter's text is read as one."""
    minutes = window if isinstance(window, int) and not isinstance(window, bool) else None
    if isinstance(window, str) and window.strip().isdigit():
        minutes = int(window)
    if minutes is None or not 1 <= minutes <= MAX_WINDOW:
        raise InvalidInput(
            "window", f"must be a whole number of minutes from 1 to {MAX_WINDOW}, got {window!r}"
        )
    return minutes


def flow_series(
    rows: Iterable[Timed],
    totals: Mapping[str, UsageTotal],
    budget: Budget,
    end: datetime,
    window: int,
) -> FlowCharts:
    """The charts of `window` minutes ending at `end`, from the rows of its signals (those outside it left out)
    and each agent's usage in all (`totals`, the read model's: whatever has no time, a solve controller's runs,
    counts before the window)."""
    n = min(window_bounds(window), MAX_POINTS)
    width = timedelta(minutes=window) / n
    start = end - timedelta(minutes=window)

    def bucket(moment: datetime | None) -> int | None:
        """Its bucket; None outside the window; n past its end."""
        if moment is None or moment < start:
            return None
        if moment > end:
            return n
        return min(int((moment - start) / width), n - 1)

    finished = {str(s): [0] * n for s in ENDED}
    waits: list[list[float]] = [[] for _ in range(n)]
    runs: dict[str, list[UsageTotal]] = {}  # per agent, the runs of each bucket, and past the end (index n)
    for row in rows:
        if row.status.is_final and (i := bucket(row.completed_at)) is not None and i < n:
            finished[str(row.status)][i] += 1
        if row.claimed_at is not None and (i := bucket(row.claimed_at)) is not None and i < n:
            waits[i].append(span_seconds(row.created_at, row.claimed_at))
        if row.usage is not None and row.agent is not None and (i := bucket(row.spent_at)) is not None:
            of_agent = runs.setdefault(row.agent, [UsageTotal()] * (n + 1))
            of_agent[i] += row.usage
    later = {agent: [spent_of({agent: used}) for used in buckets] for agent, buckets in runs.items()}
    agents = []
    for agent in sorted(totals.keys() | later.keys()):
        used = totals.get(agent, UsageTotal())
        total, after = spent_of({agent: used}), later.get(agent, [Spent()] * (n + 1))
        points, still = [], sum(after, Spent())  # spent after each bucket's end: counted off the total
        for i in range(n):
            still = Spent(still.usd - after[i].usd, still.tokens - after[i].tokens)
            points.append(Spent(total.usd - still.usd, total.tokens - still.tokens))
        within = sum(after[:n], Spent())
        agents.append(
            AgentSpend(
                agent,
                tuple(round(p.usd, 10) for p in points),
                tuple(p.tokens for p in points),
                round(within.usd, 10),
                within.tokens,
                used.known_cost_usd,
                total.tokens,
                used.unpriced_runs,
            )
        )
    return FlowCharts(
        start,
        end,
        width.total_seconds(),
        tuple(start + width * i for i in range(n)),
        {status: tuple(counts) for status, counts in finished.items()},
        tuple(len(w) for w in waits),
        tuple(percentile(w, 50) if w else None for w in waits),
        tuple(percentile(w, 90) if w else None for w in waits),
        tuple(agents),
        spent_of(totals),
        budget,
    )


class FlowChartQueries:
    """The charts of a board now (the read model, caught up first) or at a log position (the board replayed)."""

    def __init__(
        self, store: EventStore, signals: SignalReadModel, queries: BlackboardQueries, clock: Clock
    ) -> None:
        self._store = store
        self._signals = signals
        self._queries = queries
        self._clock = clock
        self._projector = Projector(store, signals)

    def charts(self, blackboard_id: str, window: int, at: int | None = None) -> FlowCharts:
        window = window_bounds(window)
        if at is None:
            self._projector.catch_up()
            board = str(self._queries.reach(blackboard_id))
            end = self._clock.now()
            rows = self._signals.timeline(board, end - timedelta(minutes=window))
            totals = self._signals.usage_totals(board).get(board, {})
            return flow_series(rows, totals, self._signals.budgets(board).get(board, Budget()), end, window)
        then = self._queries.board_at(blackboard_id, at)
        signals = list(then.signals.values())
        return flow_series(
            (Timed.of(s) for s in signals),
            usage_of(signals).get(then.id, {}),
            then.budget,
            self._time_of(at),
            window,
        )

    def _time_of(self, position: int) -> datetime:
        """When the log reached `position`: the time its event happened, by the clock the signals' own times are
        of (the first event after it, where it has none), or now past the log's end."""
        found = self._store.read_all(after=max(position - 1, 0), limit=1)
        return found[0].event.occurred_at if found and position > 0 else self._clock.now()
