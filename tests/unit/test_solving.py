"""The controller's decisions read strictly (domain/solve/run.py): a JSON object alone, fenced or inside its text;
anything else is a BadDecision saying what is wrong."""

from __future__ import annotations

from dataclasses import replace

import pytest

from blackboard.domain.signals import SignalType
from blackboard.domain.solve.run import BadDecision, PostStep, Solved, read_decision

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
    from blackboard.domain.solve.run import fold
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


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("x" * 2_000_000, "must be at most 1048576 characters, got 2000000"),
        ("[" * 5000 + "]" * 5000, "nested too deep to read"),
        ('{"a":' * 5000 + "1" + "}" * 5000, "nested too deep to read"),
        ("42", "must be one JSON object, got '42'"),
        ('"a string"', "must be one JSON object"),
        ('{"action": "solved"} ' * 40_000, "must be one JSON object"),
        ("```{" * 250_000, "must be one JSON object"),  # 1 MB of open fences
        ("\x00 go \ud800", "got '\\x00 go \\ud800'"),  # said back escaped: storable, printable
    ],
    ids=["2 MB", "deep array", "deep object", "scalar", "string", "many objects", "fences", "NUL"],
)
def test_an_answer_of_any_size_depth_or_content_is_a_bad_decision_never_the_reader_s_own_error(text, said):
    import time

    began = time.monotonic()
    with pytest.raises(BadDecision) as refused:
        read_decision(text)

    assert said in refused.value.rule
    assert len(refused.value.rule) < 400
    assert time.monotonic() - began < 10  # linear: the fences took minutes with a backtracking pattern


def test_a_running_run_is_orphaned_once_its_process_stopped_beating_ended_or_never_said_it_drives_it():
    from datetime import timedelta

    from blackboard.domain.presence import SolveProcess
    from blackboard.domain.solve.run import SolveRun, with_process
    from tests.fakes import T0

    running = SolveRun("solve-0000000a", "bb-1", state="running")
    beating = SolveProcess(
        "bb-1", "solve-0000000a", "h1", "host", 7, T0, last_beat=T0, beat_every=timedelta(seconds=2)
    )

    assert with_process(running, beating, T0 + timedelta(seconds=5)).state == "running"
    stale = with_process(running, beating, T0 + timedelta(seconds=6))  # three beats missed
    assert stale.state == "orphaned" and "its process (host:7) stopped beating at" in (stale.reason or "")
    ended = with_process(running, replace(beating, stopped_at=T0), T0)
    assert ended.state == "orphaned" and "ended at" in (ended.reason or "")
    assert with_process(running, None, T0).state == "orphaned"  # started before runs kept a row
    assert "solve --resume solve-0000000a --blackboard bb-1" in (stale.reason or "")
    solved = replace(running, state="solved")
    assert with_process(solved, None, T0) == solved
