"""What an ended signal says about how it ended (issue 34): who cancelled it, apart from the agent whose run was
stopped, and, for one an upstream took down, no upstream still listed as awaited."""

from __future__ import annotations

from blackboard.domain.blackboard import BlackboardAggregate
from blackboard.domain.signals import SignalStatus
from tests.contract.stories import RESEARCHER, post
from tests.fakes import T0


def test_a_cancel_keeps_who_cancelled_apart_from_the_claimer_and_what_it_took_down_waits_for_nothing():
    """`show` says who cancelled (issue 34: it said the claimer, whose run was stopped), and a dependant the
    cancel took down no longer lists its upstream as awaited: its reason names it."""
    board = BlackboardAggregate("bb-1")
    post(board, 1)
    post(board, 2, after=("sig-00000001",))
    board.claim_signal("sig-00000001", RESEARCHER, T0)

    board.cancel_signal("sig-00000001", "alice", "wrong board", T0)

    cancelled, dependant = board.signal("sig-00000001"), board.signal("sig-00000002")
    assert (cancelled.claimed_by, cancelled.decided_by, cancelled.decision_note) == (
        "ps-researcher",
        "alice",
        "wrong board",
    )
    assert (dependant.status, dependant.waiting_for, dependant.decided_by) == (
        SignalStatus.CANCELLED,
        frozenset(),
        "alice",
    )
    assert dependant.result.error == "upstream sig-00000001 was cancelled by alice: wrong board"
    replayed = BlackboardAggregate.replay("bb-1", board.collect_events())
    assert replayed.signal("sig-00000002") == dependant


def test_a_dependant_expired_with_its_upstream_waits_for_nothing():
    board = BlackboardAggregate("bb-1")
    post(board, 1)
    post(board, 2, after=("sig-00000001",))

    board.expire_signal("sig-00000001", "no one came", T0)

    assert board.signal("sig-00000002").status is SignalStatus.EXPIRED
    assert board.signal("sig-00000002").waiting_for == frozenset()
