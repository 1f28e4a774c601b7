"""entry_numbers: a signal's entry number, so a post that leaves its entry id out is numbered on an index

`post` no longer needs `--entry-id`: a post that leaves it out takes `e-(N+1)`, N the highest entry number of
its board's signals, read in the post's transaction under the board's hold. `blackboard_signals.entry_number`
holds the N of each row's payload `entry_id` (`e-N`), and `ix_blackboard_signals_entry` (board, number) finds
the highest without reading the board's rows: a count or a scan of the payloads cost a defaulted post on a
board of 100,000 signals about 25 ms more than one on a board of 10. The rows already there get theirs from
their payloads here; an N past 64 bits stays NULL (as the fold leaves it). No event changes: the number is the
payload's, read again by a rebuild. A release before this one leaves the column NULL on the rows it writes,
which only lets a numbered post take an N such a row already has.

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# the digits of the payload's `entry_id` ("e-N": the signal schema's ^e-[0-9]+$), read as each database reads
# JSON text; at most 18 of them, so every value fits in 64 bits
DIGITS = {
    "sqlite": "substr(json_extract(payload_json, '$.entry_id'), 3)",
    "postgresql": "substr(CAST(payload_json AS json) ->> 'entry_id', 3)",
}


def upgrade() -> None:
    op.add_column("blackboard_signals", sa.Column("entry_number", sa.BigInteger(), nullable=True))
    digits = DIGITS[op.get_bind().dialect.name]
    op.execute(
        f"UPDATE blackboard_signals SET entry_number = CAST({digits} AS BIGINT) "
        f"WHERE length({digits}) BETWEEN 1 AND 18"
    )
    op.create_index("ix_blackboard_signals_entry", "blackboard_signals", ["blackboard_id", "entry_number"])


def downgrade() -> None:
    op.drop_index("ix_blackboard_signals_entry", table_name="blackboard_signals")
    op.drop_column("blackboard_signals", "entry_number")
