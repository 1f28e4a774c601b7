"""LangGraph checkpoints on SQLAlchemy: each thread's events in its own stream (`<board>\\x1d<thread>`), and
the rows reads see (blackboard_checkpoints, blackboard_checkpoint_writes), folded from them.

An append holds the thread's stream (PostgreSQL: an advisory lock on it, as an entry key's; never the board's)
and goes through `commit_in`, as every command does: the log's lock, the append, and the fold (`fold`, called
by fold.fold_events), so rows and events land together, and a rebuild or a catch-up folds the same.
The rules are the domain's (domain/checkpoints.py); time travel replays a thread's events through them.

The rows are the log's only while the read model has folded the whole log: after a rebuild cleared them (or
while one runs), an import, or a bare append (`SqlAlchemyEventStore.append`), an append here records its
events and leaves the rows to the projector (`commit_in`). So every read here first checks, in its own
connection, that the read model is at the log's end (one statement), and otherwise has `catch_up` (the
container's `Projector.catch_up`) fold what is owed before it reads; an append whose decision reads the rows
catches up first too, as the board's queries do (application/queries.py).
"""

from __future__ import annotations

import base64
import functools
import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Engine, and_, bindparam, delete, exists, or_, select
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from blackboard.application.errors import StoreUnavailable
from blackboard.application.ports import Recorded
from blackboard.domain.checkpoints import keeps
from blackboard.domain.events import (
    CHECKPOINT_SEPARATOR,
    CheckpointEvent,
    CheckpointSaved,
    CheckpointsPruned,
    CheckpointThreadDeleted,
    CheckpointWrite,
    CheckpointWritesSaved,
    TypedBlob,
    checkpoint_stream_id,
)
from blackboard.infrastructure.persistence import (
    fold as signal_fold,  # this module's own `fold` is the checkpoints'
)
from blackboard.infrastructure.persistence import lean
from blackboard.infrastructure.persistence.codec import recorded_from_row
from blackboard.infrastructure.persistence.dialect import dialect_of
from blackboard.infrastructure.persistence.engine import read_connection, write_transaction
from blackboard.infrastructure.persistence.event_store import LAST_POSITION, translated
from blackboard.infrastructure.persistence.prefix import starts_with
from blackboard.infrastructure.persistence.tables import CHECKPOINT_ROWS, CHECKPOINT_WRITES, EVENTS
from blackboard.infrastructure.persistence.unit_of_work import commit_in, read_log

C, W = CHECKPOINT_ROWS.c, CHECKPOINT_WRITES.c
# One statement (one snapshot): the log's end and how far the read model has folded it.
STATE = select(LAST_POSITION.scalar_subquery(), signal_fold.GET_CHECKPOINT.scalar_subquery())
CATCH_UPS = 3  # an append deciding on the rows catches up at most this many times before it gives up


def blob_bytes(blob: TypedBlob) -> bytes:
    return base64.b64decode(blob.base64)


# ---- the fold (fold.fold_events hands it the checkpoint events, in log order) ----


def fold(
    conn: Connection, events: Sequence[tuple[int, CheckpointEvent]], writes: list[lean.Step] | None = None
) -> None:
    """The rows of these events. Their upserts go on `writes` (lean.py's steps, which the caller sends with
    the checkpoint's move: fold.finish), or run here without it; a deletion runs what is on it first, then
    itself, so the rows change in the events' order."""
    pending: list[lean.Step] = [] if writes is None else writes
    for position, event in events:
        if isinstance(event, CheckpointSaved):
            pending.append(_save(conn, position, event))
        elif isinstance(event, CheckpointWritesSaved):
            pending.extend(_save_writes(conn, event))
        elif isinstance(event, CheckpointThreadDeleted):
            _flush(conn, pending)
            for table in (CHECKPOINT_WRITES, CHECKPOINT_ROWS):
                conn.execute(
                    delete(table).where(
                        table.c.blackboard_id == event.blackboard_id, table.c.thread_id == event.thread_id
                    )
                )
        elif isinstance(event, CheckpointsPruned):
            _flush(conn, pending)
            refs = [(r.checkpoint_ns, r.checkpoint_id) for r in event.checkpoints]
            for start in range(0, len(refs), 500):
                chunk = refs[start : start + 500]
                for table in (CHECKPOINT_WRITES, CHECKPOINT_ROWS):
                    conn.execute(
                        delete(table).where(
                            table.c.blackboard_id == event.blackboard_id,
                            table.c.thread_id == event.thread_id,
                            or_(
                                *(
                                    and_(table.c.checkpoint_ns == ns, table.c.checkpoint_id == i)
                                    for ns, i in chunk
                                )
                            ),
                        )
                    )
    if writes is None:
        _flush(conn, pending)


