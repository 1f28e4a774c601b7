"""The budget tool (docs/control.md, "Limits"): a person's, never an agent's. A server started with
`--agent` does not offer it, and refuses a call to it (exit 3's family, docs/permissions.md), as a run's
session does."""

from __future__ import annotations

from typing import Any

from blackboard.application.commands import SetBudget
from blackboard.domain.errors import InvalidInput
from blackboard.infrastructure import documents
from blackboard.infrastructure.mcp.schemas import derive, named
from blackboard.infrastructure.mcp.session import Progress, Session, build
from blackboard.infrastructure.mcp.signal_tools import ON_BOARD
from blackboard.infrastructure.mcp.tools import Tool

PERSON_TOOLS = frozenset({"blackboard_budget"})  # refused, not unknown, where they are not offered


def budget(session: Session, given: dict[str, Any], progress: Progress) -> Any:
    """Shows the budget; sets it for a person only (the service asks application/callers.py)."""
    board = given.pop("blackboard_id", None) or session.default_board
    if board is None:
        raise InvalidInput("blackboard_id", "name the board (the server has no --blackboard)")
    if given.get("usd") is not None or given.get("tokens") is not None:
        session.service.set_budget(build(SetBudget, {}, board=board, **given))
    shown = session.queries.budget(board)
    return documents.board_budget(shown.blackboard_id, shown.budget, shown.spent, shown.reserved)


def limit_tools(with_agent: bool) -> tuple[Tool, ...]:
    if with_agent:
        return ()
    return (
        Tool(
            "blackboard_budget",
            "Set (usd, tokens) or show a board's budget: its signals wait once runners have spent it.",
            derive(
                "BudgetArguments",
                SetBudget,
                named("board", "usd", "tokens", "set_by", "reason"),
                optional=("blackboard_id",),
                notes={"blackboard_id": ON_BOARD},
            ),
            budget,
        ),
    )
