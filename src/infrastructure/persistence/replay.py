"""The fast replay behind every catch-up and rebuild: the log's rows read with the driver's own cursor, signal
events decoded by msgspec into only the fields the fold reads, the rows written with the driver's executemany.

The rules stay where they are: each decoded event is an instance of the domain's own event class, folded by
the one fold (`projection.fold`, the domain's `evolve`) into the rows that `codec.signal_values` and
`codec.changing_values` make (tuples in the order the INSERT and UPDATE bind them). What is faster is
only what surrounds them:

- reading: one statement per page on the driver's cursor, the columns the fold needs, no SQLAlchemy
  result processing (about 29 µs an event with it, row and parameter processing together);
- decoding: `msgspec` structs of the fold's fields (C, a few µs), where pydantic's validation of a whole
  event cost 17-18 µs. The events come from our own log, validated when they were recorded, so they are
  built without validating again. An older schema version is upcast first, by the domain's upcasters;
- writing: on SQLite the driver's executemany with values converted here as `tables.Moment` and
  SQLAlchemy's SQLite DATETIME convert them, a page's rows a column at a time, and no NULL bound where
  a column is NULL in every row (`DriverWriter`); on PostgreSQL the server's COPY (the fold's few updates,
  a signal's rows moving on a later page, as one JSON document: `bulk`).

An event type without a struct here (entries, solve runs, and any type added later), or whose class has a
newer schema version than its struct was written for, is decoded by the normal path (`codec.event_from_row`,
pydantic), so it is folded correctly whatever it is.
`tests/integration/test_replay.py` holds the two paths to the same read model.
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, NamedTuple

import msgspec
from pydantic import BaseModel
from sqlalchemy import Boolean, Connection, Table

from blackboard.domain import events as ev
from blackboard.domain.events import BlackboardEvent, board_of_stream, upcast
from blackboard.domain.reservations import Reservation
from blackboard.domain.signals import SignalPayload, SignalResult, SignalType, SignalUsage
from blackboard.infrastructure.persistence.codec import event_from_row
from blackboard.infrastructure.persistence.fold import RowWriter

COLUMNS = "position, event_id, stream_id, version, event_type, schema_version, data, occurred_at"


# ------------------------------------------------------------------------------------------ structs
class _Payload(msgspec.Struct):
    ps_id: str
    entry_id: str
    topic: str
    prompt: str = ""
    context: dict[str, Any] = {}


class _Result(msgspec.Struct):
    artifact_path: str | None = None
    knowledge_items: tuple[str, ...] = ()
    error: str | None = None


class _Usage(msgspec.Struct):
    runner: str
    model: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    turns: int = 0
    duration_ms: int = 0
    session_id: str | None = None
    transcript_path: str | None = None


class _Posted(msgspec.Struct):
    signal_id: str
    signal_type: SignalType
    payload: _Payload
    target_capabilities: tuple[str, ...]
    posted_by: str
    after: tuple[str, ...] = ()
    dedupe_key: str | None = None
    retry_of: str | None = None
    read_keys: tuple[str, ...] = ()
    write_keys: tuple[str, ...] = ()
    budget_usd: float | None = None
    priority: int = 2
    not_before: datetime | None = None
    max_attempts: int | None = None
    gate: bool = False
    timeout_s: float | None = None
    flow_id: str | None = None
    step_id: str | None = None


class _Reserved(msgspec.Struct):
    usd: float | None = None
    tokens: int | None = None


class _Claimed(msgspec.Struct):
    signal_id: str
    claimed_by: str
    token: str | None = None
    concurrency_key: str | None = None
    reserved: _Reserved | None = None


class _Renewed(msgspec.Struct):
    signal_id: str
    claimed_by: str


class _Completed(msgspec.Struct):
    signal_id: str
    completed_by: str
    result: _Result
    usage: _Usage | None = None


class _Failed(msgspec.Struct):
    signal_id: str
    failed_by: str
    error: str
    usage: _Usage | None = None


class _Ended(msgspec.Struct):  # expired, unclaimed
    signal_id: str
    reason: str


class _Cancelled(msgspec.Struct):
    signal_id: str
    cancelled_by: str
    reason: str
    cause: str | None = None


_new = object.__new__
# BaseModel's own slots, set through their descriptors: its __setattr__ refuses on a frozen model, and
# object.__setattr__ looks each descriptor up again (a third of the cost of `_built`, measured)
_set_dict = BaseModel.__dict__["__dict__"].__set__
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__


def _built(cls: type[BaseModel], values: dict[str, Any]) -> Any:
    """An instance of a pydantic model from values already of its fields' types, unvalidated (they were
    validated when the event was recorded): what `model_construct` does, without its pass over defaults."""
    model = _new(cls)
    _set_dict(model, values)
    _set_fields_set(model, set(values))
    _set_extra(model, None)
    _set_private(model, None)
    return model


def _payload(p: _Payload) -> SignalPayload:
    return _built(
        SignalPayload,
        {
            "ps_id": p.ps_id,
            "entry_id": p.entry_id,
            "topic": p.topic,
            "prompt": p.prompt,
            "context": p.context,
        },
    )


def _result(r: _Result) -> SignalResult:
    return _built(
        SignalResult,
        {"artifact_path": r.artifact_path, "knowledge_items": r.knowledge_items, "error": r.error},
    )


def _usage(u: _Usage | None) -> SignalUsage | None:
    return None if u is None else _built(SignalUsage, msgspec.structs.asdict(u))


def _posted(s: _Posted) -> dict[str, Any]:
    return {
        "signal_id": s.signal_id,
        "signal_type": s.signal_type,
        "payload": _payload(s.payload),
        "target_capabilities": s.target_capabilities,
        "posted_by": s.posted_by,
        "after": s.after,
        "dedupe_key": s.dedupe_key,
        "retry_of": s.retry_of,
        "read_keys": s.read_keys,
        "write_keys": s.write_keys,
        "budget_usd": s.budget_usd,
        "priority": s.priority,
        "not_before": s.not_before,
        "max_attempts": s.max_attempts,
        "gate": s.gate,
        "timeout_s": s.timeout_s,
        "flow_id": s.flow_id,
        "step_id": s.step_id,
    }


def _claimed(s: _Claimed) -> dict[str, Any]:
    r = s.reserved
    return {
        "signal_id": s.signal_id,
        "claimed_by": s.claimed_by,
        "token": s.token,
        "concurrency_key": s.concurrency_key,
        "reserved": None if r is None else _built(Reservation, {"usd": r.usd, "tokens": r.tokens}),
    }


def _completed(s: _Completed) -> dict[str, Any]:
    return {
        "signal_id": s.signal_id,
        "completed_by": s.completed_by,
        "result": _result(s.result),
        "usage": _usage(s.usage),
    }


def _failed(s: _Failed) -> dict[str, Any]:
    return {"signal_id": s.signal_id, "failed_by": s.failed_by, "error": s.error, "usage": _usage(s.usage)}


class Fast(NamedTuple):
    """How one event type is decoded fast: its class, the schema version its struct was written for, the
    struct, and the struct's fields as the class's."""

    cls: type[BlackboardEvent]
    schema: int
    decoder: msgspec.json.Decoder[Any]
    struct: type[msgspec.Struct]
    fields: Callable[[Any], dict[str, Any]]


def _fast(
    cls: type[BlackboardEvent],
    schema: int,
    struct: type[msgspec.Struct],
    fields: Callable[[Any], dict[str, Any]],
) -> Fast:
    return Fast(cls, schema, msgspec.json.Decoder(struct), struct, fields)


def _plain(s: msgspec.Struct) -> dict[str, Any]:
    return msgspec.structs.asdict(s)


# event type -> its fast decoder. A type missing here takes the normal path, and so does a type whose class
# has moved past the schema version its struct was written for (a field the fold may read is missing from
# the struct until someone adds it here and moves the number).
FAST: dict[str, Fast] = {
    "AgentSignalPosted": _fast(ev.AgentSignalPosted, 10, _Posted, _posted),
    "AgentSignalClaimed": _fast(ev.AgentSignalClaimed, 4, _Claimed, _claimed),
    "AgentSignalClaimRenewed": _fast(ev.AgentSignalClaimRenewed, 1, _Renewed, _plain),
    "AgentSignalCompleted": _fast(ev.AgentSignalCompleted, 2, _Completed, _completed),
    "AgentSignalFailed": _fast(ev.AgentSignalFailed, 2, _Failed, _failed),
    "AgentSignalExpired": _fast(ev.AgentSignalExpired, 1, _Ended, _plain),
    "AgentSignalUnclaimed": _fast(ev.AgentSignalUnclaimed, 1, _Ended, _plain),
    "AgentSignalCancelled": _fast(ev.AgentSignalCancelled, 1, _Cancelled, _plain),
}


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


class Row(NamedTuple):
    """An event's row as `codec.event_from_row` reads it (the normal path's)."""

    position: int
    event_id: str
    stream_id: str
    version: int
    event_type: str
    schema_version: int
    data: str
    occurred_at: datetime


# a Row's values as a plain tuple, in its order: what `read_page` gives (no NamedTuple built a row)
RawRow = tuple[int, str, str, int, str, int, str, datetime]


def read_page(conn: Connection, after: int, limit: int, texts: Texts | None = None) -> list[RawRow]:
    """The page after `after`, on the driver's cursor, as a `Row`'s values; times aware, in UTC (as
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


def decode(row: RawRow, boards: dict[str, str] | None = None) -> BlackboardEvent:
    """The row's event: fast for the signal events FAST knows, the normal path for any other. `boards`:
    stream id -> board, kept by the caller across a page (a page has few streams)."""
    return events([row], boards)[0][1]


def events(rows: Sequence[RawRow], boards: dict[str, str] | None = None) -> list[tuple[int, BlackboardEvent]]:
    """The rows' (position, event) pairs, in their order: what `projection.fold_events` takes. One loop
    over the page, each row unpacked once (a call and a NamedTuple a row cost about as much as the
    decoding itself)."""
    boards = {} if boards is None else boards
    fast_for, page = FAST.get, []
    for row in rows:
        position, event_id, stream_id, version, event_type, schema_version, data, occurred_at = row
        fast = fast_for(event_type)
        if fast is None or fast.schema != fast.cls.schema_version or schema_version > fast.schema:
            # the normal path, which stops at an event newer than this code (UpgradeNeeded)
            page.append((position, event_from_row(Row._make(row))))
            continue
        if schema_version == fast.schema:
            decoded = fast.decoder.decode(data)
        else:  # an older shape: the domain's upcasters bring it to the current one first
            decoded = msgspec.convert(
                upcast(event_type, schema_version, msgspec.json.decode(data)), fast.struct
            )
        values = fast.fields(decoded)
        values["event_id"] = event_id
        if (board := boards.get(stream_id)) is None:
            board = boards[stream_id] = board_of_stream(stream_id)
        values["blackboard_id"] = board
        values["version"] = version
        values["occurred_at"] = occurred_at
        page.append((position, _built(fast.cls, values)))
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
