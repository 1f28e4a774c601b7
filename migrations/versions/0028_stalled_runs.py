"""stalled runs: a run that showed no progress for its agent file's `stall_timeout` is recorded as stalled

A new event type, `AgentSignalStalled` (schema 1), recorded with the failure of the attempt whose run stalled:
the migration records the type in `blackboard_event_schemas` before this release writes one (docs/persistence.md,
"Mixed versions"), and adds to the signal's row `stalls_json` (the attempts that stalled: NULL, none) and
`stalls` (how many, 0 for every signal before this release), with a partial index on the rows that stalled,
which `status` and /metrics count per board. A release before this one stops at such an event with exit 6,
naming the release to upgrade to, and writes rows without the columns' values (none stalled).

Revision ID: 0028
Revises: 0027
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0028"
down_revision: str | None = "0027"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("blackboard_signals", sa.Column("stalls_json", sa.Text(), nullable=True))
    op.add_column("blackboard_signals", sa.Column("stalls", sa.Integer(), nullable=False, server_default="0"))
    op.create_index(
        "ix_blackboard_signals_stalled",
        "blackboard_signals",
        ["blackboard_id"],
        sqlite_where=sa.text("stalls > 0"),
        postgresql_where=sa.text("stalls > 0"),
    )


def downgrade() -> None:
    op.drop_index("ix_blackboard_signals_stalled", table_name="blackboard_signals")
    op.drop_column("blackboard_signals", "stalls")
    op.drop_column("blackboard_signals", "stalls_json")
