"""entries: keyed knowledge on a board, each key its own stream; the entry read model

An entry key's stream id is `<board>\\x1f<key>`, so `events.stream_id` widens from 200 to 401
characters. `blackboard_entries` holds each key's current version and open conflict candidates;
`entry_topics` indexes the topics each current version was published to.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-24
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

Position = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
KeyText = sa.String(200).with_variant(sa.String(200, collation="C"), "postgresql")  # byte order, as tables.py


def upgrade() -> None:
    with op.batch_alter_table("events") as batch:
        batch.alter_column(
            "stream_id", type_=sa.String(401), existing_type=sa.String(200), existing_nullable=False
        )
    op.create_table(
        "blackboard_entries",
        sa.Column("blackboard_id", sa.String(200), nullable=False),
        sa.Column("key", KeyText, nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("current_version", sa.Integer(), nullable=False),
        sa.Column("author", sa.String(200), nullable=False),
        sa.Column("entry_type", sa.String(20), nullable=False),
        sa.Column("section", sa.String(200), nullable=False),
        sa.Column("role", sa.String(200), nullable=False),
        sa.Column("label", sa.String(200), nullable=False),
        sa.Column("signal_id", sa.String(12), nullable=True),
        sa.Column("position", Position, nullable=False),
        sa.Column("candidates", sa.Integer(), nullable=False),
        sa.Column("state_json", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("blackboard_id", "key", name="pk_blackboard_entries"),
    )
    op.create_index("ix_blackboard_entries_author", "blackboard_entries", ["blackboard_id", "author", "key"])
    op.create_table(
        "entry_topics",
        sa.Column("blackboard_id", sa.String(200), nullable=False),
        sa.Column("topic", sa.String(200), nullable=False),
        sa.Column("key", KeyText, nullable=False),
        sa.PrimaryKeyConstraint("blackboard_id", "topic", "key", name="pk_entry_topics"),
    )
    op.create_index("ix_entry_topics_key", "entry_topics", ["blackboard_id", "key"])


def downgrade() -> None:
    op.drop_index("ix_entry_topics_key", table_name="entry_topics")
    op.drop_table("entry_topics")
    op.drop_index("ix_blackboard_entries_author", table_name="blackboard_entries")
    op.drop_table("blackboard_entries")
    with op.batch_alter_table("events") as batch:
        batch.alter_column(
            "stream_id", type_=sa.String(200), existing_type=sa.String(401), existing_nullable=False
        )
