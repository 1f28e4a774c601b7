"""The EntryReadModel port on SQL: current entries from `blackboard_entries`, history from the log."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Hashable
from functools import lru_cache
from typing import Any

from sqlalchemy import ColumnElement, Connection, Engine, Select, bindparam, case, func, select, true
from sqlalchemy.exc import DBAPIError

from blackboard.application.errors import StoreUnavailable
from blackboard.application.knowledge.ports import (
    EntryCounts,
    EntryFilter,
    EntryReadModel,
    EntrySearch,
    SearchHit,
)
from blackboard.application.ports import Recorded
from blackboard.domain.events import STREAM_SEPARATOR, entry_stream_id
from blackboard.domain.knowledge.entries import Entry
from blackboard.infrastructure.persistence import lean
from blackboard.infrastructure.persistence.codec import recorded_from_row
from blackboard.infrastructure.persistence.engine import read_connection
from blackboard.infrastructure.persistence.knowledge.codec import entry_from_row
from blackboard.infrastructure.persistence.knowledge.search import (
    EntryIndex,
    entry_index,
    entry_index_for,
)
from blackboard.infrastructure.persistence.prefix import bounds, starts_with, within
from blackboard.infrastructure.persistence.read_model import BEHIND
from blackboard.infrastructure.persistence.tables import ENTRIES, ENTRY_TOPICS, EVENTS

GET = select(ENTRIES).where(ENTRIES.c.blackboard_id == bindparam("board"), ENTRIES.c.key == bindparam("key"))

GET_CURRENT = GET.add_columns(BEHIND.scalar_subquery().label("behind"))
CurrentRow = namedtuple("CurrentRow", [c.name for c in GET_CURRENT.selected_columns])
SearchRow = namedtuple("SearchRow", [*ENTRIES.c.keys(), "score"])  # a search's row: the entry's, its score
CheckedRow = namedtuple("CheckedRow", ["behind", *SearchRow._fields])  # with the catch-up's check first


def get_in(conn: Connection, blackboard_id: str, key: str) -> Entry | None:
    row = conn.execute(GET, {"board": blackboard_id, "key": key}).one_or_none()
    return entry_from_row(row) if row is not None else None


def records_in(
    conn: Connection, blackboard_id: str, key: str | None = None, upto: int | None = None
) -> list[Recorded]:
    """One key's events (its stream: indexed), or every entry stream of the board (`<board>\\x1f...`)."""
    if key is not None:
        query = select(EVENTS).where(EVENTS.c.stream_id == entry_stream_id(blackboard_id, key))
    else:
        query = select(EVENTS).where(starts_with(EVENTS.c.stream_id, blackboard_id + STREAM_SEPARATOR))
    if upto is not None:
        query = query.where(EVENTS.c.position <= upto)
    return [recorded_from_row(row) for row in conn.execute(query.order_by(EVENTS.c.position))]


class SqlEntryReadModel(EntryReadModel):
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def get(self, blackboard_id: str, key: str) -> Entry | None:
        with _translated(), read_connection(self._engine) as conn:
            return get_in(conn, blackboard_id, key)

    def get_current(self, blackboard_id: str, key: str) -> tuple[Entry | None, bool]:
        """One statement: the row with the catch-up's check (`BEHIND`, the log's end past the rows' position)
        as a column; no row, no answer to the check (True: the caller checks and reads again)."""
        with (
            _translated(),
            read_connection(self._engine) as conn,
        ):  # on the driver (lean.py): every get runs it
            found = lean.one(conn, GET_CURRENT, {"board": blackboard_id, "key": key})
        if found is None:
            return None, True
        row = CurrentRow._make(found)
        return entry_from_row(row), bool(row.behind)

    def find(self, criteria: EntryFilter) -> list[Entry]:
        index = entry_index(self._engine)
        shape, values = _filters(criteria, index)
        query = select(ENTRIES).where(
            ENTRIES.c.blackboard_id == criteria.blackboard_id, *_where(shape, index)
        )
        query = query.order_by(ENTRIES.c.key).limit(criteria.limit)
        with _translated(), read_connection(self._engine) as conn:
            return [entry_from_row(row) for row in conn.execute(query, values)]

    def search(self, query: EntrySearch) -> list[SearchHit]:
        """From the database's own full-text index (knowledge/search.py), filtered as `find` filters."""
        return self._search(query, checked=False)[0]

    def search_current(self, query: EntrySearch) -> tuple[list[SearchHit], bool]:
        """One statement, as `get_current`'s: the hits with the catch-up's check (`BEHIND`) beside them,
        which an outer join keeps when there is no hit."""
        return self._search(query, checked=True)

    def _search(self, query: EntrySearch, checked: bool) -> tuple[list[SearchHit], bool]:
        # on the driver (lean.py), the statement built once for the filters' shape: a search is a page of
        # rows, so SQLAlchemy's statement building, compiling and result handling were most of its time
        index = entry_index(self._engine)
        shape, values = _filters(query.criteria, index)
        statement = _search_statement(self._engine.dialect.name, shape, checked)
        values.update(
            board=query.criteria.blackboard_id,
            words=index.terms(query.words),
            limit=query.limit,
            offset=query.offset,
        )
        with _translated(), read_connection(self._engine) as conn:
            rows = lean.rows(conn, statement, values)
        if not checked:
            return [SearchHit(entry_from_row(SearchRow._make(r)), float(r[-1])) for r in rows], False
        found = [CheckedRow._make(r) for r in rows]
        hits = [SearchHit(entry_from_row(row), float(row.score)) for row in found if row.key is not None]
        return hits, bool(found[0].behind)

    def counts(self, blackboard_id: str) -> EntryCounts:
        """Counted where the rows are: a summary reads no value, however large the board."""
        board = ENTRIES.c.blackboard_id == blackboard_id
        with _translated(), read_connection(self._engine) as conn:
            by_type = dict(
                conn.execute(
                    select(ENTRIES.c.entry_type, func.count()).where(board).group_by(ENTRIES.c.entry_type)
                ).all()
            )
            by_author = dict(
                conn.execute(
                    select(ENTRIES.c.author, func.count()).where(board).group_by(ENTRIES.c.author)
                ).all()
            )
            in_conflict = list(
                conn.scalars(
                    select(ENTRIES.c.key).where(board, ENTRIES.c.candidates > 0).order_by(ENTRIES.c.key)
                )
            )
            latest = conn.execute(
                select(ENTRIES).where(board).order_by(ENTRIES.c.position.desc()).limit(1)
            ).one_or_none()
        return EntryCounts(by_type, by_author, in_conflict, entry_from_row(latest) if latest else None)

    def board_counts(self, blackboard_id: str | None = None) -> dict[str, tuple[int, int]]:
        board = ENTRIES.c.blackboard_id
        conflicts = func.sum(case((ENTRIES.c.candidates > 0, 1), else_=0))
        query = select(board, func.count(), conflicts).group_by(board)
        if blackboard_id is not None:
            query = query.where(board == blackboard_id)
        with _translated(), read_connection(self._engine) as conn:
            return {
                name: (entries, int(in_conflict or 0)) for name, entries, in_conflict in conn.execute(query)
            }

    def records(self, blackboard_id: str, key: str | None = None, upto: int | None = None) -> list[Recorded]:
        with _translated(), read_connection(self._engine) as conn:
            return records_in(conn, blackboard_id, key, upto)


