"""nudges: a person's word reaches a running agent at its next turn (`blackboard nudge`)

A new event type, `AgentSignalNudged` (schema 1), and `AgentSignalClaimed` schema 5, whose `runner` says which
runner the claiming worker runs the claim with (its upcaster reads the older shape as none: such a claim takes
no nudge). The signal's row keeps that runner as `claim_runner` (NULL: a handler's run, a claim by hand) and
counts its nudges in `nudges`, which the worker running it watches. A release before this one stops at either
event with exit 6 (docs/persistence.md, "Mixed versions") and writes rows without the columns' values.

Revision ID: 0029
Revises: 0028
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0029"
down_revision: str | None = "0028"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("blackboard_signals", sa.Column("claim_runner", sa.String(length=40), nullable=True))
    op.add_column("blackboard_signals", sa.Column("nudges", sa.Integer(), nullable=False, server_default="0"))


def downgrade() -> None:
    op.drop_column("blackboard_signals", "nudges")
    op.drop_column("blackboard_signals", "claim_runner")
