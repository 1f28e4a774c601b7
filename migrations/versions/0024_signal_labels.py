"""signal labels: a post may carry labels (`post --label`), which `signals`, `next`, `status` and `watch` filter by

`AgentSignalPosted` schema 11 adds `payload.labels` (its upcaster reads the older shape as no labels), and the
signal's row keeps them as `labels_json`, a JSON array of them, which a `--label` filter reads (NULL: none;
every signal posted before is unlabelled). A release before this one stops at a post of schema 11 with exit
6 (docs/persistence.md, "Mixed versions") and writes rows without the column's value.

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0024"
down_revision: str | None = "0023"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("blackboard_signals", sa.Column("labels_json", sa.Text(), nullable=True))


def downgrade() -> None:
    op.drop_column("blackboard_signals", "labels_json")
