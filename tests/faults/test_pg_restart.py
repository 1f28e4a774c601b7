"""A PostgreSQL server restarted (pg_ctl restart -m fast) under running workers, twice, on a private cluster
(never the machine's shared server): every signal is handled exactly once and completed, no worker
surfaces a traceback, every completion's knowledge item lands on the board, and the log keeps its invariants."""

from __future__ import annotations

import time

from sqlalchemy import create_engine, text

from blackboard.domain.signals import SignalStatus
from tests.faults.conftest import Store, assert_clean, scaled
from tests.faults.private_pg import private_cluster
from tests.integration.test_workers import Board


def test_workers_ride_out_server_restarts_without_losing_or_repeating_work(tmp_path, record_property):
    with private_cluster() as cluster:
        admin = create_engine(cluster.url, isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.execute(text('CREATE DATABASE "faults"'))
        admin.dispose()
        url = cluster.url.rsplit("/", 1)[0] + "/faults"
        board = Board(tmp_path, url=url, BLACKBOARD_POOL_PRE_PING="1")
        try:
            board.agent("ps-worker", "RESEARCH")
            posted = board.post_many("RESEARCH", scaled(24))
            for _ in range(2):
                board.worker("ps-worker", "--concurrency", "2", SLEEP="0.2")
            restarts = 0
            for share in (0.25, 0.6):  # restarted while a quarter, then most, of the work is done
                board.until(lambda: len(board.handled()) >= share * len(posted), 120, f"{share:.0%} handled")
                cluster.restart()
                restarts += 1
            board.until(
                lambda: all(board.status(s) is SignalStatus.COMPLETED for s in posted),
                180,
                "every signal to complete",
            )
            expected = {f"{s}/knowledge/1" for s in posted}
            # an item lands right after its completion commits, in a transaction of its own: wait for it
            deadline = time.monotonic() + 60
            while (landed := {r.event.key for r in board.records("EntryWritten")}) != expected:
                if time.monotonic() > deadline:
                    break  # the comparison below names what is missing
                time.sleep(0.1)
        finally:
            board.stop_all()
            board.container.engine().dispose()
        for pid, stderr in board.stderr.items():
            assert_clean(stderr, f"worker {pid}")
        handled = sorted(entry["signal_id"] for entry in board.handled())
        assert handled == sorted(posted)  # each once: none lost, none done twice
        assert landed == expected  # every completion's knowledge item, once
        Store(url, tmp_path / "check").assert_sound()
        record_property("server_restarts", restarts)
        record_property("signals", len(posted))
