"""A board's budget as people read it (`blackboard budget`, `status`, `next`): the limits, what the runners'
runs recorded on the board have spent, and whether its signals wait for a higher budget."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

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

    @property
    def reached(self) -> str | None:
        """Why its signals wait (None: they do not)."""
        return self.budget.reached(self.spent)


def board_budget(signals: SignalReadModel, blackboard_id: str) -> BoardBudget:
    budget = signals.budgets(blackboard_id).get(blackboard_id, Budget())
    return BoardBudget(
        blackboard_id, budget, spent_of(signals.usage_totals(blackboard_id).get(blackboard_id, {}))
    )


def over_budget(signals: SignalReadModel, blackboard_id: str | None = None) -> dict[str, str]:
    """The boards (all, or the one named) whose signals wait for a higher budget, each with why."""
    budgets = signals.budgets(blackboard_id)
    if not budgets:  # most stores: no budget at all, nothing to total
        return {}
    usage = signals.usage_totals(blackboard_id)
    reasons = {board: budget.reached(spent_of(usage.get(board, {}))) for board, budget in budgets.items()}
    return {board: reason for board, reason in reasons.items() if reason is not None}
