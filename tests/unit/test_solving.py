"""The controller's decisions read strictly (domain/solving.py): a JSON object alone, fenced or inside its text;
anything else is a BadDecision saying what is wrong."""

from __future__ import annotations

import pytest

from blackboard.domain.signals import SignalType
from blackboard.domain.solving import BadDecision, PostStep, Solved, read_decision

POST = '{"action": "post", "agent": "finder", "topic": "find it", "reason": "it finds"}'


@pytest.mark.parametrize(
    "text",
    [POST, f"```json\n{POST}\n```", f"Here is my decision:\n{POST}\nThat is all.", f"  {POST}  \n"],
    ids=["alone", "fenced", "inside text", "spaced"],
)
def test_a_decision_is_read_alone_fenced_or_inside_the_text(text):
    decision = read_decision(text)

    assert decision == PostStep(action="post", agent="finder", topic="find it", reason="it finds")
    assert decision.capability is None and decision.signal_type is None


def test_a_solved_decision_carries_its_answer_and_a_signal_type_may_be_named():
    assert read_decision('{"action": "solved", "answer": "42", "reason": "r"}') == Solved(
        action="solved", answer="42", reason="r"
    )
    named = read_decision(POST[:-1] + ', "signal_type": "REVIEW"}')
    assert isinstance(named, PostStep) and named.signal_type is SignalType.REVIEW


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("", "must be one JSON object, got '(nothing)'"),
        ("finder should go", "must be one JSON object"),
        ("[1, 2]", "must be one JSON object"),
        ('{"action": "wait"}', "action"),
        ('{"action": "post", "agent": "finder", "reason": "r"}', "topic: Field required"),
        ('{"action": "post", "agent": "finder", "topic": "' + "t" * 201 + '", "reason": "r"}', "topic"),
        ('{"action": "solved", "answer": "", "reason": "r"}', "answer"),
        ('{"action": "solved", "answer": "a", "reason": "r", "extra": 1}', "extra"),
    ],
)
def test_anything_else_is_a_bad_decision_saying_what_is_wrong(text, said):
    with pytest.raises(BadDecision) as refused:
        read_decision(text)

    assert said in refused.value.rule
    assert str(refused.value).startswith("decision: ")


def test_a_run_folds_from_its_events_and_the_in_memory_read_model_passes_over_them():
    from blackboard.application.ports import Recorded, SignalFilter
    from blackboard.domain.events import SolveStarted, SolveStepEnded, SolveStepPosted, SolveStopped
    from blackboard.domain.solving import fold
    from blackboard.infrastructure.memory.read_model import InMemorySignalReadModel
    from tests.fakes import T0

    run = {"blackboard_id": "bb-1", "occurred_at": T0, "run_id": "solve-0000000a", "actor": "controller"}
    events = [
        SolveStarted(
            **{**run, "actor": "me"},
            version=1,
            problem="p",
            problem_key="solve/solve-0000000a/problem",
            controller="controller",
            runner="anthropic",
            max_iterations=2,
        ),
        SolveStepPosted(
            **run,
            version=2,
            signal_id="sig-0000000b",
            iteration=1,
            agent="a",
            capability="C",
            topic="t",
            reason="r",
        ),
        SolveStepEnded(
            **run, version=3, signal_id="sig-0000000b", iteration=1, status="FAILED", error="boom"
        ),
        SolveStopped(**run, version=4, iterations=1, reason="interrupted"),
    ]

    folded = fold("solve-0000000a", "bb-1", events)

    assert (folded.state, folded.iterations, folded.started_by, folded.version) == ("stopped", 1, "me", 4)
    assert (folded.steps[0].status, folded.steps[0].error, folded.reason) == ("FAILED", "boom", "interrupted")
    assert {e.stream_id for e in events} == {"bb-1\x1esolve-0000000a"}
    view = InMemorySignalReadModel()
    view.apply([Recorded(n, e, T0) for n, e in enumerate(events, 1)])
    assert view.position() == 4 and view.find(SignalFilter()) == []  # no signal, no crash
