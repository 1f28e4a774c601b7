"""signals carry a priority (0, most urgent, to 4), and the open-signals index leads with it; and a not_before

`post --priority` (docs/control.md): a worker's candidates come most urgent first, then oldest, so the
index behind them (status, waiting, created_at, signal_id) gains `priority` before `created_at` and a
limit still stops the walk early. Signals posted before have the default, 2 (their upcast events say so).
`post --not-before` keeps the time before which a signal is not claimable; NULL (claimable at once) for
every signal posted before.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OPEN = ["status", "waiting", "created_at", "signal_id"]


def upgrade() -> None:
    op.add_column(
        "blackboard_signals", sa.Column("priority", sa.Integer(), nullable=False, server_default="2")
    )
    op.add_column("blackboard_signals", sa.Column("not_before", sa.DateTime(timezone=True), nullable=True))
    op.drop_index("ix_blackboard_signals_open", table_name="blackboard_signals")
    op.create_index(
        "ix_blackboard_signals_open",
        "blackboard_signals",
        ["status", "waiting", "priority", "created_at", "signal_id"],
    )


def downgrade() -> None:
    op.drop_index("ix_blackboard_signals_open", table_name="blackboard_signals")
    op.create_index("ix_blackboard_signals_open", "blackboard_signals", OPEN)
    op.drop_column("blackboard_signals", "not_before")
    op.drop_column("blackboard_signals", "priority")