COLUMNS = ("section", "role", "author", "label", "entry_type")  # the criteria that are a column's value


def _filters(criteria: EntryFilter, index: EntryIndex) -> tuple[tuple[Hashable, ...], dict[str, Any]]:
    """The criteria other than the board: their shape (what `_where` builds for them, whatever their values)
    and their values, by the names of `_where`'s parameters."""
    shape: list[Hashable] = []
    values: dict[str, Any] = {}
    for column in COLUMNS:
        if (wanted := getattr(criteria, column)) is not None:
            shape.append(column)
            values[f"where_{column}"] = wanted
    if criteria.topic is not None:
        shape.append("topic")
        values["where_topic"] = criteria.topic
    if criteria.prefix is not None:
        lower, upper = bounds(criteria.prefix)
        shape.append(("prefix", lower is not None, upper is not None))
        values.update(prefix_lower=lower, prefix_upper=upper)
    if criteria.conflicts_only:
        shape.append("conflicts")
    for n, (name, want) in enumerate(criteria.value_equals):
        shape.append(("value", index.value_kind(want)))
        values.update(index.value_params(n, name, want))
    return tuple(shape), values


def _where(shape: tuple[Hashable, ...], index: EntryIndex) -> list[ColumnElement[bool]]:
    """The criteria of this shape (`_filters`) on blackboard_entries' columns (`entries`, `search`), their
    values as parameters; the value's fields as the database's search index reads JSON (`value_field`)."""
    where: list[ColumnElement[bool]] = []
    values = 0
    for part in shape:
        if part in COLUMNS:
            where.append(ENTRIES.c[part] == bindparam(f"where_{part}"))
        elif part == "topic":  # EXISTS over the topics' primary key (board, topic, key)
            published = select(ENTRY_TOPICS.c.key).where(
                ENTRY_TOPICS.c.blackboard_id == ENTRIES.c.blackboard_id,
                ENTRY_TOPICS.c.topic == bindparam("where_topic"),
                ENTRY_TOPICS.c.key == ENTRIES.c.key,
            )
            where.append(published.exists())
        elif part == "conflicts":
            where.append(ENTRIES.c.candidates > 0)
        elif part[0] == "prefix":  # type: ignore[index] - a tuple
            _, lower, upper = part  # type: ignore[misc]
            low = bindparam("prefix_lower") if lower else None
            where.append(within(ENTRIES.c.key, low, bindparam("prefix_upper") if upper else None))
        else:  # ("value", kind)
            where.append(index.value_field(values, part[1]))  # type: ignore[index]
            values += 1
    return where


@lru_cache(maxsize=256)  # one per dialect and shape of filters: a handful in practice
def _search_statement(dialect: str, shape: tuple[Hashable, ...], checked: bool) -> Select[Any]:
    """`EntryIndex.hits` for these filters; `checked`: with the catch-up's check (`BEHIND`) as a first
    column, in one row of NULLs when nothing is found (an outer join of the check and the hits)."""
    index = entry_index_for(dialect)
    hits = index.hits(_where(shape, index))
    if not checked:
        return hits
    found = hits.subquery("found")
    check = BEHIND.subquery("checked")
    return (
        select(check.c[0].label("behind"), *found.c)
        .select_from(check.outerjoin(found, true()))
        .order_by(found.c.score.desc(), found.c.key)
    )


class _translated:
    """Driver errors leave as the port's StoreUnavailable, like the signal read model's."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> None:
        if isinstance(exc, DBAPIError | OSError):
            raise StoreUnavailable(f"could not reach the entries: {getattr(exc, 'orig', exc)}") from exc
