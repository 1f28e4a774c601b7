"""webhook deliveries: gates that call a person (BLACKBOARD_WEBHOOKS)

`webhook_deliveries` holds one row per announcement of a gate (opened, approved, rejected, timed out,
cancelled) and URL: its body as sent, its status (pending, delivered, given up), its tries, the last answer
and when it is next due. No event changes; a release before this one never reads the table.

Revision ID: 0027
Revises: 0026
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0027"
down_revision: str | None = "0026"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

POSITION = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "webhook_deliveries",
        sa.Column("delivery_id", POSITION, autoincrement=True, nullable=False),
        sa.Column("blackboard_id", sa.String(200), nullable=False),
        sa.Column("signal_id", sa.String(12), nullable=False),
        sa.Column("event", sa.String(40), nullable=False),
        sa.Column("url", sa.String(2000), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("status", sa.String(12), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("last_status", sa.Integer(), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_try_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("next_try_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("gate_open", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("delivery_id", name=op.f("pk_webhook_deliveries")),
        sa.UniqueConstraint("signal_id", "event", "url", name=op.f("uq_webhook_deliveries_signal_id")),
    )
    op.create_index("ix_webhook_deliveries_due", "webhook_deliveries", ["status", "next_try_at"])
    op.create_index("ix_webhook_deliveries_board", "webhook_deliveries", ["blackboard_id", "delivery_id"])
    op.create_index("ix_webhook_deliveries_gate_open", "webhook_deliveries", ["gate_open"])


def downgrade() -> None:
    op.drop_table("webhook_deliveries")
