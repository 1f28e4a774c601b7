"""rate windows: a rate limit's window (`rate_limit: {key, requests_per_minute, tokens_per_minute}`), one row per key

Every agent naming the key, on every board and host of the database, takes its calls' room from the key's row
(docs/control.md, "Rate limits"). The rows are the limits' own state, not a projection of the log: a rebuild
leaves them, and a release before this one ignores them (its claims do not know rate limits).

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0025"
down_revision: str | None = "0024"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "blackboard_rate_windows",
        sa.Column("key", sa.String(200), primary_key=True),
        sa.Column("requests", sa.Float(), nullable=False),
        sa.Column("tokens", sa.Float(), nullable=False),
        sa.Column("per_call", sa.Float(), nullable=False, server_default="0"),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("closed_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("requests_per_minute", sa.Integer(), nullable=True),
        sa.Column("tokens_per_minute", sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_blackboard_rate_windows")),
    )


def downgrade() -> None:
    op.drop_table("blackboard_rate_windows")