def _flush(conn: Connection, pending: list[lean.Step]) -> None:
    lean.run_all(conn, pending)
    pending.clear()


def _key(table: Any, event: CheckpointSaved | CheckpointWritesSaved) -> Any:
    return and_(
        table.c.blackboard_id == event.blackboard_id,
        table.c.thread_id == event.thread_id,
        table.c.checkpoint_ns == event.checkpoint_ns,
        table.c.checkpoint_id == event.checkpoint_id,
    )


@functools.cache
def _upsert_row(dialect: str) -> Any:
    """INSERT of a checkpoint's row, over the row of the same key (a put again replaces it): one statement,
    on the driver (lean.py), where a DELETE then an INSERT through SQLAlchemy cost two round trips and their
    Python. Both databases spell it the same (ON CONFLICT ... DO UPDATE)."""
    dialects = {"postgresql": postgresql_insert, "sqlite": sqlite_insert}
    if dialect not in dialects:
        raise ValueError(f"checkpoints: no upsert for {dialect!r}")
    statement = dialects[dialect](CHECKPOINT_ROWS)
    keys = [c.name for c in CHECKPOINT_ROWS.primary_key.columns]
    return statement.on_conflict_do_update(
        index_elements=keys,
        set_={c.name: statement.excluded[c.name] for c in CHECKPOINT_ROWS.columns if c.name not in keys},
    )


def _save(conn: Connection, position: int, event: CheckpointSaved) -> lean.Step:
    run_id = event.checkpoint_metadata.get("run_id")
    blob = event.metadata_blob
    return (
        _upsert_row(conn.dialect.name),
        {
            "blackboard_id": event.blackboard_id,
            "thread_id": event.thread_id,
            "checkpoint_ns": event.checkpoint_ns,
            "checkpoint_id": event.checkpoint_id,
            "parent_checkpoint_id": event.parent_checkpoint_id,
            "run_id": str(run_id) if run_id is not None else None,
            "checkpoint_type": event.checkpoint.type,
            "checkpoint_data": blob_bytes(event.checkpoint),
            "metadata_json": None if blob else json.dumps(event.checkpoint_metadata, separators=(",", ":")),
            "metadata_type": blob.type if blob else None,
            "metadata_data": blob_bytes(blob) if blob else None,
            "position": position,
        },
    )


# the idx a task's writes to a checkpoint hold already
HELD = select(W.idx).where(
    W.blackboard_id == bindparam("board"),
    W.thread_id == bindparam("thread"),
    W.checkpoint_ns == bindparam("ns"),
    W.checkpoint_id == bindparam("id"),
    W.task_id == bindparam("task"),
)


def held(conn: Connection, board: str, thread: str, ns: str, checkpoint_id: str, task_id: str) -> set[int]:
    """The idx of the task's writes to the checkpoint that the rows hold, in `conn`'s transaction."""
    params = {"board": board, "thread": thread, "ns": ns, "id": checkpoint_id, "task": task_id}
    return {idx for (idx,) in lean.rows(conn, HELD, params)}


@functools.cache
def _insert_write(dialect: str, keep: bool) -> Any:
    """INSERT of a task's write to a checkpoint: over the held one of the same idx (ON CONFLICT DO UPDATE),
    or, for an idx whose first write is kept (`keeps`, the domain's rule: it decides which of the two a
    write takes), nothing where one is held (DO NOTHING). One statement, whatever the rows hold: the fold
    reads nothing first."""
    dialects = {"postgresql": postgresql_insert, "sqlite": sqlite_insert}
    if dialect not in dialects:
        raise ValueError(f"checkpoints: no upsert for {dialect!r}")
    statement = dialects[dialect](CHECKPOINT_WRITES)
    keys = [c.name for c in CHECKPOINT_WRITES.primary_key.columns]
    if keep:
        return statement.on_conflict_do_nothing(index_elements=keys)
    return statement.on_conflict_do_update(
        index_elements=keys,
        set_={c.name: statement.excluded[c.name] for c in CHECKPOINT_WRITES.columns if c.name not in keys},
    )


