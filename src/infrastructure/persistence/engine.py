"""Engines for SQLite (WAL, busy timeout, write transactions that take the lock up front) and PostgreSQL."""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.pool import StaticPool

from blackboard.infrastructure.persistence import DEFAULT_URL, SYNCHRONOUS_MODES
from blackboard.infrastructure.persistence.writer_lock import WriterLock



@dataclass(frozen=True, slots=True)
class StoreSettings:
    """How to reach and tune the database; see docs/persistence.md for each default."""

    url: str = DEFAULT_URL
    synchronous: str = "FULL"  # SQLite: FULL survives power loss; NORMAL is faster and survives crashes
    busy_timeout: float = 30.0  # SQLite: seconds a writer waits for the lock before giving up
    pool_size: int = 5  # PostgreSQL
    max_overflow: int = 10  # PostgreSQL
    pool_timeout: float = 30.0  # PostgreSQL: seconds to wait for a pooled connection
    pool_pre_ping: bool = False  # PostgreSQL: a round trip per checkout to weed out connections the server dropped
    echo: bool = False


def make_engine(settings: StoreSettings) -> Engine:
    url = make_url(settings.url)
    if url.get_backend_name() == "sqlite":
        return _sqlite_engine(settings)
    return create_engine(
        url,
        pool_size=settings.pool_size,
        max_overflow=settings.max_overflow,
        pool_timeout=settings.pool_timeout,
        pool_pre_ping=settings.pool_pre_ping,
        echo=settings.echo,
    )


# SQLite engines -> the lock their writers queue on (see writer_lock.py).
_writer_locks: weakref.WeakKeyDictionary[Engine, AbstractContextManager[Any]] = weakref.WeakKeyDictionary()
_held: ContextVar[tuple[Engine, Connection] | None] = ContextVar("blackboard_held_transaction", default=None)


@contextmanager
def write_transaction(engine: Engine) -> Iterator[Connection]:
    """A transaction that holds the write lock from its first statement (BEGIN IMMEDIATE on SQLite).

    SQLite's default deferred BEGIN takes the lock only at the first write, so two writers that
    both read first deadlock on the upgrade and one fails at once with "database is locked",
    whatever the busy timeout. Taking the lock up front makes writers queue instead.

    Inside `held_transaction` on the same engine, this joins the held transaction.
    """
    held = _held.get()
    if held is not None and held[0] is engine:
        yield held[1]
        return
    with _writer_locks.get(engine) or nullcontext(), engine.connect() as conn:
        conn.execution_options(blackboard_write=True)
        with conn.begin():
            yield conn


@contextmanager
def held_transaction(engine: Engine) -> Iterator[Connection]:
    """One write transaction that every read and write of this thread on `engine` joins until it ends."""
    with write_transaction(engine) as conn:
        token = _held.set((engine, conn))
        try:
            yield conn
        finally:
            _held.reset(token)


@contextmanager
def read_connection(engine: Engine) -> Iterator[Connection]:
    """A connection for reads that need no transaction around them. On PostgreSQL each statement runs
    in autocommit: no BEGIN and no ROLLBACK round trips, and psycopg keeps its prepared statements,
    which it drops on every rollback (so behind the pool's rollback-on-return nothing was ever
    prepared, and every statement was planned again)."""
    with engine.connect() as conn:
        if engine.dialect.name == "postgresql":
            conn.execution_options(isolation_level="AUTOCOMMIT")
        yield conn


def held_connection(engine: Engine) -> Connection | None:
    """The transaction this thread holds on `engine`, if any."""
    held = _held.get()
    return held[1] if held is not None and held[0] is engine else None


def is_sqlite(engine: Engine) -> bool:
    return engine.dialect.name == "sqlite"


def _sqlite_engine(settings: StoreSettings) -> Engine:
    synchronous = settings.synchronous.upper()
    if synchronous not in SYNCHRONOUS_MODES:
        raise ValueError(f"synchronous: {settings.synchronous!r} is not one of {', '.join(SYNCHRONOUS_MODES)}")
    url = make_url(settings.url)
    database = url.database or ""
    in_memory = database in ("", ":memory:") or database.startswith("file::memory:")
    options: dict[str, Any] = {"connect_args": {"timeout": settings.busy_timeout, "check_same_thread": False}}
    if in_memory:
        options["poolclass"] = StaticPool  # one shared connection, or every checkout sees an empty db
    else:
        Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(url, echo=settings.echo, **options)
    # one writer at a time: a lock file for a database file; the one shared connection for :memory:
    _writer_locks[engine] = threading.Lock() if in_memory else WriterLock(f"{database}.lock", settings.busy_timeout)
    busy_ms = int(settings.busy_timeout * 1000)

    @event.listens_for(engine, "connect")
    def configure(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None  # the driver's own BEGIN handling is off: we emit ours
        cursor = dbapi_connection.cursor()
        cursor.execute(f"PRAGMA busy_timeout={busy_ms}")  # first, so the WAL switch below can wait too
        if not in_memory:
            cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute(f"PRAGMA synchronous={synchronous}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def begin(conn: Connection) -> None:
        immediate = conn.get_execution_options().get("blackboard_write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if immediate else "BEGIN")

    return engine
