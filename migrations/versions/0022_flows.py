"""flows: a signal may be a step of a flow (`blackboard flow run`)

`AgentSignalPosted` schema 10 adds `flow_id` and `step_id` (its upcaster reads the older shape as no
flow), and the row keeps them, with an index by board and flow for `flow status`, `cancel --flow` and
`retry --flow`. Every signal posted before is of no flow (NULL). A release before this one stops at a
post of schema 10 with exit 6 (docs/persistence.md, "Mixed versions") and writes rows without a flow.

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0022"
down_revision: str | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("blackboard_signals", sa.Column("flow_id", sa.String(100), nullable=True))
    op.add_column("blackboard_signals", sa.Column("step_id", sa.String(64), nullable=True))
    op.create_index("ix_blackboard_signals_flow", "blackboard_signals", ["blackboard_id", "flow_id"])


def downgrade() -> None:
    op.drop_index("ix_blackboard_signals_flow", table_name="blackboard_signals")
    op.drop_column("blackboard_signals", "step_id")
    op.drop_column("blackboard_signals", "flow_id")
