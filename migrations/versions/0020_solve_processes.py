"""solve_processes: which process drives each solve run, and solve runs that can be resumed

`solve_processes` holds one row per solve run, kept fresh by its process's beats (as `worker_presence` is a
worker's), so `solve --status` tells a running run whose process is gone (`orphaned`) on any host, and
`solve --resume` takes such a run up. The events this release writes besides: `SolveStarted` schema 2 (the
options a resume continues with) and `SolveResumed`; older releases stop at them (UpgradeNeeded) rather
than misread them. A run started before this revision has no row: it shows as `orphaned` while running.

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "solve_processes",
        sa.Column("blackboard_id", sa.String(200), nullable=False),
        sa.Column("run_id", sa.String(200), nullable=False),
        sa.Column("holder", sa.String(64), nullable=False),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_beat_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("beat_seconds", sa.Float(), nullable=False),
        sa.Column("stopped_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("blackboard_id", "run_id", name=op.f("pk_solve_processes")),
    )


def downgrade() -> None:
    op.drop_table("solve_processes")
