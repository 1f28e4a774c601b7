"""SQLite writers take turns on the lock file; one that waits past the busy timeout gets a clear error."""

from __future__ import annotations

import threading
import time

import pytest

from blackboard.application.errors import StoreUnavailable
from blackboard.infrastructure.composition.settings import BlackboardSettings, store_settings
from blackboard.infrastructure.persistence.engine import make_engine, write_transaction
from blackboard.infrastructure.persistence.event_store import SqlAlchemyEventStore
from blackboard.infrastructure.persistence.unit_of_work import SqlUnitOfWork
from tests.contract.stories import posts


def test_write_transactions_of_two_engines_never_overlap(sqlite_url, sqlite_engine):
    other = make_engine(store_settings(BlackboardSettings(db=sqlite_url)))
    inside, overlaps = [0], []

    def write(engine) -> None:
        for _ in range(20):
            with write_transaction(engine):
                inside[0] += 1
                overlaps.append(inside[0] > 1)
                time.sleep(0.001)
                inside[0] -= 1

    threads = [threading.Thread(target=write, args=(e,)) for e in (sqlite_engine, other)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert len(overlaps) == 40 and not any(overlaps)


def test_a_writer_kept_waiting_past_the_busy_timeout_is_told_so(sqlite_url, sqlite_engine):
    impatient = SqlAlchemyEventStore(
        make_engine(store_settings(BlackboardSettings(db=sqlite_url, sqlite_busy_timeout=0.2)))
    )
    holding, release = threading.Event(), threading.Event()

    def hold() -> None:
        with write_transaction(sqlite_engine):
            holding.set()
            release.wait(5)

    holder = threading.Thread(target=hold)
    holder.start()
    holding.wait(5)
    try:
        with pytest.raises(StoreUnavailable, match="database is locked"):
            impatient.append("bb-1", 0, posts("bb-1", 1))
    finally:
        release.set()
        holder.join()
    assert impatient.load("bb-1") == []


def test_a_lock_file_that_cannot_be_opened_is_an_unavailable_store_and_nothing_is_written(
    tmp_path, sqlite_url, sqlite_engine
):
    lock = tmp_path / "blackboard.db.lock"
    lock.unlink()
    lock.mkdir()  # a folder where the lock file should be: opening it fails with an OSError
    engine = make_engine(store_settings(BlackboardSettings(db=sqlite_url)))
    store = SqlAlchemyEventStore(engine)

    with pytest.raises(StoreUnavailable, match="blackboard.db.lock"):
        store.append("bb-1", 0, posts("bb-1", 1))
    with pytest.raises(StoreUnavailable, match="could not write to bb-1.*blackboard.db.lock"):
        with SqlUnitOfWork(engine).board("bb-1"):
            pass
    assert store.load("bb-1") == []
