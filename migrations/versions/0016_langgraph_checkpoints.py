"""langgraph checkpoints: the read model of `blackboard.langgraph.BlackboardSaver`

A LangGraph thread's checkpoints are events in a stream of its own (`<board>\\x1d<thread>`: CheckpointSaved,
CheckpointWritesSaved, CheckpointThreadDeleted, CheckpointsPruned); blackboard_checkpoints and
blackboard_checkpoint_writes hold the ones reads see. No event of these types was written before: the
tables start empty (a rebuild gives the same).

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

POSITION = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "blackboard_checkpoints",
        sa.Column("blackboard_id", sa.String(200), nullable=False),
        sa.Column("thread_id", sa.Text(), nullable=False),
        sa.Column("checkpoint_ns", sa.Text(), nullable=False),
        sa.Column("checkpoint_id", sa.Text(), nullable=False),
        sa.Column("parent_checkpoint_id", sa.Text(), nullable=True),
        sa.Column("run_id", sa.Text(), nullable=True),
        sa.Column("checkpoint_type", sa.Text(), nullable=False),
        sa.Column("checkpoint_data", sa.LargeBinary(), nullable=False),
        sa.Column("metadata_json", sa.Text(), nullable=True),
        sa.Column("metadata_type", sa.Text(), nullable=True),
        sa.Column("metadata_data", sa.LargeBinary(), nullable=True),
        sa.Column("position", POSITION, nullable=False),
        sa.PrimaryKeyConstraint(
            "blackboard_id", "thread_id", "checkpoint_ns", "checkpoint_id", name="pk_blackboard_checkpoints"
        ),
    )
    op.create_index("ix_blackboard_checkpoints_run", "blackboard_checkpoints", ["blackboard_id", "run_id"])
    op.create_table(
        "blackboard_checkpoint_writes",
        sa.Column("blackboard_id", sa.String(200), nullable=False),
        sa.Column("thread_id", sa.Text(), nullable=False),
        sa.Column("checkpoint_ns", sa.Text(), nullable=False),
        sa.Column("checkpoint_id", sa.Text(), nullable=False),
        sa.Column("task_id", sa.Text(), nullable=False),
        sa.Column("idx", sa.Integer(), nullable=False),
        sa.Column("task_path", sa.Text(), nullable=False),
        sa.Column("channel", sa.Text(), nullable=False),
        sa.Column("value_type", sa.Text(), nullable=False),
        sa.Column("value_data", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint(
            "blackboard_id",
            "thread_id",
            "checkpoint_ns",
            "checkpoint_id",
            "task_id",
            "idx",
            name="pk_blackboard_checkpoint_writes",
        ),
    )


def downgrade() -> None:
    op.drop_table("blackboard_checkpoint_writes")
    op.drop_index("ix_blackboard_checkpoints_run", table_name="blackboard_checkpoints")
    op.drop_table("blackboard_checkpoints")
