"""signal_capabilities holds each target in upper case: capability names match in any case

Capabilities are compared in one case now (`review` and `REVIEW` are one capability). The index of open
signals by capability holds that form, and queries ask for it; rows written before hold targets as
posted, so they are rewritten here (a signal that named one capability in two cases keeps one row). The
events, and the signal's own `target_capabilities`, keep what was posted.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ROWS = sa.table("signal_capabilities", sa.column("signal_id", sa.String), sa.column("capability", sa.String))


def upgrade() -> None:
    conn = op.get_bind()
    # in Python, not SQL's UPPER: SQLite's upper-cases ASCII only, and the application uses str.upper
    rows = [(r.signal_id, r.capability) for r in conn.execute(sa.select(ROWS.c.signal_id, ROWS.c.capability))]
    stale = [(sid, cap) for sid, cap in rows if cap.strip().upper() != cap]
    if not stale:
        return
    kept = {(sid, cap) for sid, cap in rows if cap.strip().upper() == cap}
    for sid, cap in stale:
        conn.execute(sa.delete(ROWS).where(ROWS.c.signal_id == sid, ROWS.c.capability == cap))
        if (sid, cap.strip().upper()) not in kept:
            kept.add((sid, cap.strip().upper()))
            conn.execute(sa.insert(ROWS).values(signal_id=sid, capability=cap.strip().upper()))


def downgrade() -> None:
    pass  # upper-case rows are as good as any for the older code, which compared as posted: nothing to undo
