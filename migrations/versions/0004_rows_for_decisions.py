"""commands decide on the rows they touch: indexes for the dedupe key and retry chains; snapshots go

A command now loads, under its board's lock, only the read-model rows its decision reads: a post
looks its dedupe key up (blackboard_id, dedupe_key) and a retry follows `retry_of`. Whole-board
snapshots served the per-process board cache, which is gone.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_blackboard_signals_key", "blackboard_signals", ["blackboard_id", "dedupe_key"])
    op.create_index("ix_blackboard_signals_retry_of", "blackboard_signals", ["retry_of"])
    op.drop_table("snapshots")


def downgrade() -> None:
    op.create_table(
        "snapshots",
        sa.Column("stream_id", sa.String(200), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("schema_version", sa.Integer(), nullable=False),
        sa.Column("state", sa.Text(), nullable=False),
        sa.Column("taken_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("stream_id", name="pk_snapshots"),
    )
    op.drop_index("ix_blackboard_signals_retry_of", table_name="blackboard_signals")
    op.drop_index("ix_blackboard_signals_key", table_name="blackboard_signals")
