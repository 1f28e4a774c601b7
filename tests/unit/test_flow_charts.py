"""The Spend and flow panel's series (application/flow_charts.py, docs/web.md "Spend and flow"): buckets over the
window, finished signals by final status, claim-wait percentiles, a retried signal, spend per agent against the
budget, and the window's bounds."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from blackboard.application.commands import ClaimSignal, CompleteSignal, FailSignal, PostSignal, SetBudget
from blackboard.application.flow_charts import (
    MAX_POINTS,
    MAX_WINDOW,
    FlowChartQueries,
    flow_series,
    percentile,
    window_bounds,
)
from blackboard.application.ports.reading import Timed, usage_of
from blackboard.application.usage import UsageTotal
from blackboard.domain.blackboard import BlackboardAggregate
from blackboard.domain.errors import InvalidInput
from blackboard.domain.limits import Budget, Spent
from blackboard.domain.retries import AttemptRules, RetryPolicy
from blackboard.domain.signals import SignalPayload, SignalResult, SignalStatus, SignalType, SignalUsage
from tests.fakes import T0, Board, agent

END = T0 + timedelta(hours=2)
COMPLETED, FAILED, CANCELLED = SignalStatus.COMPLETED, SignalStatus.FAILED, SignalStatus.CANCELLED


def ago(minutes: float) -> datetime:
    return END - timedelta(minutes=minutes)


def ended(status: SignalStatus, posted: float, claimed: float | None, done: float, **more) -> Timed:
    """A signal posted, claimed and ended so many minutes before END."""
    return Timed(status, ago(posted), ago(claimed) if claimed is not None else None, ago(done), **more)


def cost(usd: float | None, tokens: int = 100) -> UsageTotal:
    return UsageTotal(1, tokens, 0, usd or 0.0, int(usd is None))


def test_buckets_of_a_short_window_are_minutes_ending_at_its_end():
    charts = flow_series([], {}, Budget(), END, 15)

    assert charts.bucket_seconds == 60
    assert (charts.start, charts.end) == (ago(15), END)
    assert charts.buckets == tuple(ago(15 - i) for i in range(15))
    assert all(counts == (0,) * 15 for counts in charts.finished.values())
    assert charts.wait_p50 == (None,) * 15 and charts.claimed == (0,) * 15


@pytest.mark.parametrize(
    ("window", "bucket_minutes"), [(60, 1), (120, 1), (360, 3), (1440, 12), (MAX_WINDOW, 84)]
)
def test_a_long_window_widens_its_buckets_so_there_are_at_most_max_points(window, bucket_minutes):
    charts = flow_series([ended(COMPLETED, window, window, window - 0.5)], {}, Budget(), END, window)

    assert len(charts.buckets) == min(window, MAX_POINTS)
    assert charts.bucket_seconds == bucket_minutes * 60
    assert charts.finished["COMPLETED"][0] == 1 and sum(charts.finished["COMPLETED"]) == 1


def test_signals_that_ended_are_counted_in_their_bucket_by_final_status():
    rows = [
        ended(COMPLETED, 10, 9.5, 9.2),  # minute 0..1 after the start of a 10-minute window
        ended(COMPLETED, 10, 9.5, 9.1),
        ended(FAILED, 10, 9, 8.5),
        ended(CANCELLED, 5, None, 2.5),  # never claimed: no claim wait, still finished
        ended(COMPLETED, 30, 29, 28),  # before the window: left out
        Timed(SignalStatus.CLAIMED, ago(4), ago(3), None),  # still running: claimed, not finished
        Timed(SignalStatus.POSTED, ago(2), None, None),
    ]

    charts = flow_series(rows, {}, Budget(), END, 10)

    assert charts.finished["COMPLETED"] == (2, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    assert charts.finished["FAILED"] == (0, 1, 0, 0, 0, 0, 0, 0, 0, 0)
    assert charts.finished["CANCELLED"][7] == 1 and sum(charts.finished["CANCELLED"]) == 1
    assert set(charts.finished) == {"COMPLETED", "FAILED", "EXPIRED", "UNCLAIMED", "CANCELLED"}
    assert charts.claimed == (2, 1, 0, 0, 0, 0, 0, 1, 0, 0)


def test_claim_wait_p50_and_p90_of_the_signals_claimed_in_each_bucket():
    waits = [1, 2, 3, 4, 5, 6, 7, 8, 9, 30]  # seconds, all claimed in the window's last minute
    rows = [Timed(COMPLETED, ago(0.5) - timedelta(seconds=w), ago(0.5), ago(0.2)) for w in waits]
    skewed = Timed(COMPLETED, ago(5) + timedelta(seconds=4), ago(5), ago(4.5))  # clocks disagree: 0, not -4

    charts = flow_series([*rows, skewed], {}, Budget(), END, 10)

    assert charts.wait_p50[-1] == pytest.approx(5) and charts.wait_p90[-1] == pytest.approx(9)
    assert charts.wait_p50[5] == 0 and charts.claimed[5] == 1
    assert charts.wait_p50[0] is None  # none claimed there


def test_percentile_is_the_nearest_rank():
    assert percentile([3, 1, 2], 50) == 2
    assert percentile([1, 2, 3, 4], 50) == 2
    assert percentile([1, 2, 3, 4], 90) == 4
    assert percentile([7], 90) == 7
    assert percentile(list(range(1, 101)), 90) == 90


def test_a_retried_signal_counts_once_when_it_ends_its_wait_from_its_post_to_its_current_claim():
    board = BlackboardAggregate("bb-1")
    board.attempts = AttemptRules(
        policy_of=lambda _a: RetryPolicy(max_attempts=3, initial=0, jitter=0), draw=lambda: 0
    )
    payload = SignalPayload(ps_id="PS-1", entry_id="e-1", topic="flaky")
    researcher = agent("ps-researcher", RESEARCH=0.9)
    board.post_signal(
        signal_id="sig-0000000a", signal_type=SignalType.RESEARCH, payload=payload, posted_by="p", at=ago(9)
    )
    board.claim_signal("sig-0000000a", researcher, ago(8))
    first = SignalUsage(runner="anthropic", input_tokens=1000, output_tokens=0, cost_usd=0.01)
    board.fail_signal("sig-0000000a", "ps-researcher", "offline", ago(7.5), usage=first)
    assert board.signal("sig-0000000a").status is SignalStatus.POSTED  # retried, its first attempt failed
    board.claim_signal("sig-0000000a", researcher, ago(3))
    second = SignalUsage(runner="anthropic", input_tokens=500, output_tokens=0, cost_usd=0.02)
    board.complete_signal("sig-0000000a", "ps-researcher", SignalResult(), ago(2.5), usage=second)
    signals = list(board.signals.values())

    charts = flow_series([Timed.of(s) for s in signals], usage_of(signals)["bb-1"], Budget(usd=1.0), END, 10)

    assert sum(charts.finished["COMPLETED"]) == 1 and sum(charts.finished["FAILED"]) == 0
    assert charts.finished["COMPLETED"][7] == 1
    assert charts.claimed[7] == 1 and sum(charts.claimed) == 1  # its current claim only
    assert charts.wait_p50[7] == pytest.approx(6 * 60)  # from its post to its current claim
    (spend,) = charts.agents
    assert spend.total_usd == pytest.approx(0.03) and spend.total_tokens == 1500  # both attempts' runs
    assert spend.usd[6] == 0 and spend.usd[7] == pytest.approx(0.03)  # spent when it ended


def test_spend_per_agent_is_cumulative_ends_at_its_total_and_is_read_against_the_budget():
    totals = {"writer": cost(0.05, 500) + cost(0.01, 100) + cost(0.02, 200), "local": cost(None, 300)}
    rows = [
        ended(COMPLETED, 9, 8, 7.5, agent="writer", usage=cost(0.01, 100)),  # bucket 2
        ended(COMPLETED, 6, 5, 4.5, agent="writer", usage=cost(0.02, 200)),  # bucket 5
        ended(FAILED, 4, 3, 2.5, agent="local", usage=cost(None, 300)),  # unpriced: tokens, no dollars
    ]  # the writer's 0.05 was spent before the window

    charts = flow_series(rows, totals, Budget(usd=0.1, tokens=5000), END, 10)

    writer = next(a for a in charts.agents if a.agent == "writer")
    assert writer.usd == pytest.approx((0.05, 0.05, 0.06, 0.06, 0.06, 0.08, 0.08, 0.08, 0.08, 0.08))
    assert writer.tokens == (500, 500, 600, 600, 600, 800, 800, 800, 800, 800)
    assert (writer.window_usd, writer.window_tokens) == (pytest.approx(0.03), 300)
    assert writer.total_usd == pytest.approx(0.08) and writer.usd[-1] == pytest.approx(writer.total_usd)
    local = next(a for a in charts.agents if a.agent == "local")
    assert local.total_usd is None and local.unpriced_runs == 1  # unknown, never $0
    assert local.tokens[-1] == 300 and local.tokens[6] == 0
    assert [a.agent for a in charts.agents] == ["local", "writer"]
    assert charts.spent == Spent(pytest.approx(0.08), 1100) and charts.budget == Budget(0.1, 5000)


def test_a_run_with_no_time_in_the_rows_counts_before_the_window():
    """A solve controller's runs are in the read model's totals, not in the signals' rows."""
    charts = flow_series([], {"controller": cost(0.5, 50)}, Budget(), END, 10)

    (controller,) = charts.agents
    assert controller.usd == (0.5,) * 10 and controller.window_usd == 0


