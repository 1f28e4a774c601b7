"""The nudge's rule in the domain (docs/agents.md, "Nudges"): only a CLAIMED signal whose claim a runner runs
takes one; a refusal records nothing; an import admits a nudge as the command would have recorded it."""

from __future__ import annotations

import pytest

from blackboard.domain.admission import NudgeOutOfTurn, admit
from blackboard.domain.blackboard import BlackboardAggregate
from blackboard.domain.errors import InvalidInput, InvalidTransition, TakesNoInput
from blackboard.domain.events import AgentSignalNudged
from blackboard.domain.signals import SignalResult, SignalStatus
from tests.contract.stories import RESEARCHER, post
from tests.fakes import T0

SIG = "sig-00000001"


def claimed(runner: str | None) -> BlackboardAggregate:
    board = BlackboardAggregate("bb-1")
    post(board, 1)
    board.claim_signal(SIG, RESEARCHER, T0, token="tok-1", runner=runner)
    return board


def test_a_nudge_to_a_runner_s_run_is_recorded_for_its_attempt_and_counted_on_the_signal():
    board = claimed("anthropic")

    nudged = board.nudge_signal(SIG, "alice", "look at the tests first", T0)

    (event,) = [e for e in board.pending_events if isinstance(e, AgentSignalNudged)]
    assert (event.nudged_by, event.text, event.attempt) == ("alice", "look at the tests first", 1)
    assert (nudged.status, nudged.claim_runner, nudged.nudges) == (SignalStatus.CLAIMED, "anthropic", 1)


def test_a_handler_s_run_or_a_claim_by_hand_takes_no_nudge_and_nothing_is_recorded():
    board = claimed(None)
    before = len(board.pending_events)

    with pytest.raises(TakesNoInput, match="whose run cannot take a nudge: it is no runner's run"):
        board.nudge_signal(SIG, "alice", "hello", T0)
    assert len(board.pending_events) == before


@pytest.mark.parametrize("ended", [False, True], ids=["posted", "completed"])
def test_a_signal_that_is_not_claimed_takes_no_nudge(ended):
    board = BlackboardAggregate("bb-1")
    post(board, 1)
    if ended:
        board.claim_signal(SIG, RESEARCHER, T0, token="tok-1", runner="openai")
        board.complete_signal(SIG, "ps-researcher", SignalResult(), T0, token="tok-1")
    status = "COMPLETED" if ended else "POSTED"

    with pytest.raises(InvalidTransition, match=f"{SIG} is {status}; only CLAIMED signals can be nudged"):
        board.nudge_signal(SIG, "alice", "hello", T0)


def test_a_nudge_names_who_and_says_something():
    board = claimed("claude-code")

    with pytest.raises(InvalidInput, match="^text: "):
        board.nudge_signal(SIG, "alice", "   ", T0)
    with pytest.raises(InvalidInput, match="^by: "):
        board.nudge_signal(SIG, "", "hello", T0)


def test_an_import_admits_a_nudge_of_the_attempt_under_way_and_refuses_one_of_another():
    source = claimed("claude-code")
    source.nudge_signal(SIG, "alice", "hello", T0)
    events = source.pending_events
    replayed = BlackboardAggregate("bb-1")
    for event in events:
        admit(replayed, event)
    assert replayed.signal(SIG).nudges == 1

    other = claimed("claude-code")
    later = events[-1].model_copy(update={"attempt": 2, "version": other.version + 1})
    with pytest.raises(NudgeOutOfTurn, match="nudge is for attempt 2, but attempt 1 runs"):
        admit(BlackboardAggregate.replay("bb-1", other.pending_events), later)
