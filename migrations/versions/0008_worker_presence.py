"""worker_presence: live workers announce themselves (not events), for expiry and `status`

A queued signal must not expire while a worker that fits it is busy: workers keep one row each fresh
with their beats (the capabilities and threshold they claim with, the boards they serve, what they run),
and a POSTED signal's post timeout runs only while no live worker fits it. Nothing to backfill: a row
exists only while (or shortly after) its worker runs.

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "worker_presence",
        sa.Column("worker_id", sa.String(300), nullable=False),
        sa.Column("agent_id", sa.String(200), nullable=False),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_beat_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("beat_seconds", sa.Float(), nullable=False),
        sa.Column("boards_json", sa.Text(), nullable=False),
        sa.Column("capabilities_json", sa.Text(), nullable=False),
        sa.Column("threshold", sa.Float(), nullable=False),
        sa.Column("running_json", sa.Text(), nullable=False),
        sa.Column("stopped_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("worker_id", name=op.f("pk_worker_presence")),
    )


def downgrade() -> None:
    op.drop_table("worker_presence")
