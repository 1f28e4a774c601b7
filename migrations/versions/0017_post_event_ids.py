"""post_event_ids: each signal row names its post's event

`blackboard_signals.post_event_id` holds the event_id of the signal's AgentSignalPosted, so a tracer
joining a claim to the post's trace (infrastructure/tracing/otel.py) reads the post's metadata by two unique
indexes (the row's key, the events' event_id) instead of scanning the board's events for it. The
projection writes it with the row; here the rows already on the database get theirs from the log, in
one pass over its posts. A row an older release writes beside this one has none (NULL): its claims
then start a trace of their own, as a post with no event does.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-27
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

PAGE = 5000
POSTS = sa.text(
    "SELECT position, event_id, data FROM events WHERE event_type = 'AgentSignalPosted' AND position > :after"
    " ORDER BY position LIMIT :limit"
)
SET = sa.text("UPDATE blackboard_signals SET post_event_id = :event_id WHERE signal_id = :signal_id")


def upgrade() -> None:
    op.add_column("blackboard_signals", sa.Column("post_event_id", sa.String(36), nullable=True))
    conn = op.get_bind()
    after = 0
    while page := conn.execute(POSTS, {"after": after, "limit": PAGE}).all():
        conn.execute(
            SET,
            [
                {"event_id": event_id, "signal_id": json.loads(data)["signal_id"]}
                for _, event_id, data in page
            ],
        )
        after = page[-1][0]


def downgrade() -> None:
    op.drop_column("blackboard_signals", "post_event_id")
