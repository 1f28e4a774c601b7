"""which blackboard versions may run side by side on one database, and which wrote each event schema

Two tables, written by `blackboard db upgrade` (persistence/schema.py, `record_versions`) after the
migrations run:
- `blackboard_schema_versions`: per revision, the release that applied it and the oldest release that
  may still run against a database at it (`oldest_reader`). A process whose code stops at an older
  revision runs on beside a newer one only if it is that old or newer; otherwise it stops at start-up
  naming the release to upgrade to.
- `blackboard_event_schemas`: per event type and schema version, the first release that wrote it. A
  reader that meets an event it cannot read (a type it does not know, a schema version above its own)
  stops naming that release, and never skips or misreads the event.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "blackboard_schema_versions",
        sa.Column("revision", sa.String(32), primary_key=True),
        sa.Column("written_by", sa.String(64), nullable=False),
        sa.Column("oldest_reader", sa.String(64), nullable=False),
        sa.Column("applied_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.create_table(
        "blackboard_event_schemas",
        sa.Column("event_type", sa.String(100), primary_key=True),
        sa.Column("schema_version", sa.Integer(), primary_key=True),
        sa.Column("written_by", sa.String(64), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("blackboard_event_schemas")
    op.drop_table("blackboard_schema_versions")
