"""The claim policy on plain values: which signals a worker claims, in what order, and how long it yields."""

from __future__ import annotations

from datetime import timedelta

import pytest

from blackboard.application.claiming import BoardClaim, Fit, best_first, plan_claims, search_for
from blackboard.domain.signals import Candidate
from tests.fakes import T0, agent

ANALYST = agent("ps-analyst", RESEARCH=0.85, ANALYSIS=0.9, REVIEW=0.5)
RESEARCHER = agent("ps-researcher", RESEARCH=0.95)
THRESHOLD = 0.8


def test_the_claim_order_puts_the_most_urgent_first_then_the_best_score_then_the_oldest():
    fits = [
        Fit("sig-00000001", "bb", T0, "a", 0.99, 0.8, priority=2),
        Fit("sig-00000002", "bb", T0 + timedelta(seconds=1), "a", 0.85, 0.8, priority=0),
        Fit("sig-00000003", "bb", T0, "a", 0.9, 0.8, priority=0),
        Fit("sig-00000004", "bb", T0, "a", 0.99, 0.8, priority=4),
        Fit("sig-00000005", "bb", T0, "a", 0.5, 0.8, priority=0),  # below its threshold: never
    ]

    assert [f.signal_id for f in best_first(fits)] == [
        "sig-00000003",
        "sig-00000002",
        "sig-00000001",
        "sig-00000004",
    ]


def candidate(n: int, *capabilities: str, board: str = "bb-1", age: int = 0) -> Candidate:
    """Signal `sig-n` targeting the capabilities, posted `age` seconds before T0."""
    return Candidate(f"sig-{n:08x}", board, capabilities, T0 - timedelta(seconds=age))


def plan(candidates, profile=ANALYST, others=(), head_start=0.1, free=4, threshold=THRESHOLD):
    return plan_claims(candidates, profile, lambda: [profile, *others], threshold, head_start, free)


def claimed_ids(made) -> list[str]:
    return [signal_id for claim in made.claims for signal_id in claim.signal_ids]


def test_the_best_scored_signal_comes_first_then_the_oldest():
    research_old = candidate(1, "RESEARCH", age=30)
    analysis_new, analysis_old = candidate(2, "ANALYSIS"), candidate(3, "ANALYSIS", age=10)

    made = plan([research_old, analysis_new, analysis_old])

    assert claimed_ids(made) == ["sig-00000003", "sig-00000002", "sig-00000001"]


def test_signals_of_the_same_score_and_age_go_by_id():
    made = plan([candidate(9, "ANALYSIS"), candidate(4, "ANALYSIS"), candidate(7, "ANALYSIS")])

    assert claimed_ids(made) == ["sig-00000004", "sig-00000007", "sig-00000009"]


def test_a_signal_targeting_several_capabilities_counts_at_the_agent_s_best_of_them():
    both, research = candidate(1, "RESEARCH", "ANALYSIS"), candidate(2, "RESEARCH", age=60)

    made = plan([research, both])

    assert claimed_ids(made) == ["sig-00000001", "sig-00000002"]  # 0.9 beats 0.85 despite its age


def test_signals_are_claimed_one_command_per_board_in_the_order_of_each_board_s_best_signal():
    made = plan(
        [
            candidate(1, "RESEARCH", board="bb-a", age=5),
            candidate(2, "ANALYSIS", board="bb-b"),
            candidate(3, "ANALYSIS", board="bb-a"),
            candidate(4, "RESEARCH", board="bb-b", age=9),
        ]
    )

    assert made.claims == (
        BoardClaim("bb-b", ("sig-00000002", "sig-00000004")),
        BoardClaim("bb-a", ("sig-00000003", "sig-00000001")),
    )


def test_every_fitting_signal_is_planned_even_beyond_the_free_slots():
    made = plan([candidate(n, "ANALYSIS", age=n) for n in range(1, 6)], free=1)

    assert len(claimed_ids(made)) == 5  # the claim stops at the free slots, past the ones taken meanwhile


def test_a_plan_names_at_most_the_best_few_however_many_were_found():
    made = plan_claims(
        [candidate(n, "ANALYSIS", age=n) for n in range(1, 41)],
        ANALYST,
        lambda: [ANALYST],
        THRESHOLD,
        0.0,
        1,
        at_most=8,
    )

    assert claimed_ids(made) == [f"sig-{n:08x}" for n in range(40, 32, -1)]  # the 8 oldest, oldest first


