"""`wait` returns as soon as its signal ends, whichever way: completed, failed, expired or marked UNCLAIMED
while the waiter sleeps. Against a waiter that only wakes for some endings, the others time out here
(issue 17, item 6)."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from blackboard.application.commands import ClaimSignal, CompleteSignal, ExpireSignals, FailSignal, PostSignal
from blackboard.application.ports import Scope
from blackboard.application.watching import Watcher
from blackboard.domain.signals import AgentSignal, SignalStatus
from blackboard.infrastructure.persistence.polling import PollingNotifier
from tests.fakes import SEED_RULE, Board, agent
from tests.waiting import wait_until


def _claimed(board: Board, signal_id: str) -> None:
    board.service.claim_signal(ClaimSignal(signal_id=signal_id, agent_id="ps-researcher"))


def _expire(board: Board, signal_id: str) -> None:
    board.clock.advance(board.settings.post_timeout.total_seconds() + 1)
    board.service.expire_signals(ExpireSignals())


def _unclaim(board: Board, signal_id: str) -> None:
    """The board marks the waiting signal UNCLAIMED (as a post or a retry does when no agent can take it)."""
    with board.unit_of_work().board("ps-1") as tx:
        held = tx.load(Scope(signals=(signal_id,), ends=True))
        held.mark_unclaimed(signal_id, "no agent may claim it any more", board.clock.now())
        tx.commit(held, {"actor": "test"})


def _complete(board: Board, signal_id: str) -> None:
    _claimed(board, signal_id)
    board.service.complete_signal(CompleteSignal(signal_id=signal_id, agent_id="ps-researcher"))


def _fail(board: Board, signal_id: str) -> None:
    _claimed(board, signal_id)
    board.service.fail_signal(FailSignal(signal_id=signal_id, agent_id="ps-researcher", error="no sources"))


ENDINGS: dict[str, tuple[Callable[[Board, str], None], SignalStatus]] = {
    "completed": (_complete, SignalStatus.COMPLETED),
    "failed": (_fail, SignalStatus.FAILED),
    "expired": (_expire, SignalStatus.EXPIRED),
    "unclaimed": (_unclaim, SignalStatus.UNCLAIMED),
}


@pytest.mark.parametrize("ending", ENDINGS)
def test_a_waiter_wakes_when_its_signal_ends(ending):
    board = Board(agent("ps-researcher", RESEARCH=0.9), settings=SEED_RULE)
    signal_id = board.service.post_signal(
        PostSignal(signal_type="RESEARCH", ps_id="ps-1", entry_id="e-1", topic="t")
    ).signal_id
    notifier = PollingNotifier(board.store, interval=0.01)
    watcher = Watcher(board.store, board.queries, notifier)
    polls, ended = [], []
    counting = notifier.wait

    def wait(after: int, timeout: float) -> bool:
        polls.append(after)
        return counting(after, timeout)

    notifier.wait = wait  # type: ignore[method-assign]
    waiter = threading.Thread(target=lambda: ended.append(watcher.wait_for_signal(signal_id, timeout=30)))
    waiter.start()
    wait_until(lambda: polls, 30, "the waiter to start waiting")  # it has read the signal as POSTED

    end, status = ENDINGS[ending]
    end(board, signal_id)
    waiter.join(timeout=60)

    assert not waiter.is_alive() and len(ended) == 1, "the waiter did not return"
    signal: AgentSignal = ended[0]
    assert (signal.signal_id, signal.status) == (signal_id, status)