def _save_writes(conn: Connection, event: CheckpointWritesSaved) -> list[lean.Step]:
    """The task's writes to the checkpoint, the first of each idx in the event (as LangGraph's savers)."""
    steps: list[lean.Step] = []
    seen: set[int] = set()
    for write in event.writes:
        if write.idx in seen:
            continue
        seen.add(write.idx)
        row = {
            "blackboard_id": event.blackboard_id,
            "thread_id": event.thread_id,
            "checkpoint_ns": event.checkpoint_ns,
            "checkpoint_id": event.checkpoint_id,
            "task_id": event.task_id,
            "idx": write.idx,
            "task_path": event.task_path,
            "channel": write.channel,
            "value_type": write.value.type,
            "value_data": blob_bytes(write.value),
        }
        steps.append((_insert_write(conn.dialect.name, keeps(write.idx)), row))
    return steps


def clear(conn: Connection) -> None:
    conn.execute(delete(CHECKPOINT_WRITES))
    conn.execute(delete(CHECKPOINT_ROWS))


# ---- appending and reading ----


@dataclass(frozen=True, slots=True)
class Row:
    """One checkpoint as reads see it: its ids, the serializer's blobs, its metadata (JSON or a blob)."""

    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str
    parent_checkpoint_id: str | None
    checkpoint: tuple[str, bytes]
    metadata_json: str | None
    metadata_blob: tuple[str, bytes] | None


@dataclass(frozen=True, slots=True)
class Write:
    task_id: str
    channel: str
    value: tuple[str, bytes]


ROW_COLUMNS = (
    C.thread_id,
    C.checkpoint_ns,
    C.checkpoint_id,
    C.parent_checkpoint_id,
    C.checkpoint_type,
    C.checkpoint_data,
    C.metadata_json,
    C.metadata_type,
    C.metadata_data,
)
LATEST = (
    select(*ROW_COLUMNS)
    .where(
        C.blackboard_id == bindparam("board"),
        C.thread_id == bindparam("thread"),
        C.checkpoint_ns == bindparam("ns"),
    )
    .order_by(C.checkpoint_id.desc())
    .limit(1)
)
ONE = select(*ROW_COLUMNS).where(
    C.blackboard_id == bindparam("board"),
    C.thread_id == bindparam("thread"),
    C.checkpoint_ns == bindparam("ns"),
    C.checkpoint_id == bindparam("id"),
)
# whether the row's checkpoint has writes (a correlated EXISTS: the statement of its writes runs only then;
# a graph's newest checkpoint, between runs, has none)
HAS_WRITES = (
    exists()
    .where(
        W.blackboard_id == C.blackboard_id,
        W.thread_id == C.thread_id,
        W.checkpoint_ns == C.checkpoint_ns,
        W.checkpoint_id == C.checkpoint_id,
    )
    .label("has_writes")
)
# the same, with HAS_WRITES, then the log's end and the read model's position (STATE), in the row
LATEST_STATE, ONE_STATE = (
    q.add_columns(
        HAS_WRITES,
        LAST_POSITION.scalar_subquery().label("log_end"),
        signal_fold.GET_CHECKPOINT.scalar_subquery().label("folded"),
    )
    for q in (LATEST, ONE)
)
WRITES = (
    select(W.task_id, W.channel, W.value_type, W.value_data)
    .where(
        W.blackboard_id == bindparam("board"),
        W.thread_id == bindparam("thread"),
        W.checkpoint_ns == bindparam("ns"),
        W.checkpoint_id == bindparam("id"),
    )
    .order_by(W.task_path, W.task_id, W.idx)
)
# the writes of several checkpoints of one thread's namespace (a page of `rows`), in one statement
WRITES_OF = (
    select(W.checkpoint_id, W.task_id, W.channel, W.value_type, W.value_data)
    .where(
        W.blackboard_id == bindparam("board"),
        W.thread_id == bindparam("thread"),
        W.checkpoint_ns == bindparam("ns"),
        W.checkpoint_id.in_(bindparam("ids", expanding=True)),
    )
    .order_by(W.checkpoint_id, W.task_path, W.task_id, W.idx)
)


