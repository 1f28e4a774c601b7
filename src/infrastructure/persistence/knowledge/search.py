"""The search index over entries, in each database's own full-text engine (migration 0015).

Both index the same words per entry (application/knowledge/search.py: `entry_words` of the key's
current version) and are queried with the same words, each a quoted term, so neither engine ever parses
a user's query text as syntax, and both find the same entries:

- SQLite: an FTS5 table `entry_search` over `entry_search_text` (one row per key: an id, the board, the
  key and its words; the FTS table's external content), ranked by bm25.
- PostgreSQL: `entry_search` (board, key, a `tsvector` of the words in the `simple` configuration: no
  stemming, no stop words) under a GIN index, ranked by ts_rank.

The projection keeps it current: `fold_entries` replaces a key's words whenever it replaces its row, and
a rebuild or an import clears it with the rows and folds it again. These tables are not the models'
(tables.py): they are each database's own, so `alembic check` leaves them out (`outside_models`).
"""

from __future__ import annotations

import abc
import json
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import (
    Column,
    ColumnElement,
    Connection,
    Engine,
    Integer,
    MetaData,
    Select,
    String,
    Table,
    Text,
    and_,
    bindparam,
    func,
    literal_column,
    select,
    text,
)

from blackboard.application.knowledge.search import entry_words
from blackboard.domain.knowledge.entries import Entry
from blackboard.infrastructure.persistence.tables import ENTRIES

Key = tuple[str, str]  # (board, key)
FILL_BATCH = 2000  # entry rows read at a time by the migration that fills the index
PREFIX = "entry_search"  # every table of the index (SQLite's FTS5 shadow tables too) starts so


def entry_index(bind: Connection | Engine) -> EntryIndex:
    """The index of the database `bind` is on (the search index is the one thing of the entries that
    differs between the two)."""
    return entry_index_for(bind.dialect.name)


def entry_index_for(dialect: str) -> EntryIndex:
    """The index of a database by its dialect's name (`sqlite`, `postgresql`)."""
    return SqliteEntryIndex() if dialect == "sqlite" else PostgresEntryIndex()


def outside_models(name: str | None, kind: str, parents: Any) -> bool:
    """alembic's `include_name`: the search index's tables are each database's own, not the models'."""
    return not (kind == "table" and name is not None and name.startswith(PREFIX))


def _words_row(entry: Entry) -> dict[str, str]:
    return {"b": entry.blackboard_id, "k": entry.key, "w": entry_words(entry)}


class EntryIndex(abc.ABC):
    """One database's search index: words replaced per key in the fold, searched with a rank."""

    def replace(self, conn: Connection, keys: Sequence[Key], states: Iterable[Entry | None]) -> None:
        """The keys' words become their states' (None: the key has no row, so no words)."""
        self.drop(conn, [{"b": b, "k": k} for b, k in keys])
        if rows := [_words_row(e) for e in states if e is not None]:
            self.add(conn, rows)

    @abc.abstractmethod
    def drop(self, conn: Connection, keys: list[dict[str, str]]) -> None:
        """Forget these keys' words ({"b": board, "k": key} each)."""

    @abc.abstractmethod
    def add(self, conn: Connection, rows: list[dict[str, str]]) -> None:
        """Index these keys' words ({"b", "k", "w"} each), none of them indexed now."""

    @abc.abstractmethod
    def clear(self, conn: Connection) -> None:
        """Forget every key's words (a rebuild's start)."""

    def hits(self, where: list[ColumnElement[bool]]) -> Select[Any]:
        """Rows of blackboard_entries matching `where` and holding every word, with a `score` column
        (higher is better), best first, ties in key order, paged. Ranked and paged on narrow rows (a
        common word matches thousands), then only the page's rows are read whole. Its parameters: `board`,
        `words` (`terms`), `limit` and `offset`, and those of `where`: one statement for any values."""
        page = self.ranked(where).subquery("page")
        on_key = and_(ENTRIES.c.blackboard_id == bindparam("board"), ENTRIES.c.key == page.c.key)
        return select(ENTRIES, page.c.score).join(page, on_key).order_by(page.c.score.desc(), ENTRIES.c.key)

    @abc.abstractmethod
    def terms(self, words: Sequence[str]) -> str:
        """The `words` parameter of `ranked` for these words: each only a term, every one required."""

    @abc.abstractmethod
    def ranked(self, where: list[ColumnElement[bool]]) -> Select[Any]:
        """The page's keys and scores (`key`, `score`, higher is better): the board's (`board`) entries
        holding every word (`words`) and matching `where` (on blackboard_entries' columns), best first,
        ties in key order, `offset` skipped, at most `limit`."""

    def value_kind(self, want: Any) -> str:
        """What of `want` the SQL of `value_field` depends on (its value is a parameter)."""
        return "json"

    @abc.abstractmethod
    def value_field(self, n: int, kind: str) -> ColumnElement[bool]:
        """The entry's value is an object whose top-level field (`field_<n>`) is the JSON scalar wanted, of
        `value_kind` `kind` (`value_params`)."""

    @abc.abstractmethod
    def value_params(self, n: int, name: str, want: Any) -> dict[str, Any]:
        """The parameters of `value_field(n, value_kind(want))` for the field `name` and the scalar `want`."""

    def fill(self, conn: Connection) -> None:
        """Index every entry row, FILL_BATCH at a time: the migration that creates the index."""
        batch = FILL_BATCH
        from blackboard.infrastructure.persistence.knowledge.codec import entry_from_row

        after: Key | None = None
        while True:
            page = select(ENTRIES).order_by(ENTRIES.c.blackboard_id, ENTRIES.c.key).limit(batch)
            if after is not None:
                b, k = ENTRIES.c.blackboard_id, ENTRIES.c.key
                page = page.where((b > after[0]) | and_(b == after[0], k > after[1]))
            rows = conn.execute(page).all()
            if not rows:
                return
            self.add(conn, [_words_row(entry_from_row(r)) for r in rows])
            after = (rows[-1].blackboard_id, rows[-1].key)


