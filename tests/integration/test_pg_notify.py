"""PostgreSQL wakes waiters with LISTEN/NOTIFY, and a lost listening connection loses no wake-up; polling on SQLite.

Both notifiers say whether the log moved past the waiter's position (True) or the time ran out (False)."""

from __future__ import annotations

import threading
import time

from sqlalchemy import text

from blackboard.application.commands import ClaimSignal, CompleteSignal, PostSignal
from blackboard.application.watching import Watcher
from blackboard.infrastructure.persistence.event_store import SqlAlchemyEventStore
from blackboard.infrastructure.persistence.listening import NOTIFY_CHANNEL, PostgresNotifier
from blackboard.infrastructure.persistence.polling import PollingNotifier
from tests.integration.conftest import SqlBoard
from tests.waiting import wait_until


def research(board: SqlBoard, n: int) -> str:
    return board.service.post_signal(
        PostSignal(signal_type="RESEARCH", ps_id="ps-n", entry_id=f"e-{n}", topic="t")
    ).signal_id


def finish_later(board: SqlBoard, signal_id: str, delay: float) -> threading.Thread:
    def run() -> None:
        time.sleep(delay)
        other = board.fresh_service()  # another writer, as another process would be
        other.claim_signal(ClaimSignal(signal_id=signal_id, agent_id="ps-researcher"))
        other.complete_signal(CompleteSignal(signal_id=signal_id, agent_id="ps-researcher"))

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_a_notification_wakes_a_waiter_at_once(pg_engine):
    board = SqlBoard(pg_engine)
    notifier = PostgresNotifier(pg_engine, board.store)
    position = board.store.last_position()
    notifier.wait(position, 0.01)  # opens the listening connection
    writer = finish_later(board, research(board, 1), 0.2)  # the post itself notifies first

    started = time.monotonic()
    notifier.wait(board.store.last_position(), 10)
    woke = time.monotonic() - started

    writer.join()
    notifier.close()
    assert woke < 1.0  # a notification, not the 10 s timeout


def test_a_wait_survives_its_listening_connection_being_killed(pg_engine):
    board = SqlBoard(pg_engine)
    signal_id = research(board, 2)
    notifier = PostgresNotifier(pg_engine, board.store)
    watcher = Watcher(board.store, board.queries, notifier)
    outcome: list = []
    waiting = threading.Thread(target=lambda: outcome.append(watcher.wait_for_signal(signal_id, timeout=20)))
    waiting.start()
    wait_until(lambda: _listeners(pg_engine), 20, "the waiter to listen")

    with pg_engine.connect() as conn:  # the server drops the listener (a restart, a network cut)
        killed = conn.execute(
            text(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                "WHERE query LIKE 'LISTEN%' AND datname = current_database()"  # this run's listeners only
            )
        ).scalar()
    finish_later(board, signal_id, 0.3).join()
    waiting.join(timeout=20)

    notifier.close()
    assert killed >= 1
    assert outcome and outcome[0].status.value == "COMPLETED"


def _listeners(pg_engine) -> int:
    with pg_engine.connect() as conn:
        return conn.execute(
            text(
                "SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'LISTEN%' AND datname = current_database()"
            )
        ).scalar()


def timed(wait, *args) -> tuple[bool, float]:
    started = time.monotonic()
    moved = wait(*args)
    return moved, time.monotonic() - started


def notify_later(pg_engine, payload: str, delay: float) -> threading.Thread:
    """A notification on the blackboard channel that no append sent (as a stale or foreign one would be)."""

    def run() -> None:
        time.sleep(delay)
        with pg_engine.begin() as conn:
            conn.execute(
                text("SELECT pg_notify(:channel, :payload)"), {"channel": NOTIFY_CHANNEL, "payload": payload}
            )

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_a_fresh_listener_says_true_at_once_when_the_log_is_already_past_the_position(pg_engine):
    board = SqlBoard(pg_engine)
    research(board, 1)
    notifier = PostgresNotifier(pg_engine, board.store)

    moved, took = timed(notifier.wait, 0, 10)

    notifier.close()
    assert moved is True and took < 1.0


def test_a_wait_nothing_answers_says_false_after_its_timeout(pg_engine):
    board = SqlBoard(pg_engine)
    research(board, 1)
    notifier = PostgresNotifier(pg_engine, board.store)

    moved, took = timed(notifier.wait, board.store.last_position(), 0.3)

    notifier.close()
    assert moved is False and took >= 0.3


