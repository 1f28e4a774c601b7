"""run output: the lines a worker keeps while it runs a signal, for `show --follow` on any host

`run_output` holds one row per line of a run's output (a runner's transcript record, a command handler's
stdout or stderr line), numbered per signal and attempt, bounded per run and dropped after a week by a
worker's start (docs/persistence.md, "Run output"). Not events. An older release neither writes nor reads
it: it runs beside this one unchanged (its runs just have no output to follow).

Revision ID: 0026
Revises: 0025
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0026"
down_revision: str | None = "0025"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "run_output",
        sa.Column("signal_id", sa.String(12), nullable=False),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("sequence", sa.Integer(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("stream", sa.String(16), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("signal_id", "attempt", "sequence", name=op.f("pk_run_output")),
    )
    op.create_index("ix_run_output_at", "run_output", ["at"])


def downgrade() -> None:
    op.drop_index("ix_run_output_at", table_name="run_output")
    op.drop_table("run_output")