_FILTERS = ("thread", "ns", "id", "before", "limit")


@functools.cache
def _rows_query(thread: bool, ns: bool, checkpoint_id: bool, before: bool, limit: bool) -> Any:
    """`SqlCheckpoints.rows`' statement for the filters given (one statement object each, so lean.py compiles
    it once), newest first, with the log's end and the read model's position in every row (as LATEST_STATE)."""
    query = select(*ROW_COLUMNS).where(C.blackboard_id == bindparam("board"))
    if thread:
        query = query.where(C.thread_id == bindparam("thread"))
    if ns:
        query = query.where(C.checkpoint_ns == bindparam("ns"))
    if checkpoint_id:
        query = query.where(C.checkpoint_id == bindparam("id"))
    if before:
        query = query.where(C.checkpoint_id < bindparam("before"))
    query = query.order_by(C.checkpoint_id.desc(), C.thread_id, C.checkpoint_ns)
    if limit:
        query = query.limit(bindparam("limit"))
    return query.add_columns(
        HAS_WRITES,
        LAST_POSITION.scalar_subquery().label("log_end"),
        signal_fold.GET_CHECKPOINT.scalar_subquery().label("folded"),
    )


def _live(conn: Connection, found: Sequence[Any] | None = None) -> bool:
    """The read model has folded the whole log: as `found` (a row of LATEST_STATE or ONE_STATE, whose last
    two columns are the log's end and the read model's position) has it, or read in a statement of its own
    (one statement either way: a commit cannot land in between)."""
    end, folded = found[-2:] if found is not None else lean.one(conn, STATE, {}) or (None, None)
    return (end or 0) <= (folded or 0)


def _row(r: Sequence[Any]) -> Row:
    """A Row from a row of ROW_COLUMNS (their order), a tuple or SQLAlchemy's."""
    thread, ns, checkpoint_id, parent, kind, data, metadata_json, metadata_type, metadata_data = r[:9]
    blob = (metadata_type, bytes(metadata_data)) if metadata_type is not None else None
    return Row(thread, ns, checkpoint_id, parent, (kind, bytes(data)), metadata_json, blob)


@dataclass(frozen=True, slots=True)
class TaskWrites:
    task_id: str
    task_path: str
    writes: tuple[CheckpointWrite, ...]


