"""Work waits for its worker (docs/control.md): with no post timeout a claimable signal has no deadline; a post's
own timeout (`post --timeout`) or the default (`BLACKBOARD_POST_TIMEOUT`) gives it one, which runs only while no
live worker fits it; a wait that reaches a deadline has the board record the expiry, as a command would."""

from __future__ import annotations

from datetime import timedelta

import pytest

from blackboard.application.commands import (
    ClaimSignal,
    EnforceDeadline,
    ExpireSignals,
    GetSignalById,
    PostSignal,
)
from blackboard.application.errors import WaitTimedOut
from blackboard.domain.blackboard import BlackboardAggregate, deadline, overdue
from blackboard.domain.errors import InvalidInput
from blackboard.domain.presence import WorkerPresence
from blackboard.domain.signals import SignalPayload, SignalStatus, SignalType
from tests.fakes import T0, Board, agent

CLAIM = timedelta(seconds=300)
RESEARCHER = agent("ps-researcher", RESEARCH=0.9)


def posted(timeout_s: float | None = None):
    board = BlackboardAggregate("bb-1")
    return board.post_signal(
        signal_id="sig-00000001",
        signal_type=SignalType.RESEARCH,
        payload=SignalPayload(ps_id="bb-1", entry_id="e-1", topic="work"),
        posted_by="ps-lead",
        at=T0,
        timeout_s=timeout_s,
    )


def research(**fields) -> PostSignal:
    return PostSignal(
        **{"signal_type": "RESEARCH", "ps_id": "ps-1", "entry_id": "e-1", "topic": "t", **fields}
    )


def test_with_no_post_timeout_a_claimable_signal_has_no_deadline_and_never_expires():
    signal = posted()

    assert deadline(signal, None, CLAIM) is None
    assert not overdue(signal, T0 + timedelta(days=3650), None, CLAIM)


def test_a_signal_s_own_timeout_beats_the_default_and_holds_without_one():
    own = posted(timeout_s=90)

    assert deadline(own, None, CLAIM) == T0 + timedelta(seconds=90)
    assert deadline(own, timedelta(seconds=30), CLAIM) == T0 + timedelta(seconds=90)
    assert deadline(posted(), timedelta(seconds=30), CLAIM) == T0 + timedelta(seconds=30)  # seed 003's rule


def test_a_timeout_of_its_own_runs_only_while_no_live_worker_fits_the_signal():
    signal = posted(timeout_s=90)
    beat = T0 + timedelta(seconds=600)
    live = WorkerPresence("w-1", RESEARCHER, "host", 7, T0, beat, timedelta(seconds=2))

    assert deadline(signal, None, CLAIM, live) == live.live_until + timedelta(seconds=90)


@pytest.mark.parametrize("seconds", [0, -5])
def test_a_timeout_that_is_not_above_0_is_refused_naming_it(seconds):
    with pytest.raises(InvalidInput, match="timeout: must be above 0 seconds"):
        posted(timeout_s=seconds)


def test_the_sweep_finds_a_signal_past_its_own_timeout_with_the_default_off():
    board = Board(RESEARCHER)
    mine = board.service.post_signal(research(timeout_s=60)).signal_id
    default = board.service.post_signal(research(entry_id="e-2")).signal_id
    board.clock.advance(3600)

    ended = board.service.expire_signals(ExpireSignals())

    assert [s.signal_id for s in ended] == [mine]
    assert "not claimed within 60s of becoming claimable" in ended[0].result.error
    assert board.queries.get_signal(GetSignalById(signal_id=default)).status is SignalStatus.POSTED


def test_enforcing_a_deadline_records_the_expiry_once_it_has_come_and_nothing_before():
    board = Board(RESEARCHER)
    signal_id = board.service.post_signal(research(timeout_s=60)).signal_id

    early = board.service.enforce_deadline(EnforceDeadline(signal_id=signal_id))
    board.clock.advance(60)
    late = board.service.enforce_deadline(EnforceDeadline(signal_id=signal_id))

    assert early.status is SignalStatus.POSTED and late.status is SignalStatus.EXPIRED
    [expired] = [r for r in board.store.read_all() if r.event.event_type == "AgentSignalExpired"]
    assert expired.metadata["actor"] == "waiter"


def test_a_waiter_reaching_its_signal_s_deadline_has_the_board_expire_it_with_no_sweeper():
    board = Board(RESEARCHER)
    signal_id = board.service.post_signal(research(timeout_s=5)).signal_id
    board.clock.advance(10)

    ended = board.container.watcher().wait_for_signal(signal_id, timeout=5)

    assert ended.status is SignalStatus.EXPIRED


def test_a_waiter_on_a_lapsed_claim_with_attempts_left_waits_on_for_the_final_outcome():
    board = Board(RESEARCHER)  # the default: no post timeout
    signal_id = board.service.post_signal(research(max_attempts=2)).signal_id
    board.service.claim_signal(ClaimSignal(signal_id=signal_id, agent_id="ps-researcher"))
    board.clock.advance(CLAIM.total_seconds() + 1)

    with pytest.raises(WaitTimedOut):  # POSTED again: the wait goes on
        board.container.watcher().wait_for_signal(signal_id, timeout=0.5)

    again = board.queries.get_signal(GetSignalById(signal_id=signal_id))
    assert (again.status, again.attempt) == (SignalStatus.POSTED, 2)
