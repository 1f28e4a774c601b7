"""Key permissions in the SQL store: a write naming a signal holds that signal against its board's writers
until it commits
(PostgreSQL: the board's advisory lock taken shared; SQLite: the one writer), and a rebuild keeps the key lists."""

from __future__ import annotations

import threading
import time

from blackboard.application.commands import ClaimSignal, CompleteSignal, PostSignal
from blackboard.application.projection import Projector
from blackboard.domain.signals import SignalStatus


def test_a_completion_waits_for_an_entry_transaction_that_read_its_signal(sql_board):
    posted = sql_board.service.post_signal(
        PostSignal(signal_type="RESEARCH", ps_id="b-lock", entry_id="e-1", topic="t", write_keys=("draft/*",))
    )
    sql_board.service.claim_signal(ClaimSignal(signal_id=posted.signal_id, agent_id="ps-researcher"))
    read, release, completed_at = threading.Event(), threading.Event(), []
    seen = []

    def entry_write() -> None:
        with sql_board.unit_of_work().entry("b-lock", "draft/1") as tx:
            seen.append(tx.signal(posted.signal_id))
            read.set()
            release.wait(10)

    def complete() -> None:
        sql_board.fresh_service().complete_signal(
            CompleteSignal(signal_id=posted.signal_id, agent_id="ps-researcher")
        )
        completed_at.append(time.monotonic())

    writer = threading.Thread(target=entry_write)
    writer.start()
    assert read.wait(10)
    completer = threading.Thread(target=complete)
    completer.start()
    time.sleep(0.5)
    held = not completed_at  # the completion still waits while the entry transaction holds the signal
    released_at = time.monotonic()
    release.set()
    writer.join(10)
    completer.join(10)

    assert seen[0].status is SignalStatus.CLAIMED and seen[0].write_keys == ("draft/*",)
    assert held and completed_at and completed_at[0] >= released_at


def test_a_rebuilt_read_model_keeps_a_signals_key_lists(sql_board):
    posted = sql_board.service.post_signal(
        PostSignal(
            signal_type="RESEARCH",
            ps_id="b-rebuilt",
            entry_id="e-1",
            topic="t",
            read_keys=("brief", "notes/*"),
            write_keys=("draft/*",),
        )
    )

    Projector(sql_board.store, sql_board.read_model, page_size=7).rebuild()

    rebuilt = sql_board.read_model.get(posted.signal_id)
    assert (rebuilt.read_keys, rebuilt.write_keys) == (("brief", "notes/*"), ("draft/*",))
