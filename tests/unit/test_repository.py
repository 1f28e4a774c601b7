"""BlackboardRepository and the aggregate's undo: a lost race costs only the events missed."""

from __future__ import annotations

from blackboard.application.commands import ClaimSignal, PostSignal
from blackboard.domain.blackboard import BlackboardAggregate
from tests.contract.stories import RESEARCHER, every_event_type, post
from tests.fakes import T0, Board, CountingStore, agent


def test_discarding_pending_events_restores_the_board_exactly():
    board = BlackboardAggregate.replay("bb-1", every_event_type())
    before = (board.version, board.signals, board.find_by_key("key-1"))
    new = post(board, 0x40, after=("sig-00000001",))
    post(board, 0x41, after=("sig-00000004",))  # an upstream that failed: posted then expired at once
    board.claim_signal(new.signal_id, RESEARCHER, T0)

    board.discard_pending()

    assert (board.version, board.signals, board.find_by_key("key-1")) == before
    assert board.find_by_key(new.dedupe_key) is None and not board.has_pending_events
    again = post(board, 0x40, after=("sig-00000001",))  # the same command decides the same again
    assert again == new


def test_a_conflict_reloads_only_the_events_the_loser_missed():
    board = Board(agent("ps-researcher", RESEARCH=0.9), agent("ps-analyst", RESEARCH=0.85))
    first = board.service.post_signal(PostSignal(signal_type="RESEARCH", ps_id="ps-1", entry_id="e-1", topic="t"))
    board.service.post_signal(PostSignal(signal_type="RESEARCH", ps_id="ps-1", entry_id="e-2", topic="t"))
    rival = board.fresh_service()  # another process: it has its own cache of the board
    board.store = counting = CountingStore(board.store)
    board.rewire()
    board.service.claim_signal(ClaimSignal(signal_id=first.signal_id, agent_id="ps-researcher"))  # warm: at 3
    rival.post_signal(PostSignal(signal_type="RESEARCH", ps_id="ps-1", entry_id="e-3", topic="t"))  # now 4
    counting.loads.clear()
    real_append = counting._store.append

    def lose_once(*args, **kwargs):
        counting.append = real_append
        rival.post_signal(PostSignal(signal_type="RESEARCH", ps_id="ps-1", entry_id="e-4", topic="t"))
        return real_append(*args, **kwargs)

    counting.append = lose_once
    board.service.post_signal(PostSignal(signal_type="RESEARCH", ps_id="ps-1", entry_id="e-5", topic="t"))

    assert counting.loads == [3, 4]  # never from 0: the cached board was kept and caught up
    assert [e.version for e in board.store.load("ps-1")] == [1, 2, 3, 4, 5, 6]


def test_refresh_reads_another_writer_s_events_ahead_so_the_next_get_reads_only_newer_ones():
    from blackboard.application.repository import BlackboardRepository

    board = Board(agent("ps-researcher", RESEARCH=0.9))
    for n in (1, 2):
        board.service.post_signal(PostSignal(signal_type="RESEARCH", ps_id="ps-1", entry_id=f"e-{n}", topic="t"))
    counting = CountingStore(board.store)
    boards = BlackboardRepository(counting)
    boards.release(boards.get("ps-1"))  # cached at version 2
    board.service.post_signal(PostSignal(signal_type="RESEARCH", ps_id="ps-1", entry_id="e-3", topic="t"))  # 3
    counting.loads.clear()

    boards.refresh("ps-1")  # reads event 3 now, without taking the board out of the cache
    board.service.post_signal(PostSignal(signal_type="RESEARCH", ps_id="ps-1", entry_id="e-4", topic="t"))  # 4
    got = boards.get("ps-1")

    assert counting.loads == [2, 3]  # the refresh read after 2; the get only after 3
    assert got.version == 4 and len(got.signals) == 4


def test_refresh_leaves_a_board_it_does_not_hold_alone():
    from blackboard.application.repository import BlackboardRepository

    board = Board(agent("ps-researcher", RESEARCH=0.9))
    board.service.post_signal(PostSignal(signal_type="RESEARCH", ps_id="ps-1", entry_id="e-1", topic="t"))
    counting = CountingStore(board.store)
    boards = BlackboardRepository(counting)

    boards.refresh("ps-1")  # not cached: no cold load here
    out = boards.get("ps-1")
    boards.refresh("ps-1")  # out with "another thread": left alone

    assert counting.loads == [0]  # only the get loaded
    boards.release(out)