def test_an_append_past_the_position_makes_the_wait_say_true(pg_engine):
    board = SqlBoard(pg_engine)
    signal_id = research(board, 1)
    notifier = PostgresNotifier(pg_engine, board.store)
    assert notifier.wait(board.store.last_position(), 0.01) is False  # listening from here on
    writer = finish_later(board, signal_id, 0.2)

    moved, took = timed(notifier.wait, board.store.last_position(), 10)

    writer.join()
    notifier.close()
    assert moved is True and took < 5.0


def test_a_notification_for_a_position_at_or_before_the_waiters_does_not_end_its_wait(pg_engine):
    board = SqlBoard(pg_engine)
    research(board, 1)
    research(board, 2)
    notifier = PostgresNotifier(pg_engine, board.store)
    last = board.store.last_position()
    assert notifier.wait(last, 0.01) is False  # listening from here on
    stale = [notify_later(pg_engine, str(last - 1), 0.1), notify_later(pg_engine, str(last), 0.2)]

    moved, took = timed(notifier.wait, last, 1.0)

    for thread in stale:
        thread.join()
    assert moved is False and took >= 1.0
    notify_later(pg_engine, str(last + 1), 0.1).join()  # one past it does
    moved, took = timed(notifier.wait, last, 10)
    notifier.close()
    assert moved is True and took < 5.0


def test_the_polling_notifier_says_whether_the_log_moved_past_the_position(sqlite_engine):
    store = SqlAlchemyEventStore(sqlite_engine)
    board = SqlBoard(sqlite_engine)
    notifier = PollingNotifier(store, interval=0.01)

    assert timed(notifier.wait, 0, 0.2)[0] is False  # an empty log
    research(board, 1)
    moved, took = timed(notifier.wait, 0, 10)
    assert moved is True and took < 1.0
    last = store.last_position()
    moved, took = timed(notifier.wait, last, 0.2)
    assert moved is False and took >= 0.2
    poster = threading.Thread(target=lambda: (time.sleep(0.1), research(board, 2)))
    poster.start()
    moved, took = timed(notifier.wait, last, 10)
    poster.join()
    assert moved is True and took < 5.0


def test_the_postgres_notifier_knows_the_position_a_notification_showed_while_its_connection_lives(pg_engine):
    board = SqlBoard(pg_engine)
    research(board, 1)
    notifier = PostgresNotifier(pg_engine, board.store)
    assert notifier.seen() is None  # not listening yet: it cannot know
    notifier.wait(0, 0.01)  # connects, and checks the log once
    assert notifier.seen() == board.store.last_position()
    before = board.store.last_position()
    research(board, 2)  # its append notifies

    deadline = time.monotonic() + 10  # no wait: seen() reads what is queued on the connection
    while notifier.seen() == before and time.monotonic() < deadline:
        time.sleep(0.01)
    assert notifier.seen() == board.store.last_position() > before
    assert notifier.wait(before, 0.01) is True
    with pg_engine.connect() as conn:  # the server drops the listener (a restart, a network cut)
        conn.execute(
            text("SELECT pg_terminate_backend(:pid)"), {"pid": notifier._connection.info.backend_pid}
        )
    notifier.wait(board.store.last_position(), 0.5)  # finds its connection gone
    assert notifier.seen() is None  # what it heard may be out of date: ask the store
    notifier.close()


def test_a_reconnected_listener_takes_the_logs_end_not_what_its_old_connection_heard(pg_engine):
    board = SqlBoard(pg_engine)
    research(board, 1)
    notifier = PostgresNotifier(pg_engine, board.store)
    notifier.wait(0, 0.01)
    notify_later(pg_engine, "1000000", 0.0).join()  # a stray notification on our channel
    notifier.wait(board.store.last_position(), 1.0)
    assert notifier.seen() == 1000000  # it cannot tell a stray number from a position
    with pg_engine.connect() as conn:
        conn.execute(
            text("SELECT pg_terminate_backend(:pid)"), {"pid": notifier._connection.info.backend_pid}
        )
    notifier.wait(2_000_000, 0.5)  # listens, and finds its connection gone
    notifier.wait(0, 0.5)  # reconnects, and reads the log's end

    assert notifier.seen() == board.store.last_position()
    notifier.close()
