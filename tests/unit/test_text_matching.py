"""Scores from text (`post --capability auto`): the BM25F scale over name, description and body, the index per
registry load, and the service and claim policy scoring a signal targeting `auto` by its topic and prompt
(docs/matching.md)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from blackboard.application.claiming import plan_claims
from blackboard.application.commands import ClaimSignal, GetSignalById, PostSignal
from blackboard.domain.capabilities import AUTO, targets_auto
from blackboard.domain.errors import BelowThreshold
from blackboard.domain.signals import Candidate, SignalStatus
from blackboard.infrastructure.agents import FrontmatterAgentRegistry
from blackboard.infrastructure.agents.text_index import AgentText, TextIndex, scaled
from tests.fakes import T0, Board, agent

AGENTS = {
    "code-reviewer": (
        "REVIEW",
        "Expert code review specialist. Reviews code for quality, security and maintainability.",
    ),
    "debugger": ("DEBUG", "Debugging specialist for errors, test failures, crashes and stack traces."),
    "sql-pro": ("SQL", "Writes complex SQL queries, optimizes execution plans and designs database schemas."),
    "technical-writer": ("DOCS", "Writes clear documentation, READMEs, user guides and tutorials."),
}


def write_agents(folder: Path, agents: dict[str, tuple[str, str]] = AGENTS) -> Path:
    for name, (capability, description) in agents.items():
        (folder / f"{name}.md").write_text(
            f"---\nname: {name}\ndescription: {description}\ncapabilities: {{{capability}: 0.5}}\n"
            f"command: echo done\n---\nYou are {name}.\n",
            encoding="utf-8",
        )
    return folder


@pytest.fixture
def registry(tmp_path) -> FrontmatterAgentRegistry:
    return FrontmatterAgentRegistry(write_agents(tmp_path))


def test_the_scale_is_zero_without_evidence_and_0_8_at_the_most_one_word_can_weigh():
    assert scaled(0.0, 2.0) == 0.0
    assert scaled(2.0, 2.0) == pytest.approx(0.8)
    assert scaled(1.0, 2.0) < 0.8 < scaled(3.0, 2.0) < scaled(6.0, 2.0) < 1.0


def test_a_request_about_nothing_the_agents_do_scores_nobody(registry):
    assert registry.text_scores("banana bread with walnuts") == {}
    assert registry.text_scores("") == {}


def test_the_agent_whose_text_fits_ranks_first_and_scores_stay_in_0_1(registry):
    scores = registry.text_scores("The login page crashes with a stack trace after the last release")
    assert max(scores, key=scores.__getitem__) == "debugger"
    assert scores["debugger"] > 0.8
    assert all(0 < s < 1 for s in scores.values())


def test_scores_are_deterministic_for_the_same_folder(tmp_path):
    text = "optimize the slow SQL query on the orders table"
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    first, again = (FrontmatterAgentRegistry(write_agents(tmp_path / d)) for d in "ab")
    assert first.text_scores(text) == again.text_scores(text) == first.text_scores(text)


def test_the_index_follows_the_folder(tmp_path, registry):
    request = "restart the kubernetes pods and roll back the helm chart"
    assert "kube-admin" not in registry.text_scores(request)
    write_agents(
        tmp_path, {"kube-admin": ("OPS", "Runs Kubernetes clusters, pods, deployments and helm charts.")}
    )
    assert "kube-admin" not in registry.text_scores(request)  # the folder as last read
    assert "kube-admin" in [a.agent_id for a in registry.get_all()]  # read again
    assert registry.text_scores(request)["kube-admin"] > 0.8


def test_the_index_is_built_once_per_load(registry, monkeypatch):
    registry.text_scores("a review")
    built = []
    monkeypatch.setattr(TextIndex, "__init__", lambda *a: built.append(a))
    registry.text_scores("another review, of the docs")
    assert built == []


def test_one_word_in_common_never_reaches_the_threshold_however_rare_or_repeated():
    index = TextIndex(
        [
            AgentText("kube", "kubernetes pods"),
            # only b has "postgres": in its name, nine times in its description and all through its body
            AgentText(
                "postgres-b", "postgres " * 9 + "vacuum", ("POSTGRES",), "postgres " * 40 + "vacuum replicas"
            ),
            AgentText("react", "react hooks"),
        ]
    )
    assert 0.6 < index.scores("postgres")["postgres-b"] < 0.8  # still one word
    assert index.scores("postgres vacuum replicas")["postgres-b"] > 0.8


def test_a_word_only_the_body_has_finds_its_agent():
    index = TextIndex(
        [
            AgentText(
                "terraform-engineer", "Builds infrastructure as code.", (), "Remote backend, state locking."
            ),
            AgentText(
                "cloud-architect", "Designs cloud infrastructure and code.", (), "Cost, regions, networks."
            ),
        ]
    )
    scores = index.scores("lock the remote backend")
    assert list(scores) == ["terraform-engineer"] and scores["terraform-engineer"] > 0


def test_a_word_weighs_more_in_the_name_than_in_the_description_and_there_more_than_in_the_body():
    index = TextIndex(
        [
            AgentText("helm-pro", "Charts for clusters."),
            AgentText("cluster-admin", "Runs helm charts."),
            AgentText("ops", "Runs clusters.", (), "Sometimes helm."),
        ]
    )
    scores = index.scores("helm")
    assert scores["helm-pro"] > scores["cluster-admin"] > scores["ops"] > 0


# -- the service and the claim policy ---------------------------------------------------------------
def post(board: Board, topic: str, prompt: str = "", targets: tuple[str, ...] = (AUTO,)):
    return board.service.post_signal(
        PostSignal(
            signal_type="RESEARCH",
            ps_id="ps-1",
            entry_id="e-1",
            topic=topic,
            prompt=prompt,
            target_capabilities=targets,
        )
    )


@pytest.fixture
def board(registry) -> Board:
    made = Board()
    made.registry = registry
    made.rewire()
    return made


def test_auto_is_kept_as_the_target_and_the_best_fit_may_claim(board):
    signal = post(board, "Review PR 42", "Please review the changes for code quality before we merge.")
    assert signal.target_capabilities == (AUTO,) and signal.status is SignalStatus.POSTED
    ranking = board.queries.match(GetSignalById(signal_id=signal.signal_id))
    assert ranking[0].agent.agent_id == "code-reviewer" and ranking[0].passes
    with pytest.raises(BelowThreshold):
        board.service.claim_signal(ClaimSignal(signal_id=signal.signal_id, agent_id="sql-pro"))
    claimed = board.service.claim_signal(ClaimSignal(signal_id=signal.signal_id, agent_id="code-reviewer"))
    assert claimed.claimed_by == "code-reviewer"


def test_auto_is_one_keyword_in_any_case_and_the_signal_keeps_it_as_posted(board):
    signal = post(board, "The login page crashes", "with a stack trace and errors", targets=("Auto",))
    assert signal.target_capabilities == ("Auto",)
    ranking = board.queries.match(GetSignalById(signal_id=signal.signal_id))
    assert ranking[0].agent.agent_id == "debugger" and ranking[0].passes


def test_auto_that_nobody_fits_is_unclaimed_when_posted(board):
    signal = post(board, "banana bread", "with walnuts")
    assert signal.status is SignalStatus.UNCLAIMED


def test_auto_and_a_declared_capability_count_at_the_agent_s_best_of_them(board):
    signal = post(board, "banana bread", targets=(AUTO, "SQL"))
    scores = {
        v.agent.agent_id: v.score for v in board.queries.match(GetSignalById(signal_id=signal.signal_id))
    }
    assert scores["sql-pro"] == 0.5 and scores["debugger"] == 0.0


def test_a_worker_s_plan_scores_auto_candidates_by_their_text(board):
    scorer, reviewer = board.queries.scorer, board.registry.get("code-reviewer")
    fits = Candidate("sig-1", "bb", (AUTO,), T0 - timedelta(seconds=5), "review the code for security")
    older = Candidate("sig-2", "bb", (AUTO,), T0 - timedelta(seconds=50), "banana bread")
    assert targets_auto(fits)
    plan = plan_claims([older, fits], reviewer, board.registry.get_all, 0.8, 0.0, 2, scorer.profile)
    assert [c.signal_ids for c in plan.claims] == [("sig-1",)]


def test_a_profile_declaring_auto_gets_its_text_score_instead():
    declared = agent("sly", auto=1.0, REVIEW=0.7)
    scored = declared.with_text_score(0.3)
    assert scored.score(Candidate("sig-1", "bb", (AUTO,), T0)) == 0.3
    assert scored.score(Candidate("sig-1", "bb", (AUTO, "REVIEW"), T0)) == 0.7
    assert scored.score(Candidate("sig-1", "bb", ("REVIEW",), T0)) == 0.7


def test_requests_of_words_no_file_has_leave_the_index_as_it_was():
    index = TextIndex([AgentText("kube", "kubernetes pods"), AgentText("react", "react hooks")])
    kept = len(index._words._stems)
    for n in range(50):
        assert index.scores(f"zorblax{n} quuxification{n} pods")["kube"] > 0
    assert len(index._words._stems) == kept  # a long-running worker's memory does not grow with its requests
