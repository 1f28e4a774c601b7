"""run charges: a run whose outcome was refused (its claim ended by another hand) is charged to its board

A new event type, `AgentSignalRunCharged` (schema 1): no table changes; the migration exists so this release
records the type in `blackboard_event_schemas` before it writes one (docs/persistence.md, "Mixed versions"). A
release before this one stops at such an event with exit 6, naming the release to upgrade to.

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

revision: str = "0023"
down_revision: str | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