class SqlCheckpoints:
    """A board's checkpoint threads in the log and the read model."""

    def __init__(
        self, engine: Engine, blackboard_id: str, catch_up: Callable[[], object] | None = None
    ) -> None:
        self._engine = engine
        self.blackboard_id = blackboard_id
        self._catch_up = catch_up  # folds what the read model is behind on (None: the rows as they are)

    def append(
        self, thread_id: str, build: Any, metadata: Mapping[str, Any], reads_rows: bool = True
    ) -> list[Recorded]:
        """Hold the thread's stream, then append what `build(version, conn)` makes of the stream's version
        (nothing, if it returns no event), and fold it, in one transaction. `reads_rows`: the build decides
        on the rows, so while the read model is behind the log nothing is decided: the transaction ends, the
        read model catches up, and the build runs again (StoreUnavailable if it keeps falling behind)."""
        stream = checkpoint_stream_id(self.blackboard_id, thread_id)
        catch_up = self._catch_up if reads_rows else None
        for attempt in range(CATCH_UPS + 1):
            if attempt and catch_up is not None:  # outside the transaction: SQLite's one writer was its own
                catch_up()
            with translated(f"could not record checkpoints of thread {thread_id!r}", stream):
                with write_transaction(self._engine) as conn:
                    # the stream's hold, then its state read under it: one round trip
                    log = read_log(conn, stream, dialect_of(self._engine).entry_hold(stream))
                    if log.live or catch_up is None:
                        events = build(log.version, conn)
                        if not events:
                            return []
                        return commit_in(conn, stream, events, metadata, signal_fold.FoldCache(), known=log)
        raise StoreUnavailable(
            f"could not record checkpoints of thread {thread_id!r}: the read model fell behind the log again "
            f"each of {CATCH_UPS} times it caught up (a rebuild started over?); nothing was recorded, try again"
        )

    @contextmanager
    def _reading(self) -> Iterator[Connection]:
        """A read connection on rows that hold the whole log: caught up first when the read model is behind
        it (one statement when it is not, the usual case)."""
        with translated("could not read checkpoints"), read_connection(self._engine) as conn:
            if self._catch_up is None or _live(conn):
                yield conn
                return
        self._catch_up()
        with translated("could not read checkpoints"), read_connection(self._engine) as conn:
            yield conn

    def get(self, thread_id: str, ns: str, checkpoint_id: str | None) -> tuple[Row, list[Write]] | None:
        """The checkpoint (the newest of the thread's namespace without `checkpoint_id`) and its writes. The
        row comes with the log's end and the read model's position, in the same statement (LangGraph reads
        one at every step): a statement of its own checks them only when there is no row. The row says whether
        its checkpoint has writes (HAS_WRITES): their statement runs only then. On the driver (lean.py):
        SQLAlchemy's Python per statement was most of a read's cost."""
        params = {"board": self.blackboard_id, "thread": thread_id, "ns": ns, "id": checkpoint_id}
        query = LATEST_STATE if checkpoint_id is None else ONE_STATE
        with translated("could not read checkpoints"), read_connection(self._engine) as conn:
            found = lean.one(conn, query, params)
            if self._catch_up is None or _live(conn, found):
                return self._found(conn, found)
        self._catch_up()
        with translated("could not read checkpoints"), read_connection(self._engine) as conn:
            return self._found(conn, lean.one(conn, query, params))

    def _found(self, conn: Connection, found: Sequence[Any] | None) -> tuple[Row, list[Write]] | None:
        if found is None:
            return None
        row = _row(found)
        return row, self._writes(conn, row) if found[9] else []

    def _writes(self, conn: Connection, row: Row) -> list[Write]:
        params = {
            "board": self.blackboard_id,
            "thread": row.thread_id,
            "ns": row.checkpoint_ns,
            "id": row.checkpoint_id,
        }
        return [
            Write(task, channel, (kind, bytes(data)))
            for task, channel, kind, data in lean.rows(conn, WRITES, params)
        ]

    def _listed(
        self, conn: Connection, found: Sequence[Sequence[Any]]
    ) -> tuple[list[Row], dict[tuple[str, str, str], list[Write]]]:
        """The rows of `rows`' statement, and the writes of those that have any (HAS_WRITES)."""
        listed = [_row(r) for r in found]
        with_writes = [row for row, r in zip(listed, found, strict=True) if r[9]]
        return listed, self._writes_of(conn, with_writes) if with_writes else {}

    def _writes_of(self, conn: Connection, rows: Sequence[Row]) -> dict[tuple[str, str, str], list[Write]]:
        """The writes of these checkpoints, by (thread, namespace, checkpoint id): one statement per thread's
        namespace among them (one, for a page of a thread's history), not one per checkpoint."""
        ids: dict[tuple[str, str], list[str]] = {}
        for row in rows:
            ids.setdefault((row.thread_id, row.checkpoint_ns), []).append(row.checkpoint_id)
        found: dict[tuple[str, str, str], list[Write]] = {}
        for (thread, ns), listed in ids.items():
            for start in range(0, len(listed), 500):
                params = {
                    "board": self.blackboard_id,
                    "thread": thread,
                    "ns": ns,
                    "ids": listed[start : start + 500],
                }
                for checkpoint_id, task, channel, kind, data in lean.rows(conn, WRITES_OF, params):
                    found.setdefault((thread, ns, checkpoint_id), []).append(
                        Write(task, channel, (kind, bytes(data)))
                    )
        return found

    def rows(
        self,
        thread_id: str | None,
        ns: str | None,
        checkpoint_id: str | None,
        before: str | None,
        limit: int | None,
    ) -> Iterator[tuple[Row, list[Write]]]:
        """Newest first (checkpoint ids grow with time); `limit` is the caller's when it filters by metadata.
        On the driver (lean.py): one statement of the rows, with the log's end and the read model's position in
        each (as `get`: a statement of its own checks them only when no row came), then the writes of those
        that have any (`_writes_of`: one statement per thread's namespace, 500 checkpoints at a time; none, if
        none has): two for a page of one thread, however many rows."""
        given = (thread_id, ns, checkpoint_id, before, limit)
        query = _rows_query(*(v is not None for v in given))
        params = {"board": self.blackboard_id, **dict(zip(_FILTERS, given, strict=True))}
        with translated("could not read checkpoints"), read_connection(self._engine) as conn:
            found = lean.rows(conn, query, params)
            live = self._catch_up is None or _live(conn, found[0] if found else None)
            if live:
                listed, writes = self._listed(conn, found)
        if not live:
            assert self._catch_up is not None
            self._catch_up()
            with translated("could not read checkpoints"), read_connection(self._engine) as conn:
                listed, writes = self._listed(conn, lean.rows(conn, query, params))
        for row in listed:
            yield row, writes.get((row.thread_id, row.checkpoint_ns, row.checkpoint_id), [])

    def refs(self, conn: Connection, thread_id: str) -> list[tuple[str, str]]:
        """The thread's (namespace, checkpoint id) that reads see, oldest first, in `conn`'s transaction."""
        query = (
            select(C.checkpoint_ns, C.checkpoint_id)
            .where(C.blackboard_id == self.blackboard_id, C.thread_id == thread_id)
            .order_by(C.checkpoint_ns, C.checkpoint_id)
        )
        return [(ns, i) for ns, i in conn.execute(query)]

    def held_writes(
        self, conn: Connection, thread_id: str, ns: str, checkpoint_id: str, task_id: str
    ) -> set[int]:
        return held(conn, self.blackboard_id, thread_id, ns, checkpoint_id, task_id)

    def any_writes(self, conn: Connection, thread_id: str) -> bool:
        query = select(W.idx).where(W.blackboard_id == self.blackboard_id, W.thread_id == thread_id).limit(1)
        return conn.scalar(query) is not None

    def task_writes(self, thread_id: str, ns: str, checkpoint_id: str) -> list[TaskWrites]:
        """A checkpoint's writes as each task saved them (what `copy_thread` saves again)."""
        query = (
            select(W.task_id, W.task_path, W.idx, W.channel, W.value_type, W.value_data)
            .where(
                W.blackboard_id == self.blackboard_id,
                W.thread_id == thread_id,
                W.checkpoint_ns == ns,
                W.checkpoint_id == checkpoint_id,
            )
            .order_by(W.task_path, W.task_id, W.idx)
        )
        tasks: dict[tuple[str, str], list[CheckpointWrite]] = {}
        with self._reading() as conn:
            for w in conn.execute(query):
                blob = TypedBlob(
                    type=w.value_type, base64=base64.b64encode(bytes(w.value_data)).decode("ascii")
                )
                tasks.setdefault((w.task_id, w.task_path), []).append(
                    CheckpointWrite(idx=w.idx, channel=w.channel, value=blob)
                )
        return [TaskWrites(task, path, tuple(writes)) for (task, path), writes in tasks.items()]

    def runs(self, run_ids: Sequence[str]) -> dict[str, list[tuple[str, str]]]:
        """thread -> its (namespace, checkpoint id) that these runs saved and reads still see."""
        found: dict[str, list[tuple[str, str]]] = {}
        with self._reading() as conn:
            for start in range(0, len(run_ids), 500):
                query = select(C.thread_id, C.checkpoint_ns, C.checkpoint_id).where(
                    C.blackboard_id == self.blackboard_id, C.run_id.in_(list(run_ids[start : start + 500]))
                )
                for thread, ns, i in conn.execute(query):
                    found.setdefault(thread, []).append((ns, i))
        return found

    def history(self, thread_id: str | None, upto: int | None = None) -> list[Recorded]:
        """The thread's events (every thread's of the board, if None), in log order, up to a log position."""
        if thread_id is not None:
            where = EVENTS.c.stream_id == checkpoint_stream_id(self.blackboard_id, thread_id)
        else:
            where = starts_with(EVENTS.c.stream_id, self.blackboard_id + CHECKPOINT_SEPARATOR)
        query = select(EVENTS).where(where)
        if upto is not None:
            query = query.where(EVENTS.c.position <= upto)
        with translated("could not read the event store"), read_connection(self._engine) as conn:
            return [recorded_from_row(row) for row in conn.execute(query.order_by(EVENTS.c.position))]
