"""SQLite: WAL, a busy timeout, write transactions that take the lock up front, writers queued on a lock file.

SQLite has one writer at a time for the whole file, so holding a board, the log or the read model is
what every write transaction already does; there is nothing to notify (waiters poll the log, one
index lookup per poll).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
import weakref
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, closing, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Engine,
    String,
    Table,
    bindparam,
    create_engine,
    event,
    func,
    select,
)
from sqlalchemy.engine import make_url
from sqlalchemy.pool import StaticPool

from blackboard.infrastructure.persistence import SYNCHRONOUS_MODES, lean
from blackboard.infrastructure.persistence.dialect import Dialect
from blackboard.infrastructure.persistence.writer_lock import WriterLock

FEW = 4  # up to this many rows, one INSERT ... RETURNING

if TYPE_CHECKING:
    from blackboard.application.ports import EventStore, LogNotifier
    from blackboard.infrastructure.persistence.engine import StoreSettings


class SqliteDialect(Dialect):
    one_writer = True  # BEGIN IMMEDIATE: the write lock is held from the first statement to the commit
    booleans_as_integers = True

    def __init__(self) -> None:
        self._turn: AbstractContextManager[Any] | None = None
        # a database file's read connections (not :memory:'s one), weakly: the engine holds them (below), and
        # the dialect, which the engines' registry holds as long as the engine lives, must not hold the engine
        self._kept: weakref.ref[KeptReads] | None = None

    def writer_turn(self) -> AbstractContextManager[Any] | None:
        return self._turn

    def read_connection(self, engine: Engine) -> AbstractContextManager[Connection]:
        kept = None if self._kept is None else self._kept()
        if kept is None:  # :memory: (its one shared connection), or an engine made elsewhere
            return super().read_connection(engine)
        return kept.connection(engine)

    def insert_many(
        self,
        conn: Connection,
        table: Table,
        rows: Sequence[Mapping[str, Any]],
        returning: str | None = None,
        key: str | None = None,
    ) -> list[Any]:
        if returning is None or len(rows) <= FEW:
            return super().insert_many(conn, table, rows, returning, key)
        # a long multi-row INSERT ... RETURNING is parsed anew every time: an executemany, then one query
        if key is None:
            raise ValueError(f"insert_many: RETURNING {returning} needs a key column")
        conn.execute(table.insert(), list(rows))
        keys = [row[key] for row in rows]
        found = dict(
            conn.execute(select(table.c[key], table.c[returning]).where(table.c[key].in_(keys))).all()
        )
        return [found[k] for k in keys]

    def bind_moment(self, value: datetime) -> Any:
        """As SQLAlchemy's DATETIME binds a `tables.Moment` here: UTC text without the zone, to the
        microsecond ("2026-01-02 03:04:05.678901")."""
        if value.tzinfo is None:
            raise ValueError("naive datetimes are refused: every stored time must carry its zone")
        if value.tzinfo is not UTC:
            value = value.astimezone(UTC)
        return value.replace(tzinfo=None).isoformat(" ", "microseconds")

    def read_moment(self, value: Any) -> datetime:
        """The text SQLAlchemy's DATETIME wrote, as `tables.Moment` reads it back: aware, in UTC."""
        moment = value if isinstance(value, datetime) else datetime.fromisoformat(value)
        return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)

    def rank_named(self, column: ColumnElement[str]) -> ColumnElement[int]:
        # the list as a JSON array (json_each's key: its index), SQLite having no arrays
        each = func.json_each(bindparam("order", type_=String())).table_valued("key", "value")
        return select(each.c.key).where(each.c.value == column).scalar_subquery()

    def order_named(self, names: Sequence[str]) -> Any:
        return json.dumps(list(names))

    def seconds_between(self, start: ColumnElement[Any], end: ColumnElement[Any]) -> ColumnElement[float]:
        # a moment is stored as UTC text ("2026-01-02 03:04:05.678901"), which julianday() reads as days: a
        # double that holds about 40 µs at today's dates, so the seconds are rounded to the millisecond
        # (unixepoch(x, 'subsec') would be exact, but needs SQLite 3.42)
        return func.round((func.julianday(end) - func.julianday(start)) * 86400.0, 3)

    def notifier(self, engine: Engine, store: EventStore, poll_interval: float) -> LogNotifier:
        from blackboard.infrastructure.persistence.polling import PollingNotifier

        return PollingNotifier(store, poll_interval)

    def create_engine(self, settings: StoreSettings) -> Engine:
        """SQLite's default deferred BEGIN takes the write lock only at the first write, so two writers
        that both read first deadlock on the upgrade and one fails at once with "database is locked",
        whatever the busy timeout: write transactions here say BEGIN IMMEDIATE instead, and queue on a
        lock file first (writer_lock.py) rather than in SQLite's sleeping busy handler."""
        synchronous = settings.synchronous.upper()
        if synchronous not in SYNCHRONOUS_MODES:
            raise ValueError(
                f"synchronous: {settings.synchronous!r} is not one of {', '.join(SYNCHRONOUS_MODES)}"
            )
        url = make_url(settings.url)
        database = url.database or ""
        in_memory = database in ("", ":memory:") or database.startswith("file::memory:")
        options: dict[str, Any] = {
            "connect_args": {"timeout": settings.busy_timeout, "check_same_thread": False}
        }
        if in_memory:
            options["poolclass"] = StaticPool  # one shared connection, or every checkout sees an empty db
        else:
            Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        engine = create_engine(url, echo=settings.echo, **options)
        # one writer at a time: a lock file for a database file; the one shared connection for :memory:
        self._turn = threading.Lock() if in_memory else WriterLock(f"{database}.lock", settings.busy_timeout)
        if not in_memory and not url.query:  # a plain file (a URI names its own options)
            use_wal(database, self._turn, settings.busy_timeout)
        busy_ms = int(settings.busy_timeout * 1000)
        if not in_memory:
            kept = KeptReads()
            self._kept = weakref.ref(kept)
            # the engine's own listener holds them: they live as long as the engine, and close with it
            event.listen(engine, "engine_disposed", lambda _engine: kept.close())

        @event.listens_for(engine, "connect")
        def configure(dbapi_connection: Any, _record: Any) -> None:
            dbapi_connection.isolation_level = None  # the driver's own BEGIN handling is off: we emit ours
            cursor = dbapi_connection.cursor()
            cursor.execute(f"PRAGMA busy_timeout={busy_ms}")  # first, so the WAL switch below can wait too
            if not in_memory:
                cursor.execute("PRAGMA journal_mode=WAL")  # a no-op once the file is in WAL (use_wal)
            cursor.execute(f"PRAGMA synchronous={synchronous}")
            cursor.close()

        @event.listens_for(engine, "begin")
        def begin(conn: Connection) -> None:
            immediate = conn.get_execution_options().get("blackboard_write", False)
            lean.run_sql(conn, "BEGIN IMMEDIATE" if immediate else "BEGIN")  # every command's: on the driver

        return engine


