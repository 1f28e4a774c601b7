"""Automatic retries (docs/control.md, "Retries"): the policy's waits, and what a failed attempt records."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from blackboard.domain.blackboard import BlackboardAggregate
from blackboard.domain.errors import InvalidInput, InvalidTransition, NotYetDue
from blackboard.domain.events import (
    AgentSignalAttemptFailed,
    AgentSignalExpired,
    AgentSignalFailed,
)
from blackboard.domain.retries import AttemptRules, Backoff, RetryPolicy, next_attempt
from blackboard.domain.signals import SignalPayload, SignalResult, SignalStatus, SignalType, SignalUsage
from tests.fakes import T0, agent

BB = "bb-1"
A, B = "sig-0000000a", "sig-0000000b"
RESEARCHER = agent("ps-researcher", RESEARCH=0.9)
PAYLOAD = SignalPayload(ps_id="PS-1", entry_id="e-1", topic="flaky source")
POST, CLAIM = timedelta(seconds=30), timedelta(seconds=300)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def board_with(policy: RetryPolicy | None, draw: float = 0.0) -> BlackboardAggregate:
    board = BlackboardAggregate(BB)
    board.attempts = AttemptRules(policy_of=lambda _agent: policy, draw=lambda: draw)
    return board


def post(board: BlackboardAggregate, signal_id: str = A, t: float = 0, **more) -> None:
    board.post_signal(
        signal_id=signal_id,
        signal_type=SignalType.RESEARCH,
        payload=PAYLOAD,
        posted_by="ps-skill",
        at=at(t),
        **more,
    )


def claim_and_fail(board: BlackboardAggregate, t: float, error: str = "exit 1: offline", **more) -> None:
    board.claim_signal(A, RESEARCHER, at(t))
    board.fail_signal(A, "ps-researcher", error, at(t + 1), **more)


# ------------------------------------------------------------------ the policy's waits
def test_exponential_backoff_doubles_from_initial_and_stops_at_max():
    policy = RetryPolicy(max_attempts=10, initial=2, max=30, jitter=0)

    waits = [policy.wait(attempt, draw=0.5).total_seconds() for attempt in range(1, 7)]

    assert waits == [2, 4, 8, 16, 30, 30]


def test_fixed_backoff_waits_initial_every_time():
    policy = RetryPolicy(max_attempts=5, backoff=Backoff.FIXED, initial=7, max=60, jitter=0)

    assert {policy.wait(attempt, 0.9).total_seconds() for attempt in range(1, 5)} == {7}


@pytest.mark.parametrize("draw", [0.0, 0.25, 0.5, 0.999999])
def test_jitter_shortens_the_wait_by_at_most_its_fraction_and_never_lengthens_it(draw):
    policy = RetryPolicy(max_attempts=5, initial=10, max=100, jitter=0.4)

    wait = policy.wait(2, draw).total_seconds()

    assert 20 * 0.6 <= wait <= 20
    assert wait == pytest.approx(20 * (1 - 0.4 * draw))


def test_the_longest_jittered_wait_is_max_and_the_shortest_its_jitter_below():
    policy = RetryPolicy(max_attempts=50, initial=1, max=60, jitter=0.5)

    assert policy.wait(40, 0.0) == timedelta(seconds=60)
    assert policy.wait(40, 1.0) == timedelta(seconds=30)
    assert policy.wait(10_000, 0.0) == timedelta(seconds=60)  # a huge attempt number does not overflow


@pytest.mark.parametrize(
    ("fields", "field", "rule"),
    [
        ({"max_attempts": 0}, "max_attempts", "from 1 to 1000"),
        ({"max_attempts": -2}, "max_attempts", "from 1 to 1000"),
        ({"initial": -1}, "initial", "from 0 to 86400"),
        ({"initial": 10, "max": 5}, "max", "must not be less than initial"),
        ({"jitter": 1.5}, "jitter", "from 0 to 1"),
        ({"backoff": "linear"}, "backoff", "exponential or fixed"),
    ],
)
def test_a_policy_that_makes_no_sense_names_the_field_and_the_rule(fields, field, rule):
    with pytest.raises(InvalidInput) as refused:
        RetryPolicy(**fields)

    assert refused.value.field == field
    assert rule in refused.value.rule


def test_the_post_s_limit_wins_over_the_policy_s_and_the_default_is_one_attempt():
    three = RetryPolicy(max_attempts=3, jitter=0)

    assert next_attempt(1, None, None, T0, 0.0) is None  # no policy, no limit of the post: one attempt
    assert next_attempt(1, None, three, T0, 0.0).max_attempts == 3
    assert next_attempt(1, 1, three, T0, 0.0) is None  # the post said one attempt
    assert next_attempt(3, 5, None, T0, 0.0).at == T0 + timedelta(seconds=4)  # default backoff, no jitter
    assert next_attempt(2, 5, three, T0, 0.0, retry_after=42).at == T0 + timedelta(seconds=42)


# ------------------------------------------------------------------ transitions
def test_a_failed_attempt_with_attempts_left_puts_the_same_signal_back_after_its_backoff():
    board = board_with(RetryPolicy(max_attempts=3, initial=5, max=60, jitter=0))
    post(board)
    board.collect_events()

    claim_and_fail(board, 10)

    events = board.collect_events()
    assert [type(e) for e in events][-1] is AgentSignalAttemptFailed
    failed = events[-1]
    assert (failed.attempt, failed.max_attempts, failed.claimed_by) == (1, 3, "ps-researcher")
    assert failed.retry_at == at(16)
    signal = board.signal(A)
    assert signal.status is SignalStatus.POSTED
    assert (signal.attempt, signal.not_before, signal.claimable_since) == (2, at(16), at(16))
    assert (signal.claimed_by, signal.claim_token, signal.result) == (None, None, None)
    assert [a.error for a in signal.attempts] == ["exit 1: offline"]


def test_the_next_attempt_cannot_be_claimed_before_its_backoff_has_passed():
    board = board_with(RetryPolicy(max_attempts=2, initial=5, jitter=0))
    post(board)
    claim_and_fail(board, 10)

    with pytest.raises(NotYetDue):
        board.claim_signal(A, RESEARCHER, at(15))
    assert board.claim_signal(A, RESEARCHER, at(16)).attempt == 2


def test_the_jitter_draw_shortens_the_recorded_wait():
    board = board_with(RetryPolicy(max_attempts=2, initial=10, max=10, jitter=0.5), draw=0.5)
    post(board)

    claim_and_fail(board, 0)

    assert board.signal(A).not_before == at(1 + 7.5)


def test_the_last_attempt_fails_the_signal_and_what_waits_on_it_expires():
    board = board_with(RetryPolicy(max_attempts=2, initial=1, jitter=0))
    post(board)
    post(board, B, after=[A])
    claim_and_fail(board, 0)
    assert board.signal(B).status is SignalStatus.POSTED  # it waits for the final outcome
    assert board.signal(B).waiting_for == {A}

    claim_and_fail(board, 10, error="exit 1: offline again")

    assert board.signal(A).status is SignalStatus.FAILED
    assert board.signal(A).result.error == "exit 1: offline again"
    assert board.signal(B).status is SignalStatus.EXPIRED
    types = [type(e) for e in board.collect_events()]
    assert types.count(AgentSignalAttemptFailed) == 1
    assert types.count(AgentSignalFailed) == 1


def test_a_handler_that_asks_for_a_retry_waits_its_retry_after_and_uses_an_attempt():
    board = board_with(RetryPolicy(max_attempts=2, initial=1, jitter=0))
    post(board)

    claim_and_fail(board, 0, error="asked for a retry in 30s", retry_after=30)
    assert board.signal(A).not_before == at(31)
    claim_and_fail(board, 40, error="asked for a retry in 30s", retry_after=30)

    assert board.signal(A).status is SignalStatus.FAILED


def test_a_lapsed_claim_with_attempts_left_is_a_failed_attempt_not_an_expiry():
    board = board_with(RetryPolicy(max_attempts=2, initial=3, jitter=0))
    post(board)
    board.claim_signal(A, RESEARCHER, at(1))

    changed = board.expire_overdue(at(302), POST, CLAIM)

    assert [s.signal_id for s in changed] == [A]
    signal = board.signal(A)
    assert (signal.status, signal.attempt, signal.not_before) == (SignalStatus.POSTED, 2, at(305))
    assert signal.attempts[0].expired
    assert "did not finish within the claim timeout" in signal.attempts[0].error
    board.claim_signal(A, RESEARCHER, at(306))

    board.expire_overdue(at(607), POST, CLAIM)

    assert board.signal(A).status is SignalStatus.EXPIRED
    assert type(board.collect_events()[-1]) is AgentSignalExpired


def test_the_claimer_s_policy_applies_and_the_post_s_limit_wins_over_it():
    board = board_with(RetryPolicy(max_attempts=5, initial=1, jitter=0))
    post(board, max_attempts=1)

    claim_and_fail(board, 0)

    assert board.signal(A).status is SignalStatus.FAILED


def test_without_a_policy_or_a_limit_a_failure_is_final_as_before():
    board = BlackboardAggregate(BB)
    post(board)

    claim_and_fail(board, 0)

    assert board.signal(A).status is SignalStatus.FAILED


@pytest.mark.parametrize("bad", [0, -1, 1001])
def test_a_post_with_max_attempts_below_one_is_refused_naming_the_field(bad):
    board = BlackboardAggregate(BB)

    with pytest.raises(InvalidInput) as refused:
        post(board, max_attempts=bad)

    assert refused.value.field == "max_attempts"
    assert not board.collect_events()


def test_an_old_claimer_cannot_finish_an_attempt_that_was_retried():
    board = board_with(RetryPolicy(max_attempts=3, initial=0, jitter=0))
    post(board)
    board.claim_signal(A, RESEARCHER, at(0), token="t-1")
    board.expire_overdue(at(301), POST, CLAIM)

    with pytest.raises(InvalidTransition):
        board.fail_signal(A, "ps-researcher", "late", at(302), token="t-1")


def test_replay_gives_the_same_signal_and_usage_adds_up_over_attempts():
    board = board_with(RetryPolicy(max_attempts=3, initial=1, jitter=0))
    post(board)
    run = SignalUsage(runner="anthropic", input_tokens=10, output_tokens=2, cost_usd=0.01, turns=1)
    claim_and_fail(board, 0, usage=run)
    board.claim_signal(A, RESEARCHER, at(5))
    board.complete_signal(A, "ps-researcher", SignalResult(knowledge_items=("done",)), at(6), usage=run)
    live = board.signal(A)

    replayed = BlackboardAggregate.replay(BB, board.collect_events()).signal(A)

    assert replayed == live
    assert live.status is SignalStatus.COMPLETED and live.attempt == 2
    assert (live.usage.input_tokens, live.usage.turns) == (20, 2)
    assert live.usage.cost_usd == pytest.approx(0.02)
