"""Capability scoring: how well an agent fits a signal, and which agents may volunteer for it."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from blackboard.domain.capabilities import (
    DEFAULT_THRESHOLD,
    AgentCapability,
    AgentProfile,
    Volunteer,
    rank,
    volunteers,
)
from blackboard.domain.signals import AgentSignal, Candidate, SignalPayload, SignalType
from tests.fakes import T0, agent


def signal_for(*capabilities: str) -> AgentSignal:
    return AgentSignal(
        signal_id="sig-0000000a",
        blackboard_id="bb-1",
        signal_type=SignalType.RESEARCH,
        payload=SignalPayload(ps_id="PS-1", entry_id="e-1", topic="topic"),
        target_capabilities=capabilities,
        posted_by="ps-orchestrator",
        created_at=T0,
    )


RESEARCH_OR_ANALYSIS = signal_for("RESEARCH", "ANALYSIS")


# ================================================================== AgentCapability
def test_a_capability_matches_a_signal_that_targets_its_type():
    capability = AgentCapability(type="ANALYSIS", score=0.7)

    assert capability.matches(RESEARCH_OR_ANALYSIS)
    assert capability.score_for(RESEARCH_OR_ANALYSIS) == 0.7


def test_a_capability_the_signal_does_not_target_scores_zero():
    capability = AgentCapability(type="REVIEW", score=0.99)

    assert not capability.matches(RESEARCH_OR_ANALYSIS)
    assert capability.score_for(RESEARCH_OR_ANALYSIS) == 0.0


def test_capability_types_match_whole_names_in_any_case():
    assert AgentCapability(type="research", score=0.9).matches(RESEARCH_OR_ANALYSIS)
    assert AgentCapability(type="Analysis", score=0.9).type == "ANALYSIS"
    assert not AgentCapability(type="RESEARCHER", score=0.9).matches(RESEARCH_OR_ANALYSIS)


def test_a_signal_s_targets_match_in_any_case_too():
    profile = AgentProfile(agent_id="a", capabilities=(AgentCapability(type="CODE-REVIEWER", score=1.0),))
    lower = Candidate("sig-00000001", "b", ("code-reviewer",), T0)

    assert profile.score(lower) == 1.0 and profile.score_for_capability("Code-Reviewer") == 1.0


@pytest.mark.parametrize("score", [0.0, 0.5, 1.0])
def test_a_capability_score_from_zero_to_one_inclusive_is_accepted(score):
    assert AgentCapability(type="RESEARCH", score=score).score == score


@pytest.mark.parametrize("score", [-0.01, 1.01, 2.0])
def test_a_capability_score_outside_zero_to_one_is_refused(score):
    with pytest.raises(ValidationError) as refused:
        AgentCapability(type="RESEARCH", score=score)

    assert refused.value.errors()[0]["loc"] == ("score",)


def test_a_capability_without_a_type_is_refused():
    with pytest.raises(ValidationError) as refused:
        AgentCapability(type="", score=0.5)

    assert refused.value.errors()[0]["loc"] == ("type",)


def test_a_capability_is_immutable():
    capability = AgentCapability(type="RESEARCH", score=0.5)

    with pytest.raises(ValidationError):
        capability.score = 0.9  # type: ignore[misc]


# ===================================================================== AgentProfile
def test_an_agent_scores_its_best_capability_among_those_the_signal_targets():
    profile = agent("ps-analyst", RESEARCH=0.6, ANALYSIS=0.85, REVIEW=0.99)

    assert profile.score(RESEARCH_OR_ANALYSIS) == 0.85


def test_an_agent_with_no_targeted_capability_scores_zero():
    profile = agent("ps-reviewer", REVIEW=0.99, DECISION=0.9)

    assert profile.score(RESEARCH_OR_ANALYSIS) == 0.0


def test_score_for_capability_is_the_best_declared_score_or_zero():
    profile = AgentProfile(
        agent_id="ps-x",
        capabilities=(
            AgentCapability(type="RESEARCH", score=0.4),
            AgentCapability(type="RESEARCH", score=0.7),
        ),
    )

    assert profile.score_for_capability("RESEARCH") == 0.7
    assert profile.score_for_capability("REVIEW") == 0.0


def test_an_agent_without_its_own_threshold_uses_the_default():
    assert agent("ps-a", RESEARCH=0.5).threshold_or(0.65) == 0.65


def test_an_agents_own_threshold_wins_over_the_default_even_when_it_is_zero():
    assert agent("ps-a", threshold=0.3, RESEARCH=0.5).threshold_or(0.65) == 0.3
    assert agent("ps-b", threshold=0.0, RESEARCH=0.5).threshold_or(0.65) == 0.0


@pytest.mark.parametrize(("score", "may"), [(0.81, True), (0.8, False), (0.79, False)])
def test_an_agent_may_claim_only_with_a_score_strictly_above_the_default_threshold(score, may):
    assert DEFAULT_THRESHOLD == 0.8
    assert agent("ps-a", RESEARCH=score).may_claim(RESEARCH_OR_ANALYSIS) is may


def test_may_claim_uses_the_agents_own_threshold_and_otherwise_the_given_default():
    assert agent("ps-a", threshold=0.5, RESEARCH=0.6).may_claim(RESEARCH_OR_ANALYSIS, default_threshold=0.9)
    assert not agent("ps-a", threshold=0.6, RESEARCH=0.6).may_claim(
        RESEARCH_OR_ANALYSIS, default_threshold=0.1
    )
    assert agent("ps-a", RESEARCH=0.6).may_claim(RESEARCH_OR_ANALYSIS, default_threshold=0.59)
    assert not agent("ps-a", RESEARCH=0.6).may_claim(RESEARCH_OR_ANALYSIS, default_threshold=0.6)


def test_an_agent_with_no_targeted_capability_may_not_claim_even_with_threshold_zero():
    assert not agent("ps-a", threshold=0.0, REVIEW=1.0).may_claim(RESEARCH_OR_ANALYSIS)


@pytest.mark.parametrize("threshold", [-0.1, 1.5])
def test_an_agent_threshold_outside_zero_to_one_is_refused(threshold):
    with pytest.raises(ValidationError) as refused:
        agent("ps-a", threshold=threshold, RESEARCH=0.5)

    assert refused.value.errors()[0]["loc"] == ("threshold",)


def test_an_agent_without_capabilities_is_refused():
    with pytest.raises(ValidationError) as refused:
        AgentProfile(agent_id="ps-a", capabilities=())

    assert refused.value.errors()[0]["loc"] == ("capabilities",)


def test_an_agent_without_a_name_is_refused():
    with pytest.raises(ValidationError) as refused:
        agent("", RESEARCH=0.5)

    assert refused.value.errors()[0]["loc"] == ("agent_id",)


def test_a_profile_with_a_capability_score_outside_zero_to_one_is_refused_naming_where():
    with pytest.raises(ValidationError) as refused:
        AgentProfile.model_validate(
            {"agent_id": "ps-a", "capabilities": [{"type": "RESEARCH", "score": 1.2}]}
        )

    assert refused.value.errors()[0]["loc"] == ("capabilities", 0, "score")


# ============================================================ rank and volunteers
def test_rank_orders_agents_by_score_best_first_then_by_name():
    agents = [
        agent("ps-zed", RESEARCH=0.9),
        agent("ps-low", RESEARCH=0.3),
        agent("ps-amy", ANALYSIS=0.9),
        agent("ps-top", RESEARCH=0.95),
        agent("ps-none", REVIEW=1.0),
    ]

    ranked = rank(RESEARCH_OR_ANALYSIS, agents)

    assert [(v.agent.agent_id, v.score) for v in ranked] == [
        ("ps-top", 0.95),
        ("ps-amy", 0.9),
        ("ps-zed", 0.9),
        ("ps-low", 0.3),
        ("ps-none", 0.0),
    ]


def test_rank_gives_each_agent_its_own_threshold_or_the_default():
    ranked = rank(
        RESEARCH_OR_ANALYSIS,
        [agent("ps-a", threshold=0.5, RESEARCH=0.6), agent("ps-b", RESEARCH=0.7)],
        default_threshold=0.65,
    )

    assert [(v.agent.agent_id, v.threshold, v.passes) for v in ranked] == [
        ("ps-b", 0.65, True),
        ("ps-a", 0.5, True),
    ]


def test_a_volunteer_passes_only_strictly_above_its_threshold():
    profile = agent("ps-a", RESEARCH=0.8)

    assert not Volunteer(profile, 0.8, 0.8).passes
    assert Volunteer(profile, 0.8000001, 0.8).passes


def test_volunteers_are_the_ranked_agents_above_their_threshold_best_first():
    agents = [
        agent("ps-edge", RESEARCH=0.8),
        agent("ps-b", RESEARCH=0.85),
        agent("ps-a", RESEARCH=0.85),
        agent("ps-own", threshold=0.2, ANALYSIS=0.3),
        agent("ps-picky", threshold=0.99, RESEARCH=0.95),
        agent("ps-other", REVIEW=1.0),
    ]

    chosen = volunteers(RESEARCH_OR_ANALYSIS, agents)

    assert [v.agent.agent_id for v in chosen] == ["ps-a", "ps-b", "ps-own"]
    assert all(v.passes for v in chosen)


def test_nobody_volunteers_when_no_agent_is_above_its_threshold():
    assert volunteers(RESEARCH_OR_ANALYSIS, [agent("ps-a", RESEARCH=0.5)]) == []
    assert volunteers(RESEARCH_OR_ANALYSIS, []) == []
