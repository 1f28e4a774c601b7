"""the open-signals index ends in the query's full sort order (created_at, signal_id)

Candidates are read `ORDER BY created_at, signal_id LIMIT n`. With the index ending at created_at,
PostgreSQL sorted every open signal to return the first n (33 ms on a backlog of 5,000, once per
worker round); with signal_id in it, the index walk is the order and stops after n rows (1.7 ms).

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.drop_index("ix_blackboard_signals_open", table_name="blackboard_signals")
    op.create_index(
        "ix_blackboard_signals_open", "blackboard_signals", ["status", "waiting", "created_at", "signal_id"]
    )


def downgrade() -> None:
    op.drop_index("ix_blackboard_signals_open", table_name="blackboard_signals")
    op.create_index("ix_blackboard_signals_open", "blackboard_signals", ["status", "waiting", "created_at"])
