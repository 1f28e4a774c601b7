"""The worker's batch claim, on in-memory adapters: a race lost to another agent is said in one line."""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from blackboard.application.commands import ClaimSignal, PostSignal
from blackboard.infrastructure.agents.parsing import AgentDefinition
from blackboard.infrastructure.notifier import PollingNotifier
from blackboard.infrastructure.worker import Worker, WorkerOptions
from tests.fakes import Board, agent

RESEARCHER = agent("ps-researcher", RESEARCH=0.95)
ANALYST = agent("ps-analyst", RESEARCH=0.85, ANALYSIS=0.9)


def analyst_worker(board: Board) -> Worker:
    definition = AgentDefinition(profile=ANALYST, path=Path("ps-analyst.md"), command="true")
    return Worker(
        WorkerOptions(agent="ps-analyst", head_start=0.1), board.service, board.queries,
        lambda name: definition if name == "ps-analyst" else None, lambda: [RESEARCHER, ANALYST],
        board.store, PollingNotifier(board.store), board.settings.claim_threshold,
    )


def test_a_signal_the_better_fit_takes_during_the_head_start_is_logged_as_gone_to_it(caplog):
    board = Board(RESEARCHER, ANALYST)
    research = board.service.post_signal(PostSignal(signal_type="RESEARCH", ps_id="ps-1", entry_id="e-1", topic="t"))
    worker = analyst_worker(board)
    waited = []

    def researcher_claims_meanwhile(_agent, signal):  # what happens while the analyst yields
        waited.append(signal.signal_id)
        board.service.claim_signal(ClaimSignal(signal_id=signal.signal_id, agent_id="ps-researcher"))
        return 0.0

    worker._yield_to_better_fits = researcher_claims_meanwhile
    with caplog.at_level(logging.INFO, logger="blackboard.worker"), ThreadPoolExecutor(1) as pool:
        claimed = worker._claim_what_fits(pool)

    assert waited == [research.signal_id] and claimed is False
    assert f"{research.signal_id} went to ps-researcher" in caplog.messages
    assert board.read_model.get(research.signal_id).claimed_by == "ps-researcher"


def test_the_analyst_takes_what_only_it_fits_without_a_lost_race_line(caplog):
    board = Board(RESEARCHER, ANALYST)
    analysis = board.service.post_signal(PostSignal(signal_type="ANALYSIS", ps_id="ps-1", entry_id="e-1", topic="t"))
    worker = analyst_worker(board)
    worker._work = lambda *_: None  # claim only; the handler is not what this test is about

    with caplog.at_level(logging.INFO, logger="blackboard.worker"), ThreadPoolExecutor(1) as pool:
        claimed = worker._claim_what_fits(pool)

    assert claimed is True and not any("went to" in m for m in caplog.messages)
    assert board.read_model.get(analysis.signal_id).claimed_by == "ps-analyst"
