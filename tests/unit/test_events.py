"""Blackboard events as stored: envelope plus data, loaded back through the upcaster chain."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from pydantic import ValidationError

from blackboard.domain import events as domain_events
from blackboard.domain.events import (
    ENVELOPE,
    EVENT_TYPES,
    AgentSignalApproved,
    AgentSignalAttemptFailed,
    AgentSignalCancelled,
    AgentSignalClaimed,
    AgentSignalCompleted,
    AgentSignalExpired,
    AgentSignalFailed,
    AgentSignalNudged,
    AgentSignalPosted,
    AgentSignalRejected,
    AgentSignalRunCharged,
    AgentSignalStalled,
    AgentSignalUnclaimed,
    BlackboardEvent,
    BoardBudgetSet,
    CheckpointEvent,
    CheckpointRef,
    CheckpointSaved,
    CheckpointsPruned,
    CheckpointThreadDeleted,
    CheckpointWrite,
    CheckpointWritesSaved,
    EntryCandidateKept,
    EntryConflictResolved,
    EntryWritten,
    SolveDecisionFailed,
    SolveResumed,
    SolveSolved,
    SolveStarted,
    SolveStepEnded,
    SolveStepPosted,
    SolveStopped,
    SolveSynthesized,
    TypedBlob,
    UnknownEventType,
    event_class,
    load_event,
    upcast,
)
from blackboard.domain.reservations import Reservation
from blackboard.domain.signals import SignalPayload, SignalResult, SignalType, SignalUsage
from tests.fakes import T0

ENV = {"blackboard_id": "bb-1", "occurred_at": T0 + timedelta(seconds=5), "signal_id": "sig-0000000a"}

SAMPLES: list[BlackboardEvent] = [
    AgentSignalPosted(
        **ENV,
        version=1,
        signal_type=SignalType.SYNTHESIS,
        payload=SignalPayload(
            ps_id="PS-1", entry_id="e-3", topic="t", prompt="p", context={"n": 1, "l": ["x"]}
        ),
        target_capabilities=("SYNTHESIS", "ANALYSIS"),
        posted_by="ps-o",
        after=("sig-00000001",),
        dedupe_key="k",
    ),
    AgentSignalPosted(
        **ENV,
        version=1,
        signal_type=SignalType.RESEARCH,
        payload=SignalPayload(ps_id="PS-1", entry_id="e-3", topic="t"),
        target_capabilities=("RESEARCH",),
        posted_by="ps-o",
    ),
    AgentSignalClaimed(**ENV, version=2, claimed_by="ps-researcher", score=0.85),
    AgentSignalClaimed(**ENV, version=2, claimed_by="ps-researcher", score=None),
    AgentSignalCompleted(
        **ENV,
        version=3,
        completed_by="ps-researcher",
        result=SignalResult(artifact_path="out.md", knowledge_items=("KI-1", "KI-2")),
    ),
    AgentSignalFailed(**ENV, version=3, failed_by="ps-researcher", error="source offline"),
    AgentSignalExpired(**ENV, version=3, reason="not claimed within 30s"),
    AgentSignalUnclaimed(**ENV, version=2, reason="no capable agent"),
    AgentSignalCancelled(**ENV, version=3, cancelled_by="alice", reason="not needed", cause="sig-00000002"),
    AgentSignalRunCharged(
        **ENV,
        version=4,
        charged_to="ps-researcher",
        attempt=1,
        usage=SignalUsage(runner="anthropic", input_tokens=5000, output_tokens=50, cost_usd=0.0105),
        reason="its outcome was refused: sig-00000001 is CANCELLED",
    ),
    AgentSignalStalled(**ENV, version=3, actor="ps-researcher", seconds_idle=300.0, attempt=1),
    AgentSignalAttemptFailed(
        **ENV,
        version=3,
        attempt=1,
        max_attempts=3,
        claimed_by="ps-researcher",
        reason="exit 1: source offline",
        retry_at=T0 + timedelta(seconds=7),
        usage=SignalUsage(runner="anthropic", input_tokens=5, output_tokens=2),
    ),
    AgentSignalAttemptFailed(
        **ENV,
        version=3,
        attempt=2,
        max_attempts=2,
        claimed_by="ps-researcher",
        reason="did not finish within the claim timeout",
        retry_at=T0 + timedelta(seconds=9),
        expired=True,
    ),
    AgentSignalApproved(**ENV, version=2, approved_by="alice", note="looks right"),
    AgentSignalRejected(**ENV, version=2, rejected_by="bob", reason="the plan is wrong"),
    AgentSignalClaimed(**ENV, version=2, claimed_by="ps-researcher", score=0.9, concurrency_key="openai"),
    AgentSignalClaimed(**ENV, version=2, claimed_by="ps-writer", score=0.8, token="t-9", runner="anthropic"),
    AgentSignalNudged(
        **ENV, version=3, nudged_by="alice", text="start with the tests\nthen the docs", attempt=2
    ),
]
BUDGET = BoardBudgetSet(
    blackboard_id="bb-1",
    occurred_at=T0,
    version=4,
    usd=2.5,
    tokens=None,
    set_by="alice",
    reason="a day's worth",
)  # a board's event: no signal
ENTRY = {"blackboard_id": "bb-1", "occurred_at": T0, "key": "plan/outline", "signal_id": "sig-0000000a"}
SAMPLES += [
    EntryWritten(
        **ENTRY,
        version=1,
        value={"steps": [1, 2.5, None, True]},
        author="ps-a",
        entry_type="plan",
        confidence=0.7,
        depends_on=("findings",),
        topics=("plans",),
        meta={"n": 1},
    ),
    EntryCandidateKept(**ENTRY, version=2, value="other", author="ps-b", holder="ps-a"),
    EntryConflictResolved(
        **ENTRY, version=3, value="merged", author="ps-lead", picked=None, rationale="both"
    ),
]
RUN = {  # a run's events name the signal a step posted (None for the others; this test's samples all do)
    "blackboard_id": "bb-1",
    "occurred_at": T0,
    "run_id": "solve-0000000a",
    "actor": "controller",
    "signal_id": "sig-0000000a",
}
SAMPLES += [
    SolveStarted(
        **{**RUN, "actor": "solve"},
        version=1,
        problem="a long problem\nover lines",
        problem_key="solve/solve-0000000a/problem",
        controller="controller",
        runner="anthropic",
        model="sonnet",
        max_iterations=3,
        specialists=("finder", "writer"),
        without_workers=("writer",),
        started_workers=("writer",),
        host="host-1",
        pid=4141,
        controller_ref="/work/controllers/first.md",
        step_timeout=300.0,
        start_workers=True,
        workdir="/work",
        permission_mode="acceptEdits",
        allowed_tools=("Bash(git *)",),
        synthesis=False,
    ),
    SolveStepPosted(
        **RUN,
        version=2,
        iteration=1,
        agent="finder",
        capability="RESEARCH",
        topic="find it",
        reason="it finds",
        usage=SignalUsage(runner="anthropic", input_tokens=10, output_tokens=2, cost_usd=0.001),
    ),
    SolveStepEnded(**RUN, version=3, iteration=1, status="COMPLETED"),
    SolveDecisionFailed(**RUN, version=4, iteration=2, error="decision: must be one JSON object", output="x"),
    SolveSolved(
        **RUN, version=5, iteration=3, answer="42", answer_key="solve/solve-0000000a/answer", reason="r"
    ),
    SolveSynthesized(
        **RUN,
        version=5,
        answer="about 42",
        answer_key="solve/solve-0000000a/answer",
        reason="the findings point there",
        usage=SignalUsage(runner="command", duration_ms=12),
    ),
    SolveStopped(**RUN, version=5, iterations=3, reason="--max-iterations 3 reached without an answer"),
    SolveResumed(
        **{**RUN, "actor": "ops"},
        version=6,
        host="host-2",
        pid=4242,
        max_iterations=5,
        step_timeout=60.0,
        start_workers=True,
        started_workers=("writer",),
    ),
]
# Lease renewal is being added alongside these tests; cover it once it is registered.
if (renewed := EVENT_TYPES.get("AgentSignalClaimRenewed")) is not None:
    SAMPLES.append(renewed(**ENV, version=3, claimed_by="ps-researcher"))
SAMPLES.append(BUDGET)
THREAD = {"blackboard_id": "bb-1", "occurred_at": T0, "thread_id": "thread-1"}  # a LangGraph thread's events
BLOB = TypedBlob(type="msgpack", base64="gqFhAQ==")
SAMPLES += [
    CheckpointSaved(
        **THREAD,
        version=1,
        checkpoint_ns="",
        checkpoint_id="1f0c-01",
        checkpoint=BLOB,
        checkpoint_metadata={"source": "input", "step": -1, "parents": {}},
    ),
    CheckpointWritesSaved(
        **THREAD,
        version=2,
        checkpoint_id="1f0c-01",
        task_id="task-1",
        task_path="~__pregel_pull, speak",
        writes=(
            CheckpointWrite(idx=0, channel="said", value=BLOB),
            CheckpointWrite(idx=-1, channel="__error__", value=BLOB),
        ),
    ),
    CheckpointsPruned(
        **THREAD,
        version=3,
        checkpoints=(CheckpointRef(checkpoint_id="1f0c-01"),),
        reason="prune keep_latest 1",
    ),
    CheckpointThreadDeleted(**THREAD, version=4, reason="delete_thread"),
]


def stored(event: BlackboardEvent) -> tuple[str, int, dict, dict]:
    """What a store keeps: type, schema version, and envelope and data as JSON text round-trips them."""
    envelope = json.loads(json.dumps(event.model_dump(mode="json", include=set(ENVELOPE))))
    data = json.loads(json.dumps(event.data()))
    return event.event_type, type(event).schema_version, envelope, data


def test_every_event_type_is_registered_under_its_class_name():
    for cls in (
        AgentSignalPosted,
        AgentSignalClaimed,
        AgentSignalCompleted,
        AgentSignalFailed,
        AgentSignalExpired,
        AgentSignalUnclaimed,
        AgentSignalCancelled,
        AgentSignalApproved,
        AgentSignalRejected,
    ):
        assert EVENT_TYPES[cls.__name__] is cls
    assert all(name == cls.__name__ for name, cls in EVENT_TYPES.items())


def test_every_registered_event_type_has_a_round_trip_sample_here():
    assert {type(e) for e in SAMPLES} == set(EVENT_TYPES.values())


@pytest.mark.parametrize("event", SAMPLES, ids=lambda e: e.event_type)
def test_every_event_round_trips_through_its_stored_data(event):
    event_type, schema_version, envelope, data = stored(event)

    loaded = load_event(event_type, schema_version, envelope, data)

    assert type(loaded) is type(event)
    assert loaded == event


@pytest.mark.parametrize("event", SAMPLES, ids=lambda e: e.event_type)
def test_the_data_of_an_event_leaves_out_the_envelope_and_keeps_the_signal_id(event):
    data = event.data()

    assert not set(data) & ENVELOPE
    assert data["signal_id"] == (
        None if event is BUDGET or isinstance(event, CheckpointEvent) else "sig-0000000a"
    )
    assert set(data) | ENVELOPE == set(type(event).model_fields)


def test_each_event_gets_its_own_event_id():
    first = AgentSignalExpired(**ENV, version=1, reason="r")
    second = AgentSignalExpired(**ENV, version=1, reason="r")

    assert first.event_id != second.event_id


def test_an_event_version_below_one_is_refused():
    with pytest.raises(ValidationError) as refused:
        AgentSignalExpired(**ENV, version=0, reason="r")

    assert refused.value.errors()[0]["loc"] == ("version",)


def test_stored_data_with_a_field_the_event_does_not_know_is_refused():
    event_type, schema_version, envelope, data = stored(SAMPLES[5])

    with pytest.raises(ValidationError):
        load_event(event_type, schema_version, envelope, {**data, "stack": "..."})


# ==================================================================== upcasting
def failed_v0_data() -> dict:
    """The old shape of AgentSignalFailed (schema version 0), which called the error `message`."""
    return {"signal_id": "sig-0000000a", "failed_by": "ps-researcher", "message": "source offline"}


def rename_message_to_error(data: dict) -> dict:
    data["error"] = data.pop("message")
    return data


def test_old_shaped_data_loads_through_the_given_upcaster():
    envelope = {
        "event_id": "ev-1",
        "blackboard_id": "bb-1",
        "version": 3,
        "occurred_at": "2026-01-04T09:00:05+00:00",
    }

    loaded = load_event(
        "AgentSignalFailed",
        0,
        envelope,
        failed_v0_data(),
        upcasters={**domain_events.UPCASTERS, ("AgentSignalFailed", 0): rename_message_to_error},
    )

    assert loaded == AgentSignalFailed(
        event_id="ev-1",
        blackboard_id="bb-1",
        version=3,
        occurred_at=T0 + timedelta(seconds=5),
        signal_id="sig-0000000a",
        failed_by="ps-researcher",
        error="source offline",
    )


def test_upcasting_works_on_a_copy_and_leaves_the_stored_data_alone():
    data = failed_v0_data()

    upcasted = upcast(
        "AgentSignalFailed",
        0,
        data,
        upcasters={**domain_events.UPCASTERS, ("AgentSignalFailed", 0): rename_message_to_error},
    )

    assert upcasted == {
        "signal_id": "sig-0000000a",
        "failed_by": "ps-researcher",
        "error": "source offline",
        "usage": None,
    }
    assert data == failed_v0_data()


def test_data_at_the_current_schema_version_is_not_upcast():
    def must_not_run(data: dict) -> dict:
        raise AssertionError("upcaster ran on current data")

    data = {"signal_id": "sig-0000000a", "failed_by": "ps-a", "error": "e", "usage": None}

    assert upcast("AgentSignalFailed", 3, data, upcasters={("AgentSignalFailed", 3): must_not_run}) == data


def test_upcasters_run_one_schema_version_at_a_time_in_order(monkeypatch):
    monkeypatch.setattr(AgentSignalFailed, "schema_version", 3)
    steps = {
        ("AgentSignalFailed", 0): lambda d: {**d, "trail": ["0->1"]},
        ("AgentSignalFailed", 1): lambda d: {**d, "trail": [*d.get("trail", []), "1->2"]},
        ("AgentSignalFailed", 2): lambda d: {**d, "trail": [*d.get("trail", []), "2->3"]},
    }

    assert upcast("AgentSignalFailed", 0, {}, upcasters=steps)["trail"] == ["0->1", "1->2", "2->3"]
    assert upcast("AgentSignalFailed", 2, {}, upcasters=steps)["trail"] == ["2->3"]


def test_the_default_upcasters_are_the_module_registry(monkeypatch):
    monkeypatch.setitem(domain_events.UPCASTERS, ("AgentSignalFailed", 0), rename_message_to_error)

    assert upcast("AgentSignalFailed", 0, failed_v0_data())["error"] == "source offline"


def test_an_old_schema_version_without_an_upcaster_raises_lookup_error():
    with pytest.raises(LookupError, match="AgentSignalFailed from schema version 0"):
        upcast(
            "AgentSignalFailed",
            0,
            failed_v0_data(),
            upcasters={("AgentSignalExpired", 0): rename_message_to_error},
        )


def test_loading_old_data_with_no_upcaster_registered_raises_lookup_error():
    envelope = {"blackboard_id": "bb-1", "version": 3, "occurred_at": "2026-01-04T09:00:05+00:00"}

    with pytest.raises(LookupError) as refused:
        load_event("AgentSignalFailed", 0, envelope, failed_v0_data())

    assert not isinstance(refused.value, UnknownEventType)


@pytest.mark.parametrize(
    "call",
    [
        lambda: event_class("AgentSignalRetracted"),
        lambda: upcast("AgentSignalRetracted", 1, {}),
        lambda: load_event(
            "AgentSignalRetracted",
            1,
            {"blackboard_id": "bb-1", "version": 1, "occurred_at": "2026-01-04T09:00:00+00:00"},
            {},
        ),
    ],
    ids=["event_class", "upcast", "load_event"],
)
def test_an_unknown_event_type_raises_unknown_event_type(call):
    with pytest.raises(UnknownEventType, match="AgentSignalRetracted"):
        call()


def test_unknown_event_type_is_a_lookup_error():
    assert issubclass(UnknownEventType, LookupError)


# ==================================================================== runners' usage (schema versions 2 and 4)
def test_a_completion_or_failure_stored_before_usage_loads_with_no_usage():
    envelope = {
        "event_id": "ev-1",
        "blackboard_id": "bb-1",
        "version": 3,
        "occurred_at": "2026-01-04T09:00:05+00:00",
    }
    completed_v1 = {"signal_id": "sig-0000000a", "completed_by": "ps-a", "result": {"knowledge_items": ["x"]}}
    failed_v1 = {"signal_id": "sig-0000000a", "failed_by": "ps-a", "error": "source offline"}

    completed = load_event("AgentSignalCompleted", 1, envelope, completed_v1)
    failed = load_event("AgentSignalFailed", 1, envelope, failed_v1)

    assert completed.usage is None and completed.result.knowledge_items == ("x",)
    assert failed.usage is None and failed.error == "source offline"


def test_a_post_stored_before_budgets_loads_with_no_budget():
    envelope = {
        "event_id": "ev-1",
        "blackboard_id": "bb-1",
        "version": 1,
        "occurred_at": "2026-01-04T09:00:00+00:00",
    }
    posted_v3 = {
        "signal_id": "sig-0000000a",
        "signal_type": "RESEARCH",
        "payload": {"ps_id": "ps-1", "entry_id": "e-1", "topic": "t"},
        "target_capabilities": ["RESEARCH"],
        "posted_by": "ps-skill",
        "after": [],
        "dedupe_key": None,
        "retry_of": None,
        "read_keys": [],
        "write_keys": [],
    }

    assert load_event("AgentSignalPosted", 3, envelope, posted_v3).budget_usd is None


def test_a_post_stored_at_schema_6_loads_with_no_max_attempts_of_its_own():
    envelope = {
        "event_id": "ev-1",
        "blackboard_id": "bb-1",
        "version": 1,
        "occurred_at": "2026-11-20T09:00:00+00:00",
    }
    posted_v6 = {
        "signal_id": "sig-0000000a",
        "signal_type": "RESEARCH",
        "payload": {"ps_id": "ps-1", "entry_id": "e-1", "topic": "t"},
        "target_capabilities": ["RESEARCH"],
        "posted_by": "ps-skill",
        "after": [],
        "dedupe_key": None,
        "retry_of": None,
        "read_keys": [],
        "write_keys": [],
        "budget_usd": None,
        "priority": 1,
        "not_before": "2026-11-20T10:00:00+00:00",
    }

    loaded = load_event("AgentSignalPosted", 6, envelope, posted_v6)

    assert loaded.max_attempts is None
    assert (loaded.priority, loaded.not_before.hour) == (1, 10)
    assert AgentSignalPosted.schema_version == 11


def test_a_run_s_usage_round_trips_through_the_stored_data():
    usage = SignalUsage(
        runner="claude-code",
        model="claude-opus-5-5",
        input_tokens=10,
        output_tokens=3,
        cost_usd=0.01,
        turns=2,
        duration_ms=1500,
        session_id="s-1",
        transcript_path="/t.jsonl",
        resumed_from="s-0",
    )
    event = AgentSignalCompleted(**ENV, version=2, completed_by="ps-a", result=SignalResult(), usage=usage)
    event_type, schema_version, envelope, data = stored(event)

    assert schema_version == 3
    assert data["usage"]["resumed_from"] == "s-0"
    assert load_event(event_type, schema_version, envelope, data) == event
    # a run that started afresh is stored as every run was before resumes: no `resumed_from` at all
    afresh = event.model_copy(update={"usage": usage.model_copy(update={"resumed_from": None})})
    assert "resumed_from" not in stored(afresh)[3]["usage"]


@pytest.mark.parametrize(
    ("event_type", "schema_version", "fields"),
    [
        ("AgentSignalCompleted", 2, {"completed_by": "ps-a", "result": {"knowledge_items": ["k"]}}),
        ("AgentSignalFailed", 2, {"failed_by": "ps-a", "error": "e"}),
        (
            "AgentSignalAttemptFailed",
            1,
            {
                "attempt": 1,
                "max_attempts": 2,
                "claimed_by": "ps-a",
                "reason": "e",
                "retry_at": "2026-01-04T09:00:05+00:00",
            },
        ),
        ("AgentSignalRunCharged", 1, {"charged_to": "ps-a", "attempt": 1, "reason": "cancelled"}),
    ],
)
def test_a_run_s_usage_stored_before_resumes_loads_as_a_run_that_started_afresh(
    event_type, schema_version, fields
):
    """Schema 3 of a completion and a failure, 2 of a failed attempt and a charge: usage.resumed_from."""
    envelope = {
        "event_id": "ev-1",
        "blackboard_id": "bb-1",
        "version": 3,
        "occurred_at": "2026-01-04T09:00:01+00:00",
    }
    old = {"runner": "claude-code", "input_tokens": 10, "cost_usd": 0.01, "session_id": "s-1"}
    data = {"signal_id": "sig-0000000a", **fields, "usage": old}

    loaded = load_event(event_type, schema_version, envelope, data)

    assert type(loaded).schema_version == schema_version + 1
    assert loaded.usage.session_id == "s-1" and loaded.usage.resumed_from is None


# ==================================================================== limits (docs/control.md, "Limits")
def test_a_claim_stored_before_concurrency_keys_loads_under_no_key():
    envelope = {
        "event_id": "ev-1",
        "blackboard_id": "bb-1",
        "version": 2,
        "occurred_at": "2026-01-04T09:00:01+00:00",
    }
    claimed_v2 = {"signal_id": "sig-0000000a", "claimed_by": "ps-a", "score": 0.9, "token": "t-1"}

    claimed = load_event("AgentSignalClaimed", 2, envelope, claimed_v2)

    assert claimed.concurrency_key is None and claimed.token == "t-1"
    assert claimed.reserved is None


def test_a_claim_stored_before_reservations_loads_reserving_nothing():
    envelope = {
        "event_id": "ev-1",
        "blackboard_id": "bb-1",
        "version": 2,
        "occurred_at": "2026-01-04T09:00:01+00:00",
    }
    claimed_v3 = {
        "signal_id": "sig-0000000a",
        "claimed_by": "ps-a",
        "score": 0.9,
        "token": "t-1",
        "concurrency_key": "openai",
    }

    claimed = load_event("AgentSignalClaimed", 3, envelope, claimed_v3)

    assert (claimed.concurrency_key, claimed.reserved) == ("openai", None)
    reserved = AgentSignalClaimed(**envelope, **claimed_v3, reserved=Reservation(tokens=100_005))
    event_type, schema_version, stored_envelope, data = stored(reserved)
    assert data["reserved"] == {"usd": None, "tokens": 100_005}
    assert load_event(event_type, schema_version, stored_envelope, data) == reserved


def test_a_claim_stored_before_nudges_loads_with_no_runner_and_so_takes_no_nudge():
    """AgentSignalClaimed schema 4 (before `runner`): its run cannot be nudged (docs/agents.md, "Nudges")."""
    envelope = {
        "event_id": "ev-1",
        "blackboard_id": "bb-1",
        "version": 2,
        "occurred_at": "2026-01-04T09:00:01+00:00",
    }
    claimed_v4 = {
        "signal_id": "sig-0000000a",
        "claimed_by": "ps-a",
        "score": 0.9,
        "token": "t-1",
        "concurrency_key": None,
        "reserved": {"usd": 0.5, "tokens": None},
    }

    claimed = load_event("AgentSignalClaimed", 4, envelope, claimed_v4)

    assert AgentSignalClaimed.schema_version == 5
    assert (claimed.runner, claimed.reserved) == (None, Reservation(usd=0.5))
    with_runner = AgentSignalClaimed(**envelope, **{**claimed_v4, "reserved": None}, runner="claude-code")
    event_type, schema_version, stored_envelope, data = stored(with_runner)
    assert (schema_version, data["runner"]) == (5, "claude-code")
    assert load_event(event_type, schema_version, stored_envelope, data) == with_runner
