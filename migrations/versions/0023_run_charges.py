"""run charges: a run whose outcome was refused (its claim ended by another hand) is charged to its board

A new event type, `AgentSignalRunCharged` (schema 1), naming the attempt whose run it charges: the migration
records the type in `blackboard_event_schemas` before this release writes one (docs/persistence.md, "Mixed
versions"), and adds `charged_attempts_json` to the signal's row: the attempts whose run was charged, so each
is charged once (NULL: none; every signal before this release has none). A release before this one stops at
such an event with exit 6, naming the release to upgrade to, and writes rows without the column's value.

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0023"
down_revision: str | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("blackboard_signals", sa.Column("charged_attempts_json", sa.Text(), nullable=True))


def downgrade() -> None:
    op.drop_column("blackboard_signals", "charged_attempts_json")
