"""Why limits hold POSTED signals back, for signals read already (the web view's cards), as `next` plans it:
its board's budget, its best agent's concurrency key, its best agent's rate limit (application/ranking.py,
`Plan.held`: the reasons `next --json` gives).

One read each of the board's budget (and, when it has one, what was spent and reserved), of the signals
claimed under each concurrency key, and of the rate limits' windows, whatever the number of signals; the
agents are read, and the signals planned, only when one of these may hold something back.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from blackboard.application.budgets import budget_states
from blackboard.application.ports import AgentRegistry, SignalReadModel
from blackboard.application.queries import BlackboardQueries
from blackboard.application.ranking import Controller
from blackboard.domain.rates import RateWindow
from blackboard.domain.signals import AgentSignal, SignalStatus


def held_back(
    queries: BlackboardQueries,
    registry: Callable[[], AgentRegistry],
    threshold: float,
    signals: SignalReadModel,
    windows: Callable[[], list[RateWindow]],
    shown: Sequence[AgentSignal],
    now: datetime,
    lapsed_before: datetime,
) -> dict[str, str]:
    """Why each of the `shown` signals a limit holds back waits (signal -> reason; the others left out),
    planned as `next` plans them among themselves (one board's signals, or one signal); claims taken or
    renewed no later than `lapsed_before` count no more, as at a claim."""
    posted = [
        s for s in shown if s.status is SignalStatus.POSTED and not s.waiting_for and s.claimable_at(now)
    ]
    if not posted:
        return {}
    boards = {s.blackboard_id for s in posted}
    board = boards.pop() if len(boards) == 1 else None
    budgets = budget_states(signals, board, lapsed_before)
    claimed = signals.claimed_under(lapsed_before)
    read = windows()
    if not budgets and not claimed and not any(w.holds(now) > 0 for w in read):
        return {}  # nothing can hold a signal back: no agent read, nothing planned
    plan = Controller(
        queries, registry(), threshold, lambda _board: budgets, lambda: read, lambda: claimed
    ).next(board, None, now, signals=posted)
    return plan.held()
