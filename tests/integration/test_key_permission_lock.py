"""A write naming a signal holds that signal against its board's writers until it commits (key permissions):
on PostgreSQL through the board's advisory lock taken shared, on SQLite through the one writer."""

from __future__ import annotations

import threading
import time

from blackboard.application.commands import ClaimSignal, CompleteSignal, PostSignal
from blackboard.domain.signals import SignalStatus


def test_a_completion_waits_for_an_entry_transaction_that_read_its_signal(sql_board):
    posted = sql_board.service.post_signal(PostSignal(signal_type="RESEARCH", ps_id="b-lock", entry_id="e-1",
                                                      topic="t", write_keys=("draft/*",)))
    sql_board.service.claim_signal(ClaimSignal(signal_id=posted.signal_id, agent_id="ps-researcher"))
    read, release, completed_at = threading.Event(), threading.Event(), []
    seen = []

    def entry_write() -> None:
        with sql_board.unit_of_work().entry("b-lock", "draft/1") as tx:
            seen.append(tx.signal(posted.signal_id))
            read.set()
            release.wait(10)

    def complete() -> None:
        sql_board.fresh_service().complete_signal(CompleteSignal(signal_id=posted.signal_id, agent_id="ps-researcher"))
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
