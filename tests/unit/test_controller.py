"""`next` (application/ranking.py): what should happen next, in the order the workers claim, runnable
agents only, with the dependencies released and their results."""

from __future__ import annotations

from pathlib import Path

import pytest

from blackboard.application.claiming import plan_claims
from blackboard.application.commands import ClaimSignal, CompleteSignal, GetOpenSignals, PostSignal
from blackboard.application.ranking import Controller
from blackboard.domain.capabilities import AUTO
from blackboard.infrastructure.agents import FrontmatterAgentRegistry
from tests.fakes import Board

FILES = {  # name: (capabilities, description, runnable)
    "ps-researcher": ("{RESEARCH: 0.95, ANALYSIS: 0.85}", "Finds prior work.", True),
    "ps-analyst": ("{ANALYSIS: 0.9, RESEARCH: 0.82}", "Analyses data and findings.", True),
    "ps-oracle": ("{RESEARCH: 1.0, DECISION: 1.0}", "Knows everything but has no handler.", False),
    "debugger": ("{DEBUG: 0.5}", "Debugging specialist for errors, crashes and stack traces.", True),
}


@pytest.fixture(autouse=True)
def no_claude_code(monkeypatch, tmp_path) -> None:
    """An agent with no handler stays unrunnable whatever the machine has: no Claude Code for its runner."""
    monkeypatch.setenv("BLACKBOARD_CLAUDE", str(tmp_path / "no-claude"))


def write_agents(folder: Path) -> Path:
    for name, (capabilities, description, runnable) in FILES.items():
        handler = "command: echo done\n" if runnable else ""
        (folder / f"{name}.md").write_text(
            f"---\nname: {name}\ndescription: {description}\ncapabilities: {capabilities}\n{handler}---\nYou work.\n",
            encoding="utf-8",
        )
    return folder


@pytest.fixture
def board(tmp_path) -> Board:
    made = Board()
    made.registry = FrontmatterAgentRegistry(write_agents(tmp_path))
    made.rewire()
    return made


def post(
    board: Board,
    kind: str,
    topic: str = "a topic",
    *targets: str,
    after: tuple[str, ...] = (),
    prompt: str = "",
):
    return board.service.post_signal(
        PostSignal(
            signal_type=kind,
            ps_id="ps-1",
            entry_id="e-1",
            topic=topic,
            prompt=prompt,
            target_capabilities=targets,
            after=after,
        )
    )


def plan(board: Board, limit: int | None = None):
    return Controller(board.queries, board.registry, 0.8).next(None, limit, board.clock.now())


def test_each_open_signal_goes_to_its_best_runnable_agent_in_the_workers_claim_order(board):
    research = post(board, "RESEARCH")  # oldest; ps-researcher at 0.95
    analysis = post(board, "ANALYSIS")  # ps-analyst at 0.9
    both = post(board, "ANALYSIS", "a topic", "ANALYSIS", "RESEARCH")  # ps-researcher at 0.95, newer

    made = plan(board)

    assert [(m.signal.signal_id, m.best.agent_id, m.best.score) for m in made.moves] == [
        (research.signal_id, "ps-researcher", 0.95),
        (both.signal_id, "ps-researcher", 0.95),
        (analysis.signal_id, "ps-analyst", 0.9),
    ]
    # the worker of ps-researcher claims its signals in the same order: one ranking function for both
    researcher = board.registry.get("ps-researcher")
    found = board.queries.open_candidates(GetOpenSignals(capabilities=("RESEARCH", "ANALYSIS"), limit=10))
    worker = plan_claims(found, researcher, board.registry.get_all, 0.8, 0.0, 4, board.queries.scorer.profile)
    mine = [m.signal.signal_id for m in made.moves if m.best.agent_id == "ps-researcher"]
    assert list(worker.claims[0].signal_ids[: len(mine)]) == mine


def test_an_agent_without_a_handler_is_never_proposed(board):
    decision = post(board, "DECISION")  # only ps-oracle declares it, and it cannot run
    research = post(board, "RESEARCH")  # ps-oracle fits best (1.0) but the runnable ps-researcher is proposed

    made = plan(board)

    assert [(m.signal.signal_id, m.best.agent_id) for m in made.moves] == [
        (research.signal_id, "ps-researcher")
    ]
    assert [(m.signal.signal_id, m.best, m.best_score) for m in made.waiting] == [
        (decision.signal_id, None, 0.0)
    ]


def test_a_signal_waiting_for_its_dependencies_is_not_proposed_until_they_complete_with_their_results(board):
    upstream = post(board, "RESEARCH")
    downstream = post(board, "ANALYSIS", after=(upstream.signal_id,))
    assert [m.signal.signal_id for m in plan(board).moves] == [upstream.signal_id]

    board.service.claim_signal(ClaimSignal(signal_id=upstream.signal_id, agent_id="ps-researcher"))
    board.service.complete_signal(
        CompleteSignal(
            signal_id=upstream.signal_id, agent_id="ps-researcher", knowledge_items=("three papers",)
        )
    )
    made = plan(board)

    assert [m.signal.signal_id for m in made.moves] == [downstream.signal_id]
    (released,) = made.moves[0].upstreams
    assert (released.signal_id, released.status.value, released.has_result) == (
        upstream.signal_id,
        "COMPLETED",
        True,
    )
    assert made.moves[0].age.total_seconds() > 0


def test_a_signal_targeting_auto_goes_to_the_agent_whose_text_fits(board):
    crash = post(
        board,
        "INVESTIGATION",
        "The login page crashes",
        AUTO,
        prompt="It crashes with a stack trace and errors since the last release.",
    )
    (move,) = plan(board).moves
    assert (move.signal.signal_id, move.best.agent_id) == (crash.signal_id, "debugger")
    assert move.best.score > 0.8


def test_limit_keeps_the_first_proposals(board):
    first, _ = post(board, "RESEARCH"), post(board, "RESEARCH")
    assert [m.signal.signal_id for m in plan(board, limit=1).moves] == [first.signal_id]


def test_a_concurrency_key_with_no_room_holds_a_signal_in_the_words_of_its_claim_until_its_holder_ends(
    board, tmp_path
):
    (tmp_path / "ps-keyed.md").write_text(
        "---\nname: ps-keyed\ncapabilities: {REVIEW: 0.9}\ncommand: echo done\n"
        "concurrency: {key: review-api, max: 1}\n---\nOne review at a time.\n",
        encoding="utf-8",
    )
    first, second = post(board, "REVIEW"), post(board, "REVIEW")
    board.service.claim_signal(ClaimSignal(signal_id=first.signal_id, agent_id="ps-keyed"))

    def keyed_plan():
        claimed = board.read_model.claimed_under  # as a claim counts them
        return Controller(board.queries, board.registry, 0.8, claimed=claimed).next(
            None, None, board.clock.now()
        )

    held = keyed_plan()

    words = "waits: 1 signal(s) already claimed under concurrency key review-api (max 1)"
    assert [m.signal.signal_id for m in held.keyed] == [second.signal_id] and held.moves == ()
    assert held.held() == {second.signal_id: words} and held.waits
    assert board.read_model.claimed_under() == {"review-api": 1}
    board.service.complete_signal(CompleteSignal(signal_id=first.signal_id, agent_id="ps-keyed"))
    freed = keyed_plan()
    assert [m.signal.signal_id for m in freed.moves] == [second.signal_id] and freed.held() == {}
