"""Rate limits' windows (domain/rates.py) as pure rules, and a claim under one through the service over the
in-memory adapters (the reference behaviour): room taken at claim time, refilled with time, closed by a
429's retry-after, bounded by the remaining the headers say, settled by what a call cost."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from blackboard.application.commands import ClaimSignal, GetSignalById, PostSignal
from blackboard.domain.rates import RateLimit, RateLimited, RateSaid, RateWindow
from blackboard.domain.signals import SignalStatus
from blackboard.infrastructure.runners.rate_headers import rate_said
from tests.fakes import Board, agent

T0 = datetime(2026, 1, 1, tzinfo=UTC)
RPM = RateLimit(key="api", requests_per_minute=60)
BOTH = RateLimit(key="api", requests_per_minute=60, tokens_per_minute=6000)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def test_a_limit_needs_requests_or_tokens_per_minute():
    with pytest.raises(ValidationError, match="requests_per_minute or tokens_per_minute"):
        RateLimit(key="api")


def test_a_new_window_holds_a_minute_and_refills_at_the_limits_rate_up_to_a_minute():
    window = RateWindow.full(RPM, T0)
    for _ in range(60):
        assert window.wait(RPM, T0) == 0
        window = window.taken(RPM, T0)

    assert window.wait(RPM, T0) == pytest.approx(1.0)  # one request a second comes back
    assert window.wait(RPM, at(0.5)) == pytest.approx(0.5)
    assert window.wait(RPM, at(1)) == 0
    assert window.refilled(RPM, at(3600)).requests == 60  # never more than a minute's worth


def test_room_for_several_calls_is_asked_at_once():
    window = RateWindow.full(RPM, T0).taken(RPM, T0, 58)

    assert window.wait(RPM, T0, 2) == 0
    assert window.wait(RPM, T0, 3) == pytest.approx(1.0)


def test_a_call_takes_the_tokens_calls_cost_lately_and_what_it_cost_is_settled():
    window = RateWindow.full(BOTH, T0)
    assert window.expected(BOTH) == 0  # nothing learnt yet

    window = window.taken(BOTH, T0).settled(BOTH, T0, 0, 5000)  # it cost 5,000

    assert window.tokens == pytest.approx(1000) and window.per_call == 5000
    assert window.wait(BOTH, T0) == pytest.approx(40.0)  # 4,000 tokens short, at 100 a second
    debt = window.settled(BOTH, T0, 0, 4000)  # a call that cost more than was left: a debt
    assert debt.tokens == pytest.approx(-3000)
    assert debt.settled(BOTH, T0, 0, 10**9).tokens == -6000  # at most a minute's worth


def test_a_429_closes_the_window_until_its_retry_after_and_headers_bound_what_is_left():
    window = RateWindow.full(RPM, T0)

    closed = window.tightened(RPM, T0, RateSaid(retry_after=8))
    bounded = window.tightened(RPM, T0, RateSaid(remaining_requests=3))

    assert closed.wait(RPM, at(7)) == pytest.approx(1.0) and closed.wait(RPM, at(8)) == 0
    assert bounded.requests == 3 and bounded.tightened(RPM, T0, RateSaid(remaining_requests=50)).requests == 3


def test_the_apis_headers_are_read_whichever_api_sent_them():
    anthropic = {
        "anthropic-ratelimit-requests-remaining": "7",
        "anthropic-ratelimit-input-tokens-remaining": "900",
        "anthropic-ratelimit-output-tokens-remaining": "300",
    }
    openai = {"x-ratelimit-remaining-requests": "5", "x-ratelimit-remaining-tokens": "1200"}

    assert rate_said(anthropic) == RateSaid(None, 7, 300)
    assert rate_said(openai, 2.0) == RateSaid(2.0, 5, 1200)
    assert rate_said({"x-ratelimit-remaining-requests": "soon"}) == RateSaid()
    assert not rate_said(None).says_anything


def test_a_claim_takes_its_first_calls_room_and_a_full_window_leaves_the_signal_posted_saying_why():
    limited = agent("ps-writer", SYNTHESIS=0.9).model_copy(
        update={"rate_limit": RateLimit(key="api", requests_per_minute=2)}
    )
    board = Board(limited)
    ids = [
        board.service.post_signal(
            PostSignal(signal_type="SYNTHESIS", ps_id="ps-1", entry_id=f"e-{n}", topic="t")
        ).signal_id
        for n in range(3)
    ]
    for signal_id in ids[:2]:
        board.service.claim_signal(ClaimSignal(signal_id=signal_id, agent_id="ps-writer"))

    with pytest.raises(RateLimited, match="waiting: rate limit api") as refused:
        board.service.claim_signal(ClaimSignal(signal_id=ids[2], agent_id="ps-writer"))

    assert 0 < refused.value.wait <= 30
    assert board.queries.get_signal(GetSignalById(signal_id=ids[2])).status is SignalStatus.POSTED
    board.clock.advance(30)  # a request comes back every 30 s
    assert (
        board.service.claim_signal(ClaimSignal(signal_id=ids[2], agent_id="ps-writer")).status
        is SignalStatus.CLAIMED
    )


def test_a_run_whose_runner_takes_no_room_call_by_call_settles_what_the_whole_run_cost():
    """Claude Code makes its calls itself: the worker settles the run's tokens against its claim's take."""
    from blackboard.application.rates import RateGate
    from blackboard.application.runners import AgentBrief, RunLimits, RunOutcome, RunRequest
    from blackboard.domain.signals import SignalUsage
    from blackboard.infrastructure.memory.event_store import InMemoryEventStore
    from blackboard.infrastructure.memory.rates import InMemoryRateWindows
    from blackboard.infrastructure.worker.runs import _settle_whole_run

    windows = InMemoryRateWindows(InMemoryEventStore())
    windows.change(BOTH, T0, lambda w: w.taken(BOTH, T0))  # the claim's take
    gate = RateGate(windows, BOTH, lambda: T0)
    request = RunRequest(
        AgentBrief("writer", "", ""), "sig-1", "ps-1", "", "", RunLimits(60), ".", "t.jsonl", rate=gate
    )

    _settle_whole_run(
        request, RunOutcome(True, SignalUsage(runner="claude-code", input_tokens=4000, output_tokens=500))
    )

    (window,) = windows.windows()
    assert window.tokens == pytest.approx(6000 - 4500) and window.per_call == 4500


def test_a_call_that_cost_less_than_it_took_gives_back_no_more_than_a_minutes_worth():
    window = RateWindow.full(BOTH, T0)

    assert window.settled(BOTH, T0, 5000, 100).tokens == 6000
