"""`read_connection`: on SQLite a thread keeps its read connection from one read to the next (sqlite.KeptReads),
out of the pool; what a read sees, and when the connection goes, stay as they were with the pool's."""

from __future__ import annotations

import gc
import os
import sqlite3
import threading
import weakref

import pytest
from sqlalchemy import func, select
from sqlalchemy.exc import ResourceClosedError

from blackboard.infrastructure.composition.settings import BlackboardSettings, store_settings
from blackboard.infrastructure.persistence import lean
from blackboard.infrastructure.persistence.engine import make_engine, read_connection, write_transaction
from blackboard.infrastructure.persistence.tables import CHECKPOINTS

COUNT = select(func.count()).select_from(CHECKPOINTS)


def _add(engine, name: str) -> None:
    with write_transaction(engine) as conn:
        conn.execute(CHECKPOINTS.insert(), {"name": name, "position": 1})


def _driver(conn):
    return conn.connection.dbapi_connection


def test_every_read_sees_the_last_commit_also_after_a_read_that_began_a_transaction(sql_engine):
    with read_connection(sql_engine) as conn:
        before = conn.execute(COUNT).scalar_one()  # through SQLAlchemy: it begins a transaction
    _add(sql_engine, "r-1")
    with read_connection(sql_engine) as conn:
        assert conn.execute(COUNT).scalar_one() == before + 1  # not the snapshot of the read before
    _add(sql_engine, "r-2")
    with read_connection(sql_engine) as conn:
        assert lean.one(conn, COUNT, {}) == (before + 2,)  # on the driver too


def test_a_thread_keeps_its_sqlite_read_connection_and_a_read_inside_a_read_takes_another(sqlite_engine):
    with read_connection(sqlite_engine) as conn:
        kept = _driver(conn)
        with read_connection(sqlite_engine) as inner:
            assert _driver(inner) is not kept
            assert inner.execute(COUNT).scalar_one() == conn.execute(COUNT).scalar_one()
    with read_connection(sqlite_engine) as conn:
        assert _driver(conn) is kept
    seen = []
    thread = threading.Thread(target=lambda: seen.append(_driver(read_connection(sqlite_engine).__enter__())))
    thread.start()
    thread.join()
    assert seen and seen[0] is not kept


def test_more_reading_threads_than_the_pool_holds_do_not_keep_a_writer_waiting(sqlite_engine):
    readers = sqlite_engine.pool.size() + sqlite_engine.pool._max_overflow + 5  # type: ignore[attr-defined]
    everyone_reads = threading.Barrier(readers + 1, timeout=60)
    written = threading.Event()
    errors: list[BaseException] = []

    def read() -> None:
        try:
            with read_connection(sqlite_engine) as conn:
                conn.execute(COUNT).scalar_one()
                everyone_reads.wait()  # every reader holds its connection at once
                assert written.wait(60)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=read) for _ in range(readers)]
    for thread in threads:
        thread.start()
    everyone_reads.wait()  # with the pool's connections, the readers past its size would wait here, and fail
    _add(sqlite_engine, "w-1")
    written.set()
    for thread in threads:
        thread.join()
    assert errors == []


def test_disposing_the_engine_closes_the_idle_connections_and_a_busy_one_once_its_read_ends(sqlite_engine):
    with read_connection(sqlite_engine) as conn:
        idle = _driver(conn)
    holding, release = threading.Event(), threading.Event()
    busy = []

    def read() -> None:
        with read_connection(sqlite_engine) as conn:
            busy.append(_driver(conn))
            holding.set()
            release.wait(60)
            conn.execute(COUNT).scalar_one()  # still usable until its read ends

    thread = threading.Thread(target=read)
    thread.start()
    assert holding.wait(60)
    sqlite_engine.dispose()
    with pytest.raises(Exception, match="closed"):
        idle.execute("SELECT 1")
    busy[0].execute("SELECT 1")  # in its read: open
    release.set()
    thread.join()
    with pytest.raises(Exception, match="closed"):
        busy[0].execute("SELECT 1")
    with read_connection(sqlite_engine) as conn:  # the engine goes on with new connections
        assert _driver(conn) is not idle
        assert conn.execute(COUNT).scalar_one() >= 0


def test_a_forked_child_reads_on_a_connection_of_its_own_and_leaves_its_parent_s_alone(sqlite_engine):
    with read_connection(sqlite_engine) as conn:
        parent = _driver(conn)
    _add(sqlite_engine, "f-1")
    reading, writing = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: a read, on a connection that is not the parent's
        code = 1
        try:
            with read_connection(sqlite_engine) as conn:
                own = _driver(conn) is not parent
                code = 0 if own and conn.execute(COUNT).scalar_one() >= 1 else 2
            os.write(writing, b"%d" % code)
        finally:
            os._exit(code)
    os.close(writing)
    told = os.read(reading, 16)
    os.close(reading)
    _, status = os.waitpid(pid, 0)
    assert (told, os.waitstatus_to_exitcode(status)) == (b"0", 0)
    with read_connection(sqlite_engine) as conn:  # the parent's own connection is as it was
        assert _driver(conn) is parent
        assert conn.execute(COUNT).scalar_one() >= 1


def test_a_read_after_its_connection_was_closed_under_it_opens_another(sqlite_engine):
    with read_connection(sqlite_engine) as conn:
        conn.close()  # a read that closed it (or an error that invalidated it)
    with read_connection(sqlite_engine) as conn:
        assert conn.execute(COUNT).scalar_one() >= 0
    with pytest.raises(ResourceClosedError):
        with read_connection(sqlite_engine) as conn:
            conn.close()
            conn.execute(COUNT)
    with read_connection(sqlite_engine) as conn:
        assert conn.execute(COUNT).scalar_one() >= 0


def _open_on(path) -> bool:
    """Whether this process has the file open (its kept connections would)."""
    folder = "/proc/self/fd"
    return any(os.path.realpath(os.path.join(folder, fd)) == str(path) for fd in os.listdir(folder))


def test_an_engine_dropped_without_dispose_goes_with_its_kept_connections(tmp_path):
    database = (tmp_path / "dropped.db").resolve()
    engine = make_engine(store_settings(BlackboardSettings(db=f"sqlite:///{database}")))
    with read_connection(engine) as conn:
        assert conn.execute(select(1)).scalar_one() == 1
    assert _open_on(database)  # the thread keeps it
    gone = weakref.ref(engine)
    del engine, conn
    gc.collect()
    assert gone() is None  # this thread does not hold it alive through its kept connection
    assert not _open_on(database)


def test_a_thread_s_connection_is_closed_once_it_ended_when_another_thread_opens_one(sqlite_engine):
    def read(into: list) -> None:
        with read_connection(sqlite_engine) as conn:
            into.append(_driver(conn))

    first: list = []
    thread = threading.Thread(target=read, args=(first,))
    thread.start()
    thread.join()
    first[0].execute("SELECT 1")  # kept open after its thread ended
    second: list = []
    thread = threading.Thread(target=read, args=(second,))
    thread.start()
    thread.join()
    with pytest.raises(sqlite3.ProgrammingError):
        first[0].execute("SELECT 1")  # closed: its thread had ended
    second[0].execute("SELECT 1")
