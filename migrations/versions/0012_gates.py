"""signals may be gates: a person approves or rejects them (`post --gate`, `approve`, `reject`)

A gate is never a worker's candidate (`gate` is true), expires only by its own timeout (`gate_timeout_s`,
with `gate_expires_at` kept for the sweep's query once it opens), and records who decided it and why
(`decided_by`, `decision_note`). Every signal posted before is not a gate (its upcast event says so).

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "blackboard_signals", sa.Column("gate", sa.Boolean(), nullable=False, server_default=sa.false())
    )
    op.add_column("blackboard_signals", sa.Column("gate_timeout_s", sa.Float(), nullable=True))
    op.add_column(
        "blackboard_signals", sa.Column("gate_expires_at", sa.DateTime(timezone=True), nullable=True)
    )
    op.add_column("blackboard_signals", sa.Column("decided_by", sa.String(200), nullable=True))
    op.add_column("blackboard_signals", sa.Column("decision_note", sa.Text(), nullable=True))


def downgrade() -> None:
    for column in ("decision_note", "decided_by", "gate_expires_at", "gate_timeout_s", "gate"):
        op.drop_column("blackboard_signals", column)
