"""signals carry a budget and a runner's usage; signal_usage holds one row per run for the totals

A signal posted with `--budget-usd` keeps it in its row, and a completion or failure that a runner
recorded keeps the run's usage (tokens, cost, turns, duration, model, transcript) in `usage_json`, for
its document. `signal_usage` holds the same runs as numbers, one row each, so `summary` and `status`
total them per board and agent with GROUP BYs. Signals ended before have no usage (their upcast events
say so): nothing to fill in.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("blackboard_signals", sa.Column("budget_usd", sa.Float(), nullable=True))
    op.add_column("blackboard_signals", sa.Column("usage_json", sa.Text(), nullable=True))
    op.create_table(
        "signal_usage",
        sa.Column("signal_id", sa.String(12), nullable=False),
        sa.Column("blackboard_id", sa.String(200), nullable=False),
        sa.Column("agent", sa.String(200), nullable=False),
        sa.Column("runner", sa.String(40), nullable=False),
        sa.Column("model", sa.String(200), nullable=True),
        sa.Column("input_tokens", sa.BigInteger(), nullable=False),
        sa.Column("output_tokens", sa.BigInteger(), nullable=False),
        sa.Column("cost_usd", sa.Float(), nullable=True),
        sa.Column("turns", sa.Integer(), nullable=False),
        sa.Column("duration_ms", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("signal_id", name="pk_signal_usage"),
    )
    op.create_index("ix_signal_usage_board", "signal_usage", ["blackboard_id", "agent"])


def downgrade() -> None:
    op.drop_index("ix_signal_usage_board", table_name="signal_usage")
    op.drop_table("signal_usage")
    op.drop_column("blackboard_signals", "usage_json")
    op.drop_column("blackboard_signals", "budget_usd")