class KeptReads:
    """SQLite's read connections: one per thread, kept from one read to the next (`read_connection`).

    A read through the pool paid a checkout and a return (the pool's queue, its reset's ROLLBACK, SQLAlchemy's
    `Connection` made and closed): about 25 µs, more than the statement of a checkpoint's or an entry's read
    on the driver (issue 37). A thread keeps its connection instead, taken out of the pool (`detach`: it holds
    none of the pool's places, so writers never wait on a reader's thread): in WAL, readers of other threads
    and connections never block each other or the writer, and a connection reading outside a transaction
    (the driver's autocommit: each statement its own read transaction) sees the last commit, as a fresh one
    does. A transaction a read began through SQLAlchemy (`conn.execute` begins one) is rolled back when the
    read ends, as the pool's return did, so the next read sees the last commit too. A read inside a read on
    the same thread takes one of the pool's. The connections close with the engine (`engine.dispose()`: at
    once, or when a read in progress ends; an engine dropped without it is collected with them, as a thread
    holds only a weak reference to its own), after their thread ends (when the next thread opens one), and
    not in a forked child, which opens its own: SQLite's connections must not cross a fork."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # against `close` from another thread
        # each thread's, weakly: a thread's own state must not hold the engine (its connection does) alive
        self._local = threading.local()
        self._all: set[_Kept] = set()  # they are held here, with the engine
        _every.add(self)

    def connection(self, engine: Engine) -> AbstractContextManager[Connection]:
        ref: weakref.ref[_Kept] | None = getattr(self._local, "kept", None)
        kept = None if ref is None else ref()
        if kept is None:
            kept = _Kept(self)
            self._local.kept = weakref.ref(kept)
            with self._lock:
                ended = [k for k in self._all if not k.busy and not k.alive()]
                self._all.difference_update(ended)
                self._all.add(kept)
            for k in ended:  # the connections of threads that have ended since the last thread came
                if k.conn is not None:
                    k.conn.close()
        with self._lock:
            if kept.busy:  # a read inside a read on this thread
                return _pooled_read(engine)
            kept.busy = True
        if kept.conn is None:
            try:
                kept.conn = _detached(engine)
            except BaseException:
                kept.busy = False
                raise
        return kept

    def close(self) -> None:
        """Close every thread's connection: now if it is idle, else when its read ends."""
        idle = []
        with self._lock:
            for kept in list(self._all):
                if kept.busy:
                    kept.stale = True
                elif kept.conn is not None:
                    idle.append(kept.conn)
                    kept.conn = None
        for conn in idle:
            conn.close()

    def forked(self) -> None:
        """In a forked child: the parent's connections are left as they are (kept, never used nor closed)."""
        _inherited.extend(kept.conn for kept in list(self._all) if kept.conn is not None)
        self._lock = threading.Lock()
        self._local = threading.local()
        self._all = set()


