"""The worker's batch claim, on in-memory adapters: a race lost to another agent is said in one line."""

from __future__ import annotations

import logging
from pathlib import Path

from dependency_injector import providers

from blackboard.application.commands import ClaimSignal, GetOpenSignals, PostSignal
from blackboard.infrastructure.agents.parsing import AgentDefinition
from blackboard.infrastructure.composition.settings import BlackboardSettings, worker_options
from blackboard.infrastructure.worker import Worker
from tests.fakes import Board, FixedAgentDefinitions, agent

RESEARCHER = agent("ps-researcher", RESEARCH=0.95)
ANALYST = agent("ps-analyst", RESEARCH=0.85, ANALYSIS=0.9)


class TakenOnceSeen:
    """The analyst's queries, while the researcher claims every signal right after the analyst saw it."""

    def __init__(self, board: Board) -> None:
        self._board = board

    def look(self, query: GetOpenSignals):
        found = self._board.queries.look(query)
        for seen in found.candidates:
            self._board.service.claim_signal(ClaimSignal(signal_id=seen.signal_id, agent_id="ps-researcher"))
        return found

    def __getattr__(self, name: str):
        return getattr(self._board.queries, name)


def analysts_board() -> Board:
    board = Board()
    board.registry = FixedAgentDefinitions(
        [
            AgentDefinition(profile=RESEARCHER, path=Path("ps-researcher.md")),
            AgentDefinition(profile=ANALYST, path=Path("ps-analyst.md"), command="echo done"),
        ]
    )
    board.rewire()
    return board


def analyst_worker(board: Board) -> Worker:
    options = worker_options(BlackboardSettings(head_start=0.1), "ps-analyst", once=True, blackboard_id=None)
    return board.container.worker(options=options)


def test_a_signal_the_better_fit_takes_between_the_look_and_the_claim_is_logged_as_gone_to_it(caplog):
    board = analysts_board()
    research = board.service.post_signal(
        PostSignal(signal_type="RESEARCH", ps_id="ps-1", entry_id="e-1", topic="t")
    )
    board.container.queries.override(providers.Object(TakenOnceSeen(board)))
    worker = analyst_worker(board)

    with caplog.at_level(logging.INFO, logger="blackboard.worker"):
        worker.run()

    assert f"{research.signal_id} went to ps-researcher" in caplog.messages and worker.handled == 0
    assert board.read_model.get(research.signal_id).claimed_by == "ps-researcher"


def test_the_analyst_takes_what_only_it_fits_without_a_lost_race_line(caplog):
    board = analysts_board()
    analysis = board.service.post_signal(
        PostSignal(signal_type="ANALYSIS", ps_id="ps-1", entry_id="e-1", topic="t")
    )
    worker = analyst_worker(board)

    with caplog.at_level(logging.INFO, logger="blackboard.worker"):
        worker.run()

    assert worker.handled == 1 and not any("went to" in m for m in caplog.messages)
    assert board.read_model.get(analysis.signal_id).claimed_by == "ps-analyst"