@pytest.mark.parametrize("window", [0, -5, MAX_WINDOW + 1, "abc", "1.5", "", True])
def test_a_window_outside_its_bounds_is_refused_naming_it_and_its_bounds(window):
    with pytest.raises(InvalidInput) as refused:
        window_bounds(window)

    assert refused.value.field == "window"
    assert f"from 1 to {MAX_WINDOW}" in str(refused.value)


def test_a_window_given_as_text_is_read_as_minutes():
    assert window_bounds("15") == 15 and window_bounds(MAX_WINDOW) == MAX_WINDOW


def test_the_board_now_and_replayed_at_its_last_position_give_the_same_charts_and_earlier_fewer():
    """FlowChartQueries over the service's own stack (in memory): now from the read model, at a position from
    the log replayed; the budget at a position is the one set by then."""
    board = Board(agent("ps-researcher", RESEARCH=0.9))
    service, clock = board.service, board.clock

    def work(entry: str, outcome: str, cost_usd: float | None = None) -> None:
        posted = service.post_signal(
            PostSignal(signal_type="RESEARCH", ps_id="ps-q", entry_id=entry, topic=entry)
        )
        service.claim_signal(ClaimSignal(signal_id=posted.signal_id, agent_id="ps-researcher"))
        clock.advance(30)
        usage = SignalUsage(runner="anthropic", input_tokens=100, cost_usd=cost_usd) if cost_usd else None
        if outcome == "complete":
            service.complete_signal(
                CompleteSignal(signal_id=posted.signal_id, agent_id="ps-researcher", usage=usage)
            )
        else:
            service.fail_signal(FailSignal(signal_id=posted.signal_id, agent_id="ps-researcher", error="no"))

    work("e-1", "complete", 0.01)
    work("e-2", "fail")
    early = board.store.last_position()
    service.set_budget(SetBudget(board="ps-q", usd=1.0))
    work("e-3", "complete", 0.02)
    charts = FlowChartQueries(board.store, board.read_model, board.queries, clock)

    now = charts.charts("ps-q", 15)
    replayed = charts.charts("ps-q", 15, at=board.store.last_position())
    then = charts.charts("ps-q", 15, at=early)

    assert sum(now.finished["COMPLETED"]) == 2 and sum(now.finished["FAILED"]) == 1
    assert (now.agents, now.spent, now.budget) == (replayed.agents, replayed.spent, replayed.budget)
    assert sum(replayed.finished["COMPLETED"]) == 2 and sum(replayed.claimed) == sum(now.claimed) == 3
    assert now.agents[0].total_usd == pytest.approx(0.03) and now.budget == Budget(usd=1.0)
    assert sum(then.finished["COMPLETED"]) == 1 and then.agents[0].total_usd == pytest.approx(0.01)
    assert then.budget == Budget()  # set after that position
    assert then.end < replayed.end  # each ends at its position's time