class _Kept:
    """One thread's read connection, and the context manager of its reads."""

    __slots__ = ("reads", "conn", "busy", "stale", "thread", "__weakref__")

    def __init__(self, reads: KeptReads) -> None:
        self.reads = reads
        self.thread = weakref.ref(threading.current_thread())
        self.conn: Connection | None = None
        self.busy = False  # a read is in progress on it
        self.stale = False  # the engine was disposed meanwhile: closed when the read ends

    def alive(self) -> bool:
        thread = self.thread()
        return thread is not None and thread.is_alive()

    def __enter__(self) -> Connection:
        return self.conn  # type: ignore[return-value] - opened by `connection`

    def __exit__(self, *exc: object) -> None:
        conn = self.conn
        assert conn is not None
        drop = conn.invalidated or conn.closed
        if not drop and conn.in_transaction():
            try:
                conn.rollback()
            except Exception:  # noqa: BLE001 - the connection is dropped; the read's own error goes on
                drop = True
        with self.reads._lock:
            self.busy = False
            if drop or self.stale:
                self.conn, self.stale = None, False
            else:
                return
        conn.close()


def _detached(engine: Engine) -> Connection:
    conn = engine.connect()
    conn.connection.detach()  # out of the pool: the pool's places stay the writers' and the other reads'
    return conn


@contextmanager
def _pooled_read(engine: Engine) -> Iterator[Connection]:
    with engine.connect() as conn:
        yield conn


_every: weakref.WeakSet[KeptReads] = weakref.WeakSet()
_inherited: list[Connection] = []  # a forked child's share of its parent's connections: never touched


def _forked() -> None:
    for reads in list(_every):
        reads.forked()


os.register_at_fork(after_in_child=_forked)


def use_wal(database: str, turn: AbstractContextManager[Any], busy_timeout: float) -> None:
    """Put a database file in WAL mode, which the file keeps, before this process opens it otherwise.

    The switch needs the file to itself, and SQLite may refuse it at once ("database is locked")
    rather than wait in its busy handler when connections of other processes hold locks on a file
    that is still in rollback mode; so processes starting at once on a new file take the writer turn
    for it, one at a time, and retry a refusal until the busy timeout. A file in WAL already costs
    one PRAGMA."""
    with closing(sqlite3.connect(database, timeout=busy_timeout, isolation_level=None)) as conn:
        if str(conn.execute("PRAGMA journal_mode").fetchone()[0]).lower() == "wal":
            return
        deadline, pause = time.monotonic() + busy_timeout, 0.005
        with turn:
            while True:
                try:
                    conn.execute("PRAGMA journal_mode=WAL").fetchone()
                    return
                except sqlite3.OperationalError as refused:
                    if (
                        "locked" not in str(refused)
                        and "busy" not in str(refused)
                        or time.monotonic() >= deadline
                    ):
                        raise
                time.sleep(pause)
                pause = min(pause * 2, 0.1)
