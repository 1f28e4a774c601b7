"""signal_timeouts: a gate's own timeout becomes any signal's (`post --timeout`)

Work waits for its worker by default: the default post timeout is off, and a signal posted with a
timeout of its own expires once it has waited that long with no live worker that fits it (a gate: that
long after it opened, as before). `AgentSignalPosted` schema 9 renames `gate_timeout_s` to `timeout_s`
(its upcaster reads the older shape), and so the row's columns: `gate_timeout_s` becomes `timeout_s`,
`gate_expires_at` becomes `expires_at` (the earliest a signal with its own timeout expires unclaimed,
for the sweep's query). Values are kept: only gates had one before. Code before this revision selects
the old names and reads posts of schema 8 at most (a post of schema 9 stops it with exit 6): it must
not run beside this one, which `OLDEST_READER` says once the release that ships it is numbered.

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-28
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

RENAMED = (("gate_timeout_s", "timeout_s"), ("gate_expires_at", "expires_at"))


def upgrade() -> None:
    # ALTER TABLE ... RENAME COLUMN: SQLite (3.25 on) and PostgreSQL rename in place, without copying rows
    for old, new in RENAMED:
        op.execute(f"ALTER TABLE blackboard_signals RENAME COLUMN {old} TO {new}")


def downgrade() -> None:
    for old, new in RENAMED:
        op.execute(f"ALTER TABLE blackboard_signals RENAME COLUMN {new} TO {old}")
