"""signals carry key permissions: the entry keys their claimer may read and write

A signal posted with `--read-key`/`--write-key` keeps its lists in its read-model row, so a write or
read naming it checks them (with its claimer, token and lease) from that one row. Signals posted
before have no lists (NULL): they restrict nothing, as their upcast events say.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("blackboard_signals", sa.Column("keys_json", sa.Text(), nullable=True))


def downgrade() -> None:
    op.drop_column("blackboard_signals", "keys_json")
