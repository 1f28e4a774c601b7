"""The fast replay behind every catch-up and rebuild: the log's rows read with the driver's own cursor, and
the rows written with the driver's executemany (on PostgreSQL, COPY).

The rules stay where they are: each event is decoded by the one path every read of the log takes
(`codec.stored_event`: the domain's own event class, upcast dict to dict first when older), folded by
the one fold (`projection.fold`, the domain's `evolve`) into the rows that `codec.signal_values` and
`codec.changing_values` make (tuples in the order the INSERT and UPDATE bind them). What is faster is
only what surrounds them:

- reading: one statement per page on the driver's cursor, the columns the fold needs, no SQLAlchemy
  result processing (about 29 µs an event with it, row and parameter processing together);
- writing: on SQLite the driver's executemany with values converted here as `tables.Moment` and
  SQLAlchemy's SQLite DATETIME convert them, a page's rows a column at a time, and no NULL bound where
  a column is NULL in every row (`DriverWriter`); on PostgreSQL the server's COPY (the fold's few updates,
  a signal's rows moving on a later page, as one JSON document: `bulk`).

Until issue 35 the signal events were decoded here by msgspec structs restating nine event classes (a
field added to a class without its struct was dropped: a claim's `score` was); the one path costs 0.7 µs
an event more (`bench/event_decoding.py`). `tests/integration/test_replay.py` holds the fast replay to
the normal path's read model.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Boolean, Connection, Table

from blackboard.domain.events import BlackboardEvent, board_of_stream
from blackboard.infrastructure.persistence.codec import stored_event
from blackboard.infrastructure.persistence.fold import RowWriter

COLUMNS = "position, event_id, stream_id, version, event_type, schema_version, data, occurred_at"


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for one page: a page allocates tens of thousands of objects
    (no cycle among them), and each collection it set off would walk every signal a rebuild keeps in memory
    (decoding alone ran 2.5x slower with it on). It runs again, as it was, once the page is written.

    What the replay allocated meanwhile goes to the collector's oldest generation without a walk
    (`gc.freeze` then `gc.unfreeze`: two list merges): left in the youngest, the first allocation after
    it would set off a collection walking all of it (every signal a rebuild keeps: 1.5 µs an event of a
    rebuild, measured). Skipped when someone else froze objects (a fork server keeps its imports frozen
    so its children do not touch their pages): unfreezing would hand theirs back to the collector."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            if gc.get_freeze_count() == 0:
                gc.freeze()
                gc.unfreeze()
            gc.enable()


# ------------------------------------------------------------------------------------------ reading
Texts = dict[int, tuple[datetime, str]]  # id of a time -> the time, and its text as SQLite stores it
_MOMENT_TEXT = len("2026-01-05 09:00:00.001000")


# an event's row, the columns of COLUMNS in their order, as a plain tuple: what `read_page` gives (no
# NamedTuple built a row)
RawRow = tuple[int, str, str, int, str, int, str, datetime]


def read_page(conn: Connection, after: int, limit: int, texts: Texts | None = None) -> list[RawRow]:
    """The page after `after`, on the driver's cursor, as RawRows; times aware, in UTC (as
    `tables.Moment` gives them; a row another writer stored with its zone keeps it). `texts` (SQLite):
    filled with each time's text as stored, where it is the very text SQLite's `tables.Moment` writes,
    for `DriverWriter` to write it again without formatting it anew (the signal rows' times are the
    events' times)."""
    raw = conn.connection.driver_connection
    if conn.dialect.name == "sqlite":
        sql = f"SELECT {COLUMNS} FROM events WHERE position > ? ORDER BY position LIMIT ?"
        parse = datetime.fromisoformat
        found = raw.execute(sql, (after, limit))  # type: ignore[union-attr]
        if texts is None:
            return [
                (p, i, s, v, t, n, d, parse(at if at.endswith("+00:00") else at + "+00:00"))
                for p, i, s, v, t, n, d, at in found
            ]
        page: list[RawRow] = []
        for p, i, s, v, t, n, d, at in found:
            if len(at) == _MOMENT_TEXT and at[10] == " ":  # "2026-01-05 09:00:00.001000", as Moment writes it
                moment = parse(at + "+00:00")
                texts[id(moment)] = (moment, at)  # the time itself held: its id names no other meanwhile
            else:
                moment = parse(at if at.endswith("+00:00") else at + "+00:00")
            page.append((p, i, s, v, t, n, d, moment))
        return page
    sql = f"SELECT {COLUMNS} FROM events WHERE position > %s ORDER BY position LIMIT %s"
    with raw.cursor() as cursor:  # type: ignore[union-attr]
        cursor.execute(sql, (after, limit))
        found = cursor.fetchall()  # one call: iterating the cursor costs a Python call a row
    return [(p, i, s, v, t, n, d, at.astimezone(UTC)) for p, i, s, v, t, n, d, at in found]


def events(rows: Sequence[RawRow], boards: dict[str, str] | None = None) -> list[tuple[int, BlackboardEvent]]:
    """The rows' (position, event) pairs, in their order: what `projection.fold_events` takes. Each event
    by the one path every read of the log takes (`codec.stored_event`); `boards`: stream id -> board, kept
    by the caller across pages (a page has few streams)."""
    boards = {} if boards is None else boards
    page = []
    for position, event_id, stream_id, version, event_type, schema_version, data, occurred_at in rows:
        if (board := boards.get(stream_id)) is None:
            board = boards[stream_id] = board_of_stream(stream_id)
        event = stored_event(
            position, event_id, board, version, event_type, schema_version, data, occurred_at
        )
        page.append((position, event))
    return page


# ------------------------------------------------------------------------------------------ writing
def _sqlite_moment(value: Any) -> Any:
    """A time as SQLAlchemy binds a `tables.Moment` on SQLite: in UTC, without its zone, to the microsecond."""
    if value is None:
        return None
    if value.tzinfo is UTC:  # as the log's times are read: one call
        return value.isoformat(" ", "microseconds")[:-6]  # without its "+00:00"
    if value.tzinfo is None:
        raise ValueError("naive datetimes are refused: every stored time must carry its zone")
    return value.astimezone(UTC).replace(tzinfo=None).isoformat(" ", "microseconds")


class DriverWriter(RowWriter):
    """The fold's rows through the driver: SQLite's executemany of tuples; on PostgreSQL, COPY for new rows
    and `bulk`'s JSON documents for the few updates.

    On SQLite each page's rows go column by column first (`_columns`): a column NULL in every row is
    left out of the INSERT (written as the literal NULL in an UPDATE), times become the text SQLAlchemy
    would have bound, booleans the integers it would have bound. Python's sqlite3 binds a str, an int or
    a float directly, but looks anything else up among its adapters first, None and bool included
    (about 0.2 µs a value): a signal row held some 15 NULLs, which cost as much as SQLite's own insert
    of the row without its indexes. `texts`: the page's times as `read_page` read them, written as they
    were read."""

    def __init__(self, texts: Texts | None = None) -> None:
        self._texts: Texts = texts or {}

    def insert(
        self, conn: Connection, table: Table, names: Sequence[str], rows: list[tuple[Any, ...]]
    ) -> None:
        if not rows:
            return
        sqlite = conn.dialect.name == "sqlite"
        kept, columns = [], []
        for name, column in _columns(table, names, rows, self._texts if sqlite else None):
            if column is not None:
                kept.append(name)
                columns.append(column)
        raw = conn.connection.driver_connection
        if sqlite:
            sql = f"INSERT INTO {table.name} ({', '.join(kept)}) VALUES ({', '.join('?' * len(kept))})"
            raw.executemany(sql, zip(*columns, strict=True))  # type: ignore[union-attr]
            return
        # PostgreSQL: COPY, the server's own bulk load (psycopg writes each row's text in C)
        with raw.cursor() as cursor, cursor.copy(f"COPY {table.name} ({', '.join(kept)}) FROM STDIN") as copy:  # type: ignore[union-attr]
            write = copy.write_row
            for values in zip(*columns, strict=True):
                write(values)

    def update(
        self, conn: Connection, table: Table, key: str, columns: Sequence[str], rows: list[tuple[Any, ...]]
    ) -> None:
        if not rows:
            return
        if conn.dialect.name != "sqlite":
            super().update(conn, table, key, columns, rows)
            return
        sets, bound, keys = [], [], None
        for name, column in _columns(table, [key, *columns], rows, self._texts):
            if name == key and keys is None:
                if column is None:
                    raise ValueError(f"update of {table.name}: no {key} in the rows")
                keys = column
            elif column is None:
                sets.append(f"{name} = NULL")
            else:
                sets.append(f"{name} = ?")
                bound.append(column)
        sql = f"UPDATE {table.name} SET {', '.join(sets)} WHERE {key} = ?"
        conn.connection.driver_connection.executemany(sql, zip(*bound, keys, strict=True))  # type: ignore[union-attr]


def _columns(
    table: Table, names: Sequence[str], rows: Sequence[Iterable[Any]], texts: Texts | None
) -> Iterator[tuple[str, Sequence[Any] | None]]:
    """Each column of `rows` (values in the order of `names`), with `texts` (SQLite) as its values ready
    for SQLite's driver, without as they are; None for a column NULL in every row that may be left out
    (no default of the database's own)."""
    converters = _converters(table)
    for name, column in zip(names, zip(*rows, strict=True), strict=True):
        converter, omissible = converters[name]
        if omissible and column.count(None) == len(column):
            yield name, None
        elif converter is None:
            yield name, column
        elif texts is not None:
            yield name, converter(column, texts)
        else:  # PostgreSQL: the driver sends them as they are; a time without its zone is refused, as Moment does
            if converter is _sqlite_moments and any(v is not None and v.tzinfo is None for v in column):
                raise ValueError("naive datetimes are refused: every stored time must carry its zone")
            yield name, column


@functools.cache
def _converters(
    table: Table,
) -> dict[str, tuple[Callable[[Sequence[Any], Texts], list[Any]] | None, bool]]:
    """Column name -> how a column of its values is converted for SQLite's driver (None: as they are), and
    whether it may be left out of an INSERT when NULL in every row."""
    from blackboard.infrastructure.persistence.tables import Moment

    found: dict[str, tuple[Callable[[Sequence[Any], Texts], list[Any]] | None, bool]] = {}
    for column in table.c:
        convert: Callable[[Sequence[Any], Texts], list[Any]] | None = None
        if isinstance(column.type, Moment):
            convert = _sqlite_moments
        elif isinstance(column.type, Boolean):
            convert = _sqlite_booleans
        found[column.name] = (convert, column.server_default is None and column.default is None)
    return found


def _sqlite_moments(values: Sequence[Any], texts: Texts) -> list[Any]:
    """`_sqlite_moment` of each: a time read from the log as the text it was read from (`read_page`), any
    other in UTC formatted without a call, and the rest by `_sqlite_moment`."""
    known = texts.get
    return [
        read[1]
        if (read := known(id(v))) is not None and read[0] is v
        else v.isoformat(" ", "microseconds")[:-6]
        if v is not None and v.tzinfo is UTC
        else _sqlite_moment(v)
        for v in values
    ]


def _sqlite_booleans(values: Sequence[Any], texts: Texts) -> list[Any]:
    """As SQLAlchemy binds a Boolean on SQLite: 1 or 0."""
    return [None if v is None else int(v) for v in values]
