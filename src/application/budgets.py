"""A board's budget as people read it (`blackboard budget`, `status`, `next`): the limits, what the runners'
runs recorded on the board have spent, what its open claims reserved, and whether its signals wait."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from blackboard.application.ports import SignalReadModel
from blackboard.application.usage import UsageTotal, total
from blackboard.domain.limits import Budget, Spent


def spent_of(usage: Mapping[str, UsageTotal]) -> Spent:
    """What a board's runs cost, from its usage per agent: as the claim's rule counts it."""
    summed = total(usage.values())
    return Spent(summed.cost_usd, summed.input_tokens + summed.output_tokens)


@dataclass(frozen=True, slots=True)
class BoardBudget:
    blackboard_id: str
    budget: Budget
    spent: Spent
    reserved: Spent = Spent()  # by its open claims, until their runs end (domain/reservations.py)

    @property
    def reached(self) -> str | None:
        """Why its signals wait (None: they do not)."""
        return self.budget.reached(self.spent)


def board_budget(
    signals: SignalReadModel, blackboard_id: str, lapsed_before: datetime | None = None
) -> BoardBudget:
    """The board's budget, what was spent and what its open claims reserved (those taken or renewed
    after `lapsed_before`: the others lapsed)."""
    budget = signals.budgets(blackboard_id).get(blackboard_id, Budget())
    return BoardBudget(
        blackboard_id,
        budget,
        spent_of(signals.usage_totals(blackboard_id).get(blackboard_id, {})),
        signals.reserved(blackboard_id, lapsed_before).get(blackboard_id, Spent()),
    )


def budget_states(
    signals: SignalReadModel, blackboard_id: str | None = None, lapsed_before: datetime | None = None
) -> dict[str, BoardBudget]:
    """Every board with a budget (or the one named): what a claim there is decided against."""
    budgets = signals.budgets(blackboard_id)
    if not budgets:  # most stores: no budget at all, nothing to total
        return {}
    usage, reserved = signals.usage_totals(blackboard_id), signals.reserved(blackboard_id, lapsed_before)
    return {
        board: BoardBudget(board, budget, spent_of(usage.get(board, {})), reserved.get(board, Spent()))
        for board, budget in budgets.items()
    }


def over_budget(signals: SignalReadModel, blackboard_id: str | None = None) -> dict[str, str]:
    """The boards (all, or the one named) whose signals wait for a higher budget, each with why."""
    budgets = signals.budgets(blackboard_id)
    if not budgets:  # most stores: no budget at all, nothing to total
        return {}
    usage = signals.usage_totals(blackboard_id)
    reasons = {board: budget.reached(spent_of(usage.get(board, {}))) for board, budget in budgets.items()}
    return {board: reason for board, reason in reasons.items() if reason is not None}
