"""reservations: what open claims reserved of their board's budget, what each budgeted board spent, and
what `solve` controllers' runs cost

A claim by an agent whose runs record usage reserves what its run may spend (docs/control.md, "Limits"):
`blackboard_signals.reserved_usd` and `reserved_tokens` keep it, counted while the signal is CLAIMED, found
through a partial index of the claimed rows of each board. `board_budgets.spent_usd` and `spent_tokens`
keep what the board's runs spent, beside `reached`, so a claim reads them with the budget. `solve_usage`
holds each run of a solve controller as its event recorded it (the controller as agent), which the
budget, `summary`, `status` and `/metrics` count with the board's runs. Claims before reserved nothing;
the controllers' runs already in the log are read into `solve_usage` here, and every board's spent and
`reached` worked out again with them.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-28
"""

from __future__ import annotations

import json
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

PAGE = 5000
CONTROLLER_RUNS = sa.text(
    "SELECT position, event_id, stream_id, data FROM events WHERE event_type IN "
    "('SolveStepPosted', 'SolveDecisionFailed', 'SolveSolved') AND position > :after ORDER BY position LIMIT :limit"
)
SOLVE_SEPARATOR = "\x1e"  # domain/events.py: a solve run's stream is `<board>\x1e<run>`
SPENT = sa.text(
    "UPDATE board_budgets SET"
    " spent_usd = COALESCE((SELECT SUM(cost_usd) FROM signal_usage u"
    " WHERE u.blackboard_id = board_budgets.blackboard_id), 0)"
    " + COALESCE((SELECT SUM(cost_usd) FROM solve_usage s WHERE s.blackboard_id = board_budgets.blackboard_id), 0),"
    " spent_tokens = COALESCE((SELECT SUM(input_tokens + output_tokens) FROM signal_usage u"
    " WHERE u.blackboard_id = board_budgets.blackboard_id), 0)"
    " + COALESCE((SELECT SUM(input_tokens + output_tokens) FROM solve_usage s"
    " WHERE s.blackboard_id = board_budgets.blackboard_id), 0)"
)
REACHED = sa.text(
    "UPDATE board_budgets SET reached = ((usd IS NOT NULL AND spent_usd >= usd)"
    " OR (tokens IS NOT NULL AND spent_tokens >= tokens))"
)


def upgrade() -> None:
    op.add_column("blackboard_signals", sa.Column("reserved_usd", sa.Float(), nullable=True))
    op.add_column("blackboard_signals", sa.Column("reserved_tokens", sa.BigInteger(), nullable=True))
    op.create_index(
        "ix_blackboard_signals_claimed",
        "blackboard_signals",
        ["blackboard_id"],
        sqlite_where=sa.text("status = 'CLAIMED'"),
        postgresql_where=sa.text("status = 'CLAIMED'"),
    )
    op.add_column("board_budgets", sa.Column("spent_usd", sa.Float(), nullable=False, server_default="0"))
    op.add_column(
        "board_budgets", sa.Column("spent_tokens", sa.BigInteger(), nullable=False, server_default="0")
    )
    solve_usage = op.create_table(
        "solve_usage",
        sa.Column("event_id", sa.String(36), nullable=False),
        sa.Column("blackboard_id", sa.String(200), nullable=False),
        sa.Column("agent", sa.String(200), nullable=False),
        sa.Column("runner", sa.String(40), nullable=False),
        sa.Column("model", sa.String(200), nullable=True),
        sa.Column("input_tokens", sa.BigInteger(), nullable=False),
        sa.Column("output_tokens", sa.BigInteger(), nullable=False),
        sa.Column("cost_usd", sa.Float(), nullable=True),
        sa.Column("turns", sa.Integer(), nullable=False),
        sa.Column("duration_ms", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("event_id", name="pk_solve_usage"),
    )
    op.create_index("ix_solve_usage_board", "solve_usage", ["blackboard_id", "agent"])
    conn = op.get_bind()
    after = 0
    while page := conn.execute(CONTROLLER_RUNS, {"after": after, "limit": PAGE}).all():
        rows = []
        for _, event_id, stream_id, data in page:
            fields = json.loads(data)
            usage = fields.get("usage")
            if usage:
                rows.append(
                    {
                        "event_id": event_id,
                        "blackboard_id": stream_id.split(SOLVE_SEPARATOR, 1)[0],
                        "agent": fields["actor"],
                        "runner": usage["runner"],
                        "model": usage.get("model"),
                        "input_tokens": usage.get("input_tokens", 0),
                        "output_tokens": usage.get("output_tokens", 0),
                        "cost_usd": usage.get("cost_usd"),
                        "turns": usage.get("turns", 0),
                        "duration_ms": usage.get("duration_ms", 0),
                    }
                )
        if rows:
            op.bulk_insert(solve_usage, rows)
        after = page[-1][0]
    conn.execute(SPENT)
    conn.execute(REACHED)


def downgrade() -> None:
    op.drop_index("ix_solve_usage_board", table_name="solve_usage")
    op.drop_table("solve_usage")
    op.drop_column("board_budgets", "spent_tokens")
    op.drop_column("board_budgets", "spent_usd")
    op.drop_index("ix_blackboard_signals_claimed", table_name="blackboard_signals")
    op.drop_column("blackboard_signals", "reserved_tokens")
    op.drop_column("blackboard_signals", "reserved_usd")
