"""The worker's nudge inbox (worker/nudges.py): a run gets each nudge of its attempt once, never one meant for
an earlier attempt or held for another claim, and the log is read only when the signal's row counts a nudge
more than was fetched."""

from __future__ import annotations

from dataclasses import replace

from blackboard.application.ports import SignalState
from blackboard.application.runners import Nudge
from blackboard.domain.blackboard import BlackboardAggregate
from blackboard.domain.signals import SignalStatus
from blackboard.infrastructure.memory.event_store import InMemoryEventStore
from blackboard.infrastructure.worker.nudges import NudgeInbox
from tests.contract.stories import RESEARCHER, post
from tests.fakes import T0

SIG = "sig-00000001"


class Counted(InMemoryEventStore):
    def __init__(self) -> None:
        super().__init__()
        self.reads = 0

    def nudges_of(self, blackboard_id, signal_id):
        self.reads += 1
        return super().nudges_of(blackboard_id, signal_id)


def test_each_nudge_reaches_its_own_attempt_s_run_once_and_the_log_is_read_only_when_one_came():
    store = Counted()
    board = BlackboardAggregate("bb-1")
    post(board, 1)
    board.claim_signal(SIG, RESEARCHER, T0, token="tok-2", runner="anthropic")
    board.nudge_signal(SIG, "alice", "for attempt one", T0)
    board.nudge_signal(SIG, "bob", "for attempt two", T0)
    *before, first, second = board.pending_events
    store.append("bb-1", 0, [*before, first, second.model_copy(update={"attempt": 2})])
    retried = replace(board.signal(SIG), attempt=2)  # the attempt running here: the second
    running = {SIG: retried}
    inbox = NudgeInbox(store, lambda: running)

    def seen(nudges: int, token: str = "tok-2") -> None:
        inbox.seen([SignalState(SIG, SignalStatus.CLAIMED, token, None, nudges)])

    seen(2)
    seen(2)  # no nudge more: no read
    assert store.reads == 1
    assert inbox.take(SIG, "tok-1") == []  # another claim's run gets none
    assert inbox.take(SIG, "tok-2") == [Nudge("bob", "for attempt two")]  # attempt one's is not for it
    assert inbox.take(SIG, "tok-2") == []  # once
    seen(3)  # the count grew: read again, nothing handed twice
    assert store.reads == 2 and inbox.take(SIG, "tok-2") == []
    seen(4, token="tok-other")  # the row of another claim than the one running here: not read
    assert store.reads == 2

    inbox.forget(SIG)  # its run ended: what is known of the signal goes
    assert inbox.take(SIG, "tok-2") == []
