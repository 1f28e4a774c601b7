"""Claim tokens, lease renewals and retries on the aggregate."""

from __future__ import annotations

from datetime import timedelta

import pytest

from blackboard.domain.blackboard import BlackboardAggregate
from blackboard.domain.errors import InvalidTransition, StaleClaim
from blackboard.domain.events import AgentSignalClaimRenewed, AgentSignalPosted
from blackboard.domain.signals import SignalResult, SignalStatus
from blackboard.infrastructure.documents import jsonable, signal
from tests.contract.stories import RESEARCHER, post
from tests.fakes import T0

POST, CLAIM = timedelta(seconds=30), timedelta(seconds=300)


def claimed(token: str | None = "tok-a") -> BlackboardAggregate:
    board = BlackboardAggregate("bb-1")
    post(board, 1)
    board.claim_signal("sig-00000001", RESEARCHER, T0, token=token)
    board.collect_events()
    return board


def test_the_claimer_rule_is_its_claimer_and_the_claim_s_token_when_it_has_one():
    """AgentSignal.held_by: the one rule the aggregate, key permissions, a run's authority, the worker and
    the MCP session all call."""
    with_token = claimed("tok-a").signal("sig-00000001")
    without = claimed(None).signal("sig-00000001")

    assert with_token.held_by("ps-researcher", "tok-a")
    assert not with_token.held_by("ps-researcher", "tok-b") and not with_token.held_by("ps-researcher", None)
    assert not with_token.held_by("ps-writer", "tok-a")
    assert without.held_by("ps-researcher", None) and without.held_by("ps-researcher", "anything")
    assert not without.held_by("ps-writer", None)


def test_a_claim_with_a_token_is_completed_only_with_that_token():
    board = claimed("tok-a")

    with pytest.raises(StaleClaim, match="another claim token"):
        board.complete_signal("sig-00000001", "ps-researcher", SignalResult(), T0, token="tok-b")
    with pytest.raises(StaleClaim):
        board.fail_signal("sig-00000001", "ps-researcher", "x", T0)  # no token at all
    assert board.collect_events() == []

    board.complete_signal("sig-00000001", "ps-researcher", SignalResult(), T0, token="tok-a")
    assert board.signal("sig-00000001").status is SignalStatus.COMPLETED


def test_a_claim_without_a_token_is_identified_by_its_agent_as_before():
    board = claimed(token=None)

    board.fail_signal("sig-00000001", "ps-researcher", "no sources", T0, token="anything")

    assert board.signal("sig-00000001").status is SignalStatus.FAILED


def test_the_token_stays_out_of_the_signal_document():
    board = claimed("secret-token")

    assert "secret-token" not in str(jsonable(signal(board.signal("sig-00000001"))))


def test_renewing_restarts_the_claim_timeout():
    board = claimed()
    board.renew_claim("sig-00000001", "ps-researcher", T0 + timedelta(seconds=200), token="tok-a")
    assert isinstance(board.collect_events()[0], AgentSignalClaimRenewed)

    assert board.expire_overdue(T0 + timedelta(seconds=450), POST, CLAIM) == []  # 250 s since the renewal
    ended = board.expire_overdue(T0 + timedelta(seconds=500), POST, CLAIM)
    assert [s.signal_id for s in ended] == ["sig-00000001"]


def test_a_worker_presumed_dead_cannot_renew_or_complete_after_its_claim_expired():
    board = claimed("tok-a")
    board.expire_overdue(T0 + CLAIM, POST, CLAIM)

    with pytest.raises(InvalidTransition, match="EXPIRED"):
        board.renew_claim("sig-00000001", "ps-researcher", T0 + CLAIM, token="tok-a")
    with pytest.raises(InvalidTransition):
        board.complete_signal("sig-00000001", "ps-researcher", SignalResult(), T0 + CLAIM, token="tok-a")


@pytest.mark.parametrize("token", ["tok-b", None])
def test_renewing_needs_the_current_token(token):
    board = claimed("tok-a")

    with pytest.raises(StaleClaim):
        board.renew_claim("sig-00000001", "ps-researcher", T0, token=token)


def test_a_failed_signal_is_retried_as_a_new_signal_linked_to_it():
    board = claimed(None)
    board.fail_signal("sig-00000001", "ps-researcher", "flaky", T0)

    retry = board.retry_signal("sig-00000001", "sig-000000aa", "ps-skill", T0 + timedelta(seconds=5))

    posted = board.collect_events()[-1]
    assert isinstance(posted, AgentSignalPosted) and posted.retry_of == "sig-00000001"
    assert retry.status is SignalStatus.POSTED and retry.payload == board.signal("sig-00000001").payload
    assert board.latest_retry("sig-00000001") == "sig-000000aa"


@pytest.mark.parametrize("status", ["POSTED", "CLAIMED", "COMPLETED"])
def test_only_failed_expired_or_cancelled_signals_can_be_retried(status):
    board = BlackboardAggregate("bb-1")
    post(board, 1)
    if status != "POSTED":
        board.claim_signal("sig-00000001", RESEARCHER, T0)
    if status == "COMPLETED":
        board.complete_signal("sig-00000001", "ps-researcher", SignalResult(), T0)
    board.collect_events()

    with pytest.raises(InvalidTransition, match="only CANCELLED or EXPIRED or FAILED signals can be retried"):
        board.retry_signal("sig-00000001", "sig-000000aa", "ps-skill", T0)
    assert board.collect_events() == []


def test_a_cancelled_signal_is_posted_again_by_a_retry_and_its_dependant_chains_after_the_retry():
    """A mistaken cancel is undone by retrying (issue 34): the work posted again, linked by `retry_of`, and
    the dependant the cancel took down, retried next, waits for that retry."""
    board = BlackboardAggregate("bb-1")
    post(board, 1)
    post(board, 2, after=("sig-00000001",))
    board.cancel_signal("sig-00000001", "alice", "wrong one", T0)
    board.collect_events()

    again = board.retry_signal("sig-00000001", "sig-000000aa", "bob", T0 + timedelta(seconds=1))
    follow = board.retry_signal("sig-00000002", "sig-000000bb", "bob", T0 + timedelta(seconds=2))

    assert (again.status, again.retry_of, again.payload) == (
        SignalStatus.POSTED,
        "sig-00000001",
        board.signal("sig-00000001").payload,
    )
    assert (follow.status, follow.after, follow.waiting_for) == (
        SignalStatus.POSTED,
        ("sig-000000aa",),
        frozenset({"sig-000000aa"}),
    )


def test_a_retried_dependant_waits_for_the_retry_of_its_upstream():
    board = claimed(None)
    post(board, 2, "REVIEW", after=("sig-00000001",))
    board.fail_signal("sig-00000001", "ps-researcher", "flaky", T0)  # expires the review too
    board.retry_signal("sig-00000001", "sig-000000aa", "ps-skill", T0)

    review = board.retry_signal("sig-00000002", "sig-000000bb", "ps-skill", T0)

    assert review.after == ("sig-000000aa",) and review.waiting_for == frozenset({"sig-000000aa"})
    assert review.status is SignalStatus.POSTED


def test_a_restored_board_remembers_its_retries():
    board = claimed(None)
    board.fail_signal("sig-00000001", "ps-researcher", "flaky", T0)
    board.retry_signal("sig-00000001", "sig-000000aa", "ps-skill", T0)

    restored = BlackboardAggregate.restore("bb-1", board.version, board.signals.values())

    assert restored.latest_retry("sig-00000001") == "sig-000000aa"
