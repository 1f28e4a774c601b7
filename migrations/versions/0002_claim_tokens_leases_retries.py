"""claim tokens, lease renewals and retries in the signal read model

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("blackboard_signals", schema=None) as batch_op:
        batch_op.add_column(sa.Column("retry_of", sa.String(length=12), nullable=True))
        batch_op.add_column(sa.Column("claim_token", sa.String(length=100), nullable=True))
        batch_op.add_column(sa.Column("renewed_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("blackboard_signals", schema=None) as batch_op:
        batch_op.drop_column("renewed_at")
        batch_op.drop_column("claim_token")
        batch_op.drop_column("retry_of")
