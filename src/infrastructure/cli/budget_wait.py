"""Why `blackboard show` says a POSTED signal waits for its board's budget: the budget reached, or what the
run of the agent that would take it reserves does not fit (the same plan as `next`: application/ranking.py).

A board without a budget costs `show` one lookup by its key, and nothing is imported for it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from sqlalchemy import select

from blackboard.infrastructure.persistence.engine import read_connection
from blackboard.infrastructure.persistence.tables import BOARD_BUDGETS


def budget_wait(
    engine: Any,
    signal_id: str,
    blackboard_id: str,
    config: Any,
    queries: Callable[[], Any],
    registry: Callable[[], Any],
    read_model: Callable[[], Any],
    clock: Callable[[], Any],
) -> str | None:
    """Why the signal waits for its board's budget; None when its board has none, or lets it through.
    The providers are called only for a board with a budget."""
    with read_connection(engine) as conn:
        has_budget = conn.execute(
            select(BOARD_BUDGETS.c.blackboard_id).where(BOARD_BUDGETS.c.blackboard_id == blackboard_id)
        ).first()
    if has_budget is None:
        return None
    from blackboard.application.budgets import budget_states
    from blackboard.application.ranking import budget_hold

    signals, now = read_model(), clock().now()
    lapsed = now - timedelta(seconds=config.claim_timeout)
    held = budget_hold(
        queries(),
        registry(),
        config.claim_threshold,
        lambda board: budget_states(signals, board, lapsed),
        signal_id,
        blackboard_id,
        now,
    )
    return held.reason if held is not None else None