# ---------------------------------------------------------------- SQLite: FTS5

_SQLITE = MetaData()
SQLITE_TEXT = Table(
    "entry_search_text",
    _SQLITE,
    Column("id", Integer, primary_key=True),
    Column("blackboard_id", String(200), nullable=False),
    Column("key", String(200), nullable=False),
    Column("words", Text, nullable=False),
)
SQLITE_FTS = Table("entry_search", _SQLITE, Column("rowid", Integer), Column("words", Text))

# an external-content FTS5 table forgets a row only when told its words as indexed
_FORGET = text(
    "INSERT INTO entry_search (entry_search, rowid, words) SELECT 'delete', id, words"
    " FROM entry_search_text WHERE blackboard_id = :b AND key = :k"
)
_DROP_TEXT = text("DELETE FROM entry_search_text WHERE blackboard_id = :b AND key = :k")
_ADD_TEXT = text("INSERT INTO entry_search_text (blackboard_id, key, words) VALUES (:b, :k, :w)")
_INDEX = text(
    "INSERT INTO entry_search (rowid, words) SELECT id, words FROM entry_search_text"
    " WHERE blackboard_id = :b AND key = :k"
)


class SqliteEntryIndex(EntryIndex):
    def drop(self, conn: Connection, keys: list[dict[str, str]]) -> None:
        conn.execute(_FORGET, keys)
        conn.execute(_DROP_TEXT, keys)

    def add(self, conn: Connection, rows: list[dict[str, str]]) -> None:
        conn.execute(_ADD_TEXT, rows)
        conn.execute(_INDEX, [{"b": r["b"], "k": r["k"]} for r in rows])

    def clear(self, conn: Connection) -> None:
        conn.execute(text("INSERT INTO entry_search (entry_search) VALUES ('delete-all')"))
        conn.execute(text("DELETE FROM entry_search_text"))

    def terms(self, words: Sequence[str]) -> str:
        return " ".join(f'"{w}"' for w in words)

    def ranked(self, where: list[ColumnElement[bool]]) -> Select[Any]:
        rank = func.bm25(literal_column("entry_search"))  # negative: the lower, the better
        t = SQLITE_TEXT.c
        found = SQLITE_FTS.join(SQLITE_TEXT, t.id == SQLITE_FTS.c.rowid)
        filtered: list[ColumnElement[bool]] = []
        if where:  # the filters on each hit's row, by its primary key (an index's row, never the entry's
            # whole state unless asked), in EXISTS: joined, the rows of a filter's range or author drove the
            # plan, and each probed the full-text index by rowid, running the MATCH again (a word with
            # --author and --prefix over 100,000 entries: 960 ms, against 1.9 ms so)
            on_key = and_(ENTRIES.c.blackboard_id == t.blackboard_id, ENTRIES.c.key == t.key)
            filtered.append(select(literal_column("1")).select_from(ENTRIES).where(on_key, *where).exists())
        return (
            select(t.key, (-rank).label("score"))
            .select_from(found)
            .where(
                # against the table, not its one column: a column filter (`words MATCH`) has FTS5 read every
                # hit's positions to check the column (a middling word: 4.97 against 2.65 ms over 100,000)
                literal_column("entry_search").op("MATCH")(bindparam("words")),
                t.blackboard_id == bindparam("board"),
                *filtered,
            )
            .order_by(rank, t.key)
            .limit(bindparam("limit"))
            .offset(bindparam("offset"))
        )

    def value_kind(self, want: Any) -> str:
        if isinstance(want, bool):
            return "true" if want else "false"
        if want is None:
            return "null"
        return "text" if isinstance(want, str) else "number"

    def value_field(self, n: int, kind: str) -> ColumnElement[bool]:
        test = {
            "true": "j.type = 'true'",
            "false": "j.type = 'false'",
            "null": "j.type = 'null'",
            "text": f"j.type = 'text' AND j.atom = :value_{n}",
            "number": f"j.type IN ('integer', 'real') AND j.atom = :value_{n}",  # 1 is 1.0, as in jsonb
        }[kind]
        return text(  # type: ignore[return-value] - a boolean SQL expression
            "EXISTS (SELECT 1 FROM json_each(blackboard_entries.state_json, '$.current.value') AS j"
            f" WHERE j.key = :field_{n} AND {test})"
        )

    def value_params(self, n: int, name: str, want: Any) -> dict[str, Any]:
        compared = self.value_kind(want) in ("text", "number")  # the others are told by the type alone
        return {f"field_{n}": name, **({f"value_{n}": want} if compared else {})}


