"""Deadlines hold without a sweeper: a command that finds its signal past its deadline records the
expiry first (the sweeper's events, with the same cascade), then refuses. A fake clock decides."""

from __future__ import annotations

import pytest

from blackboard.application.commands import (
    ClaimSignal,
    ClaimSignals,
    CompleteSignal,
    ExpireSignals,
    FailSignal,
    GetSignalById,
    PostSignal,
    RecordOutcomes,
    RenewClaim,
    RetrySignal,
)
from blackboard.domain.errors import SignalExpired
from blackboard.domain.signals import SignalStatus
from tests.fakes import SEED_RULE, Board, agent

RESEARCHER = agent("ps-researcher", RESEARCH=0.9, ANALYSIS=0.9)
POST_TIMEOUT, CLAIM_TIMEOUT = 30, 300  # seed 003's post timeout (SEED_RULE), the default claim timeout


def research(**overrides) -> PostSignal:
    fields = dict(signal_type="RESEARCH", ps_id="ps-1", entry_id="e-1", topic="event stores")
    return PostSignal(**{**fields, **overrides})


def status(board: Board, signal_id: str) -> SignalStatus:
    return board.queries.get_signal(GetSignalById(signal_id=signal_id)).status


def claimed(board: Board) -> str:
    signal_id = board.service.post_signal(research()).signal_id
    board.service.claim_signal(ClaimSignal(signal_id=signal_id, agent_id="ps-researcher"))
    return signal_id


def test_a_claim_past_the_post_timeout_records_the_expiry_and_refuses_saying_when():
    board = Board(RESEARCHER, settings=SEED_RULE)
    signal_id = board.service.post_signal(research()).signal_id
    board.clock.advance(POST_TIMEOUT)

    with pytest.raises(
        SignalExpired, match=r"is EXPIRED: it expired at 2026-01-04 09:00:\d\d UTC \(not claimed within 30s"
    ):
        board.service.claim_signal(ClaimSignal(signal_id=signal_id, agent_id="ps-researcher"))

    assert board.event_types() == ["AgentSignalPosted", "AgentSignalExpired"]
    assert status(board, signal_id) is SignalStatus.EXPIRED


def test_a_claim_just_before_the_deadline_is_taken():
    board = Board(RESEARCHER, settings=SEED_RULE)
    signal_id = board.service.post_signal(research()).signal_id
    board.clock.advance(POST_TIMEOUT - 2)  # the clock ticks one second per reading

    assert (
        board.service.claim_signal(ClaimSignal(signal_id=signal_id, agent_id="ps-researcher")).status
        is SignalStatus.CLAIMED
    )


@pytest.mark.parametrize("command", ["complete", "fail", "renew"])
def test_a_claim_past_its_timeout_cannot_be_completed_failed_or_renewed(command):
    board = Board(RESEARCHER, settings=SEED_RULE)
    signal_id = claimed(board)
    board.clock.advance(CLAIM_TIMEOUT)
    run = {
        "complete": lambda: board.service.complete_signal(
            CompleteSignal(signal_id=signal_id, agent_id="ps-researcher")
        ),
        "fail": lambda: board.service.fail_signal(
            FailSignal(signal_id=signal_id, agent_id="ps-researcher", error="x")
        ),
        "renew": lambda: board.service.renew_claim(RenewClaim(signal_id=signal_id, agent_id="ps-researcher")),
    }[command]

    with pytest.raises(SignalExpired, match="ps-researcher did not finish within the claim timeout of 300s"):
        run()

    assert board.event_types()[-1] == "AgentSignalExpired"
    assert status(board, signal_id) is SignalStatus.EXPIRED
    with pytest.raises(SignalExpired):  # and so it stays: the second refusal records nothing more
        run()
    assert board.event_types().count("AgentSignalExpired") == 1


def test_the_expiry_a_command_records_ends_what_waits_on_the_signal_as_a_sweep_would():
    board = Board(RESEARCHER, settings=SEED_RULE)
    upstream = board.service.post_signal(research()).signal_id
    dependant = board.service.post_signal(research(signal_type="ANALYSIS", after=(upstream,))).signal_id
    board.clock.advance(POST_TIMEOUT)

    with pytest.raises(SignalExpired):
        board.service.claim_signal(ClaimSignal(signal_id=upstream, agent_id="ps-researcher"))

    assert status(board, dependant) is SignalStatus.EXPIRED
    assert (
        f"upstream {upstream} ended EXPIRED"
        in board.queries.get_signal(GetSignalById(signal_id=dependant)).result.error
    )
    assert board.service.expire_signals(ExpireSignals()) == []  # the sweeper finds nothing left to do


def test_a_batch_claim_skips_an_expired_signal_and_takes_the_next():
    board = Board(RESEARCHER, settings=SEED_RULE)
    late = board.service.post_signal(research(entry_id="e-1")).signal_id
    board.clock.advance(POST_TIMEOUT - 5)
    fresh = board.service.post_signal(research(entry_id="e-2")).signal_id
    board.clock.advance(5)

    claims = board.service.claim_signals(
        ClaimSignals(
            blackboard_id="ps-1",
            signal_ids=(late, fresh),
            agent_id="ps-researcher",
            limit=1,
        )
    )

    assert [s.signal_id for s in claims.claimed] == [fresh]
    assert isinstance(claims.skipped[late], SignalExpired)
    assert status(board, late) is SignalStatus.EXPIRED


def test_a_batch_of_outcomes_records_the_others_when_one_claim_expired():
    board = Board(RESEARCHER, settings=SEED_RULE)
    late = claimed(board)
    board.clock.advance(CLAIM_TIMEOUT - 10)
    fresh = board.service.post_signal(research(entry_id="e-2")).signal_id
    board.service.claim_signal(ClaimSignal(signal_id=fresh, agent_id="ps-researcher"))
    board.clock.advance(10)

    results = board.service.record_outcomes(
        RecordOutcomes(
            blackboard_id="ps-1",
            agent_id="ps-researcher",
            outcomes=(
                CompleteSignal(signal_id=late, agent_id="ps-researcher"),
                CompleteSignal(signal_id=fresh, agent_id="ps-researcher"),
            ),
        )
    )

    assert isinstance(results[0], SignalExpired)
    assert results[1].status is SignalStatus.COMPLETED
    assert (status(board, late), status(board, fresh)) == (SignalStatus.EXPIRED, SignalStatus.COMPLETED)


def test_retrying_a_signal_past_its_deadline_expires_it_and_posts_the_retry():
    board = Board(RESEARCHER, settings=SEED_RULE)
    signal_id = board.service.post_signal(research()).signal_id
    board.clock.advance(POST_TIMEOUT)

    retry = board.service.retry_signal(RetrySignal(signal_id=signal_id, posted_by="ps-lead"))

    assert (retry.retry_of, retry.status) == (signal_id, SignalStatus.POSTED)
    assert board.event_types() == ["AgentSignalPosted", "AgentSignalExpired", "AgentSignalPosted"]


def test_overdue_signals_not_yet_swept_are_marked_by_the_queries():
    board = Board(RESEARCHER, settings=SEED_RULE)
    late = board.service.post_signal(research()).signal_id
    board.clock.advance(POST_TIMEOUT)
    fresh = board.service.post_signal(research(entry_id="e-2")).signal_id

    marks = board.queries.overdue(
        [board.queries.get_signal(GetSignalById(signal_id=s)) for s in (late, fresh)]
    )

    assert list(marks) == [late]
    assert (
        marks[late] - board.queries.get_signal(GetSignalById(signal_id=late)).claimable_since
    ).total_seconds() == POST_TIMEOUT
