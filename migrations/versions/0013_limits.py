"""limits: a signal's row keeps its claimer's concurrency key, and board_budgets holds each board's budget

`concurrency: {key, max}` in agent files (docs/control.md, "Limits"): a claim counts the signals CLAIMED
under its key, on every board, inside its transaction, through the index (concurrency_key, status).
`blackboard budget` records BoardBudgetSet in the board's stream; board_budgets keeps the last one per
board, and whether what its runs spent has reached it (`reached`: workers leave its signals out of their
candidates). Claims before have no key, and no board had a budget: nothing to fill in (a rebuild gives the same).

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("blackboard_signals", sa.Column("concurrency_key", sa.String(200), nullable=True))
    op.create_index("ix_blackboard_signals_concurrency", "blackboard_signals", ["concurrency_key", "status"])
    op.create_table(
        "board_budgets",
        sa.Column("blackboard_id", sa.String(200), nullable=False),
        sa.Column("usd", sa.Float(), nullable=True),
        sa.Column("tokens", sa.BigInteger(), nullable=True),
        sa.Column("reached", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.PrimaryKeyConstraint("blackboard_id", name="pk_board_budgets"),
    )


def downgrade() -> None:
    op.drop_table("board_budgets")
    op.drop_index("ix_blackboard_signals_concurrency", table_name="blackboard_signals")
    op.drop_column("blackboard_signals", "concurrency_key")