# ---------------------------------------------------------------- PostgreSQL: tsvector + GIN

_POSTGRES = MetaData()
POSTGRES_INDEX = Table(
    "entry_search",
    _POSTGRES,
    Column("blackboard_id", String(200)),
    Column("key", String(200)),
    Column("vector", Text),  # a tsvector: only ever handed to the text-search functions
)
SIMPLE = literal_column("'simple'::regconfig")  # words as they are: no stemming, no stop words

_DROP_VECTOR = text("DELETE FROM entry_search WHERE blackboard_id = :b AND key = :k")
_ADD_VECTOR = text(
    "INSERT INTO entry_search (blackboard_id, key, vector) VALUES (:b, :k, to_tsvector('simple', CAST(:w AS text)))"
)


class PostgresEntryIndex(EntryIndex):
    def drop(self, conn: Connection, keys: list[dict[str, str]]) -> None:
        conn.execute(_DROP_VECTOR, keys)

    def add(self, conn: Connection, rows: list[dict[str, str]]) -> None:
        conn.execute(_ADD_VECTOR, rows)

    def clear(self, conn: Connection) -> None:
        conn.execute(text("DELETE FROM entry_search"))

    def terms(self, words: Sequence[str]) -> str:
        return " ".join(words)  # plainto_tsquery AND-s them, and reads no operator

    def ranked(self, where: list[ColumnElement[bool]]) -> Select[Any]:
        s = POSTGRES_INDEX.c
        wanted = func.plainto_tsquery(SIMPLE, bindparam("words", type_=Text))  # the words, AND-ed
        rank = func.ts_rank(s.vector, wanted)
        found: Any = POSTGRES_INDEX
        if where:  # the filters' columns
            found = found.join(
                ENTRIES, and_(ENTRIES.c.blackboard_id == s.blackboard_id, ENTRIES.c.key == s.key)
            )
        return (
            select(s.key, rank.label("score"))
            .select_from(found)
            .where(s.vector.op("@@")(wanted), s.blackboard_id == bindparam("board"), *where)
            .order_by(rank.desc(), s.key)
            .limit(bindparam("limit"))
            .offset(bindparam("offset"))
        )

    def value_field(self, n: int, kind: str) -> ColumnElement[bool]:
        # COALESCE(..., false) is the same test in a WHERE (NULL excludes as false does), which the planner
        # estimates at one row in two where it took the equality for one in 200: with a LIMIT it then walks
        # the key index in order and stops at the limit, instead of decoding every row of the prefix and
        # sorting (a store's filtered search of 3,000 items: 0.8 ms against 13-35 ms, docs/performance.md (v))
        return text(  # type: ignore[return-value] - a boolean SQL expression
            f"COALESCE((CAST(blackboard_entries.state_json AS jsonb) -> 'current' -> 'value'"
            f" -> CAST(:field_{n} AS text)) = CAST(:value_{n} AS jsonb), false)"
        )

    def value_params(self, n: int, name: str, want: Any) -> dict[str, Any]:
        return {f"field_{n}": name, f"value_{n}": json.dumps(want)}
