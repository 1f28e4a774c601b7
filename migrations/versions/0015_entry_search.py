"""entry_search: the search index over entries, each database's own full-text engine

`blackboard search` finds a board's current entries by the words of their key, value strings, topics and
author (application/knowledge/search.py). Each database indexes those words in its own engine
(infrastructure/persistence/knowledge/search.py):
- SQLite: `entry_search_text` (one row per entry key: an id, the board, the key, its words) and the FTS5
  table `entry_search` over it (external content: the words are kept once), ranked by bm25.
- PostgreSQL: `entry_search` (board, key, the words' tsvector in the `simple` configuration) under a GIN
  index, ranked by ts_rank.
The projection keeps them current with the entry rows; here the entries already on the database are
indexed, by this release's words rule. These tables are not in the models (tables.py): `alembic check`
leaves out every table named `entry_search*` (migrations/env.py).

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-27
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# as tables.py's ENTRY_SEARCH_DDL, which `create_all` runs, spelled here as this revision made them
SQLITE = (
    "CREATE TABLE entry_search_text (id INTEGER PRIMARY KEY, blackboard_id VARCHAR(200) NOT NULL,"
    " key VARCHAR(200) NOT NULL, words TEXT NOT NULL, UNIQUE (blackboard_id, key))",
    "CREATE VIRTUAL TABLE entry_search USING fts5(words, content='entry_search_text', content_rowid='id',"
    " tokenize='unicode61 remove_diacritics 0')",
)
POSTGRESQL = (
    'CREATE TABLE entry_search (blackboard_id VARCHAR(200) NOT NULL, key VARCHAR(200) COLLATE "C" NOT NULL,'
    " vector TSVECTOR NOT NULL, CONSTRAINT pk_entry_search PRIMARY KEY (blackboard_id, key))",
    "CREATE INDEX ix_entry_search_vector ON entry_search USING gin (vector)",
)


def upgrade() -> None:
    conn = op.get_bind()
    for statement in SQLITE if conn.dialect.name == "sqlite" else POSTGRESQL:
        conn.execute(sa.text(statement))
    from blackboard.infrastructure.persistence.knowledge.search import entry_index

    entry_index(conn).fill(conn)  # the entries written before this revision


def downgrade() -> None:
    conn = op.get_bind()
    conn.execute(sa.text("DROP TABLE IF EXISTS entry_search"))
    conn.execute(sa.text("DROP TABLE IF EXISTS entry_search_text"))
