"""signals keep their attempts: the attempt under way, the post's max_attempts, and the attempts that failed

`post --max-attempts` and an agent file's `retries` (docs/control.md, "Retries"): a failed attempt with
attempts left puts the same signal back to POSTED (its `not_before` the retry's wait). Signals posted before
are on their first attempt, with no limit of their own and no failed attempt (their upcast events say so).

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "blackboard_signals", sa.Column("attempt", sa.Integer(), nullable=False, server_default="1")
    )
    op.add_column("blackboard_signals", sa.Column("max_attempts", sa.Integer(), nullable=True))
    op.add_column("blackboard_signals", sa.Column("attempts_json", sa.Text(), nullable=True))


def downgrade() -> None:
    op.drop_column("blackboard_signals", "attempts_json")
    op.drop_column("blackboard_signals", "max_attempts")
    op.drop_column("blackboard_signals", "attempt")
