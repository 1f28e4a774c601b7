"""The EntryReadModel port on SQL: current entries from `blackboard_entries`, history from the log."""

from __future__ import annotations

from collections import namedtuple
from typing import Any

from sqlalchemy import ColumnElement, Connection, Engine, bindparam, case, func, select
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
from blackboard.infrastructure.persistence.knowledge.search import entry_index
from blackboard.infrastructure.persistence.prefix import starts_with
from blackboard.infrastructure.persistence.read_model import BEHIND
from blackboard.infrastructure.persistence.tables import ENTRIES, ENTRY_TOPICS, EVENTS

GET = select(ENTRIES).where(ENTRIES.c.blackboard_id == bindparam("board"), ENTRIES.c.key == bindparam("key"))

GET_CURRENT = GET.add_columns(BEHIND.scalar_subquery().label("behind"))
CurrentRow = namedtuple("CurrentRow", [c.name for c in GET_CURRENT.selected_columns])


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
        where = _where(criteria, entry_index(self._engine))
        query = select(ENTRIES).where(ENTRIES.c.blackboard_id == criteria.blackboard_id, *where)
        query = query.order_by(ENTRIES.c.key).limit(criteria.limit)
        with _translated(), read_connection(self._engine) as conn:
            return [entry_from_row(row) for row in conn.execute(query)]

    def search(self, query: EntrySearch) -> list[SearchHit]:
        """From the database's own full-text index (knowledge/search.py), filtered as `find` filters."""
        index = entry_index(self._engine)
        where = _where(query.criteria, index)
        with _translated(), read_connection(self._engine) as conn:
            return [
                SearchHit(entry_from_row(row), float(row.score))
                for row in conn.execute(index.hits(where, query))
            ]

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


def _where(criteria: EntryFilter, index: Any) -> list[ColumnElement[bool]]:
    """The criteria other than the board, on blackboard_entries' columns (`entries`, `search`); the value's
    fields as the database's search index reads JSON (`value_field`)."""
    where = [
        ENTRIES.c[column] == wanted
        for column in ("section", "role", "author", "label", "entry_type")
        if (wanted := getattr(criteria, column)) is not None
    ]
    if criteria.topic is not None:  # EXISTS over the topics' primary key (board, topic, key)
        published = select(ENTRY_TOPICS.c.key).where(
            ENTRY_TOPICS.c.blackboard_id == ENTRIES.c.blackboard_id,
            ENTRY_TOPICS.c.topic == criteria.topic,
            ENTRY_TOPICS.c.key == ENTRIES.c.key,
        )
        where.append(published.exists())
    if criteria.prefix is not None:
        where.append(starts_with(ENTRIES.c.key, criteria.prefix))
    if criteria.conflicts_only:
        where.append(ENTRIES.c.candidates > 0)
    where += [index.value_field(n, name, want) for n, (name, want) in enumerate(criteria.value_equals)]
    return where


class _translated:
    """Driver errors leave as the port's StoreUnavailable, like the signal read model's."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> None:
        if isinstance(exc, DBAPIError | OSError):
            raise StoreUnavailable(f"could not reach the entries: {getattr(exc, 'orig', exc)}") from exc
