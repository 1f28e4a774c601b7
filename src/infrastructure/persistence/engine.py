"""Engines and transactions: how every adapter here reaches the database."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass

from sqlalchemy import Connection, Engine
from sqlalchemy.engine import make_url

from blackboard.infrastructure.persistence.dialect import dialect_for_url, dialect_of, remember


@dataclass(frozen=True, slots=True)
class StoreSettings:
    """How to reach and tune the database. Built from the one settings model
    (`blackboard.infrastructure.composition.settings.store_settings`), which holds every default."""

    url: str
    synchronous: str  # SQLite: FULL survives power loss; NORMAL is faster and survives crashes
    busy_timeout: float  # SQLite: seconds a writer waits for the lock before giving up
    pool_size: int  # PostgreSQL
    max_overflow: int  # PostgreSQL
    pool_timeout: float  # PostgreSQL: seconds to wait for a pooled connection
    pool_pre_ping: bool  # PostgreSQL: a round trip per checkout to weed out connections the server dropped
    echo: bool


def make_engine(settings: StoreSettings) -> Engine:
    """An engine for the URL's technology, which is remembered for everything that uses the engine."""
    dialect = dialect_for_url(make_url(settings.url).get_backend_name())
    return remember(dialect.create_engine(settings), dialect)


@contextmanager
def write_transaction(engine: Engine) -> Iterator[Connection]:
    """A transaction that holds the write lock from its first statement (BEGIN IMMEDIATE on SQLite),
    after queueing on the technology's writer turn, if it has one."""
    with dialect_of(engine).writer_turn() or nullcontext(), engine.connect() as conn:
        conn.execution_options(blackboard_write=True)
        with conn.begin():
            yield conn


def read_connection(engine: Engine) -> AbstractContextManager[Connection]:
    """A connection for reads that need no transaction around them: each statement sees the last commit
    (SQLite: the thread's own, kept from one read to the next; PostgreSQL: one of the pool's)."""
    return dialect_of(engine).read_connection(engine)