def test_with_no_free_slot_nothing_is_planned_and_nobody_is_asked_about():
    def nobody_may_ask():
        raise AssertionError("the registry was read")

    made = plan_claims([candidate(1, "ANALYSIS")], ANALYST, nobody_may_ask, THRESHOLD, 0.1, 0)

    assert made.claims == () and made.wait == 0.0


def test_a_signal_the_agent_scores_at_or_below_its_threshold_is_left_out():
    made = plan(
        [candidate(1, "REVIEW"), candidate(2, "RESEARCH"), candidate(3, "TRANSLATION")], threshold=0.85
    )

    assert claimed_ids(made) == []  # REVIEW 0.5 and RESEARCH 0.85 are not above 0.85; TRANSLATION is 0


def test_the_agent_s_own_threshold_wins_over_the_default():
    picky = agent("ps-picky", threshold=0.95, ANALYSIS=0.9)
    eager = agent("ps-eager", threshold=0.4, REVIEW=0.5)

    assert claimed_ids(plan([candidate(1, "ANALYSIS")], profile=picky)) == []
    assert claimed_ids(plan([candidate(2, "REVIEW")], profile=eager)) == ["sig-00000002"]


def test_a_signal_found_under_two_capabilities_is_planned_once():
    both = candidate(1, "RESEARCH", "ANALYSIS")

    assert claimed_ids(plan([both, candidate(2, "ANALYSIS", age=1), both])) == [
        "sig-00000002",
        "sig-00000001",
    ]


def test_the_agent_yields_the_score_gap_to_the_best_other_agent_times_the_head_start():
    reviewer = agent("ps-reviewer", RESEARCH=0.9)

    made = plan([candidate(1, "RESEARCH")], others=[reviewer, RESEARCHER], head_start=0.5)

    assert made.wait == pytest.approx((0.95 - 0.85) * 0.5)


def test_the_yield_counts_only_the_first_signal_of_the_plan():
    made = plan([candidate(1, "RESEARCH", age=60), candidate(2, "ANALYSIS")], others=[RESEARCHER])

    assert made.wait == 0.0  # the ANALYSIS signal comes first and no one fits it better


def test_the_agent_does_not_yield_to_itself_or_to_worse_fits():
    worse = agent("ps-intern", RESEARCH=0.82, ANALYSIS=0.81)
    myself_better = agent("ps-analyst", RESEARCH=1.0)  # its own entry never counts, whatever it says

    made = plan_claims([candidate(1, "RESEARCH")], ANALYST, lambda: [myself_better, worse], THRESHOLD, 0.1, 4)

    assert made.wait == 0.0


def test_with_no_head_start_the_agent_never_yields_and_the_registry_is_not_read():
    def nobody_may_ask():
        raise AssertionError("the registry was read")

    made = plan_claims([candidate(1, "RESEARCH")], ANALYST, nobody_may_ask, THRESHOLD, 0.0, 4)

    assert made.wait == 0.0 and claimed_ids(made) == ["sig-00000001"]


def test_with_nothing_to_claim_there_is_no_yield():
    made = plan([candidate(1, "REVIEW")], others=[agent("ps-reviewer", REVIEW=0.95)])

    assert made.claims == () and made.wait == 0.0


def test_the_search_asks_for_the_capabilities_above_the_threshold_best_first():
    search = search_for(agent("ps-wide", RESEARCH=0.85, REVIEW=0.5, ANALYSIS=0.9, WRITING=0.8), THRESHOLD, 1)

    # WRITING at 0.8 is not above 0.8; signals targeting auto are scored by text, so any agent looks at them
    assert search.capabilities == ("ANALYSIS", "RESEARCH", "auto")


def test_the_search_asks_for_twice_the_free_slots_and_at_least_eight():
    assert search_for(ANALYST, THRESHOLD, 1).limit == 8
    assert search_for(ANALYST, THRESHOLD, 6).limit == 12


def test_the_search_uses_the_agent_s_own_threshold():
    assert search_for(agent("ps-eager", threshold=0.4, REVIEW=0.5), THRESHOLD, 1).capabilities == (
        "REVIEW",
        "auto",
    )
