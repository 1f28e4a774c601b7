"""PostgreSQL wakes waiters with LISTEN/NOTIFY, and a lost listening connection loses no wake-up."""

from __future__ import annotations

import threading
import time

from sqlalchemy import text

from application.commands import ClaimSignal, CompleteSignal, PostSignal
from application.watching import Watcher
from infrastructure.persistence.notifier import PostgresNotifier
from tests.integration.conftest import SqlBoard


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
    time.sleep(0.5)

    with pg_engine.connect() as conn:  # the server drops the listener (a restart, a network cut)
        killed = conn.execute(text(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE query LIKE 'LISTEN%'"
        )).scalar()
    finish_later(board, signal_id, 0.3).join()
    waiting.join(timeout=20)

    notifier.close()
    assert killed >= 1
    assert outcome and outcome[0].status.value == "COMPLETED"
