"""events, snapshots and the signal read model

Revision ID: 0001
Revises: (none)
Create Date: 2026-11-22 02:44:44.562278
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "blackboard_signals",
        sa.Column("signal_id", sa.String(length=12), nullable=False),
        sa.Column("blackboard_id", sa.String(length=200), nullable=False),
        sa.Column("signal_type", sa.String(length=20), nullable=False),
        sa.Column("payload_json", sa.Text(), nullable=False),
        sa.Column("target_capabilities", sa.Text(), nullable=False),
        sa.Column("posted_by", sa.String(length=200), nullable=False),
        sa.Column("claimed_by", sa.String(length=200), nullable=True),
        sa.Column("status", sa.String(length=12), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("completed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("result_json", sa.Text(), nullable=True),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("after_json", sa.Text(), nullable=False),
        sa.Column("waiting_json", sa.Text(), nullable=False),
        sa.Column("waiting", sa.Integer(), nullable=False),
        sa.Column("claimable_since", sa.DateTime(timezone=True), nullable=True),
        sa.Column("dedupe_key", sa.String(length=200), nullable=True),
        sa.PrimaryKeyConstraint("signal_id", name=op.f("pk_blackboard_signals")),
    )
    with op.batch_alter_table("blackboard_signals", schema=None) as batch_op:
        batch_op.create_index("ix_blackboard_signals_board", ["blackboard_id", "created_at"], unique=False)
        batch_op.create_index("ix_blackboard_signals_open", ["status", "waiting", "created_at"], unique=False)
        batch_op.create_index("ix_blackboard_signals_type", ["signal_type", "created_at"], unique=False)

    op.create_table(
        "events",
        sa.Column(
            "position",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("event_id", sa.String(length=36), nullable=False),
        sa.Column("stream_id", sa.String(length=200), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("event_type", sa.String(length=100), nullable=False),
        sa.Column("schema_version", sa.Integer(), nullable=False),
        sa.Column("data", sa.Text(), nullable=False),
        sa.Column("metadata", sa.Text(), nullable=False),
        sa.Column("occurred_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("position", name=op.f("pk_events")),
        sa.UniqueConstraint("event_id", name=op.f("uq_events_event_id")),
        sa.UniqueConstraint("stream_id", "version", name=op.f("uq_events_stream_id")),
    )
    op.create_table(
        "projection_checkpoints",
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("position", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_projection_checkpoints")),
    )
    op.create_table(
        "signal_capabilities",
        sa.Column("signal_id", sa.String(length=12), nullable=False),
        sa.Column("capability", sa.String(length=200), nullable=False),
        sa.PrimaryKeyConstraint("signal_id", "capability", name=op.f("pk_signal_capabilities")),
    )
    with op.batch_alter_table("signal_capabilities", schema=None) as batch_op:
        batch_op.create_index("ix_signal_capabilities_capability", ["capability", "signal_id"], unique=False)

    op.create_table(
        "signal_dependencies",
        sa.Column("signal_id", sa.String(length=12), nullable=False),
        sa.Column("upstream_id", sa.String(length=12), nullable=False),
        sa.PrimaryKeyConstraint("signal_id", "upstream_id", name=op.f("pk_signal_dependencies")),
    )
    with op.batch_alter_table("signal_dependencies", schema=None) as batch_op:
        batch_op.create_index("ix_signal_dependencies_upstream", ["upstream_id"], unique=False)

    op.create_table(
        "snapshots",
        sa.Column("stream_id", sa.String(length=200), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("schema_version", sa.Integer(), nullable=False),
        sa.Column("state", sa.Text(), nullable=False),
        sa.Column("taken_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("stream_id", name=op.f("pk_snapshots")),
    )


def downgrade() -> None:
    op.drop_table("snapshots")
    with op.batch_alter_table("signal_dependencies", schema=None) as batch_op:
        batch_op.drop_index("ix_signal_dependencies_upstream")

    op.drop_table("signal_dependencies")
    with op.batch_alter_table("signal_capabilities", schema=None) as batch_op:
        batch_op.drop_index("ix_signal_capabilities_capability")

    op.drop_table("signal_capabilities")
    op.drop_table("projection_checkpoints")
    op.drop_table("events")
    with op.batch_alter_table("blackboard_signals", schema=None) as batch_op:
        batch_op.drop_index("ix_blackboard_signals_type")
        batch_op.drop_index("ix_blackboard_signals_open")
        batch_op.drop_index("ix_blackboard_signals_board")

    op.drop_table("blackboard_signals")
