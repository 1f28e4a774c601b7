"""Value objects of a signal: its id, its payload, and the AgentSignal document every interface returns."""

from __future__ import annotations

import json
from datetime import datetime, timedelta

import jsonschema
import pytest
from pydantic import ValidationError

from blackboard.domain.blackboard import BlackboardAggregate
from blackboard.domain.signals import (
    FINAL_STATUSES,
    AgentSignal,
    SignalId,
    SignalPayload,
    SignalResult,
    SignalStatus,
    SignalType,
)
from tests.fakes import T0, agent
from tests.paths import SIGNAL_SCHEMA

SCHEMA_PATH = SIGNAL_SCHEMA


# ========================================================================= SignalId
@pytest.mark.parametrize("value", ["sig-00000000", "sig-0123abcd", "sig-ffffffff"])
def test_a_signal_id_is_sig_and_eight_lowercase_hex_digits(value):
    signal_id = SignalId(value)

    assert signal_id == value and isinstance(signal_id, str)


@pytest.mark.parametrize(
    "value",
    [
        "sig-0123ABCD",
        "sig-0123abc",
        "sig-0123abcde",
        "sig-0123abcg",
        "SIG-0123abcd",
        "sig_0123abcd",
        "0123abcd",
        "",
        " sig-0123abcd",
        "xsig-0123abcd",
        "sig-0123abcd\n",
    ],
)
def test_a_signal_id_of_any_other_shape_is_refused_naming_the_field(value):
    with pytest.raises(ValueError, match="signal_id"):
        SignalId(value)


def test_a_signal_id_must_be_a_string():
    with pytest.raises(ValueError, match="signal_id"):
        SignalId(12345678)  # type: ignore[arg-type]


# ==================================================================== SignalPayload
def test_a_payload_keeps_its_fields_and_defaults_prompt_and_context_to_empty():
    payload = SignalPayload(ps_id="PS-1", entry_id="e-42", topic="t" * 200)

    assert (payload.ps_id, payload.entry_id, payload.topic) == ("PS-1", "e-42", "t" * 200)
    assert payload.prompt == "" and payload.context == {}


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("entry_id", "e-"),
        ("entry_id", "E-1"),
        ("entry_id", "e-1a"),
        ("entry_id", "entry-1"),
        ("entry_id", "e-1 "),
        ("entry_id", "e-1\n"),
        ("entry_id", ""),
        ("topic", ""),
        ("topic", "t" * 201),
        ("ps_id", ""),
    ],
)
def test_a_payload_with_an_invalid_field_is_refused_naming_that_field(field, value):
    fields = {"ps_id": "PS-1", "entry_id": "e-1", "topic": "a topic", field: value}

    with pytest.raises(ValidationError) as refused:
        SignalPayload(**fields)

    assert [e["loc"] for e in refused.value.errors()] == [(field,)]
    assert field in str(refused.value)


@pytest.mark.parametrize("missing", ["ps_id", "entry_id", "topic"])
def test_a_payload_without_a_required_field_is_refused_naming_that_field(missing):
    fields = {"ps_id": "PS-1", "entry_id": "e-1", "topic": "a topic"}
    del fields[missing]

    with pytest.raises(ValidationError) as refused:
        SignalPayload(**fields)

    assert [(e["loc"], e["type"]) for e in refused.value.errors()] == [((missing,), "missing")]


def test_a_payload_with_an_unknown_field_is_refused():
    with pytest.raises(ValidationError) as refused:
        SignalPayload(ps_id="PS-1", entry_id="e-1", topic="a topic", priority="high")

    assert [e["loc"] for e in refused.value.errors()] == [("priority",)]


def test_a_payload_is_immutable():
    payload = SignalPayload(ps_id="PS-1", entry_id="e-1", topic="a topic")

    with pytest.raises(ValidationError):
        payload.topic = "another"  # type: ignore[misc]


def test_a_result_refuses_unknown_fields_and_defaults_to_nothing():
    assert SignalResult() == SignalResult(artifact_path=None, knowledge_items=(), error=None)
    with pytest.raises(ValidationError):
        SignalResult(output="x")


# ======================================================================= statuses
def test_the_final_statuses_are_completed_failed_expired_and_unclaimed():
    assert (
        {s for s in SignalStatus if s.is_final}
        == FINAL_STATUSES
        == {SignalStatus.COMPLETED, SignalStatus.FAILED, SignalStatus.EXPIRED, SignalStatus.UNCLAIMED}
    )


# ================================================================ AgentSignal.to_document
def _is_datetime_with_offset(value: object) -> bool:
    """RFC 3339 date-time, as the schema's `format` means; jsonschema needs an extra package for it."""
    if not isinstance(value, str):
        return True
    try:
        return datetime.fromisoformat(value).tzinfo is not None
    except ValueError:
        return False


FORMATS = jsonschema.FormatChecker()
FORMATS.checks("date-time")(_is_datetime_with_offset)


@pytest.fixture(scope="module")
def validator() -> jsonschema.Validator:
    schema = json.loads(SCHEMA_PATH.read_text())
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=FORMATS)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def signal_in(status: SignalStatus) -> AgentSignal:
    board = BlackboardAggregate("bb-1")
    board.post_signal(
        signal_id="sig-0000000a",
        signal_type=SignalType.ANALYSIS,
        posted_by="ps-orchestrator",
        at=at(0),
        payload=SignalPayload(
            ps_id="PS-1", entry_id="e-7", topic="Claims", prompt="Look", context={"k": [1]}
        ),
        target_capabilities=["ANALYSIS", "RESEARCH"],
        dedupe_key="key-1",
    )
    board.post_signal(
        signal_id="sig-0000000b",
        signal_type=SignalType.REVIEW,
        posted_by="ps-orchestrator",
        at=at(1),
        payload=SignalPayload(ps_id="PS-1", entry_id="e-8", topic="Review"),
        after=["sig-0000000a"],
    )
    analyst = agent("ps-analyst", ANALYSIS=0.9)
    if status is SignalStatus.CLAIMED:
        board.claim_signal("sig-0000000a", analyst, at(2))
    elif status is SignalStatus.COMPLETED:
        board.claim_signal("sig-0000000a", analyst, at(2))
        result = SignalResult(artifact_path="a.md", knowledge_items=("KI-1",))
        board.complete_signal("sig-0000000a", "ps-analyst", result, at(3))
    elif status is SignalStatus.FAILED:
        board.claim_signal("sig-0000000a", analyst, at(2))
        board.fail_signal("sig-0000000a", "ps-analyst", "boom", at(3))
    elif status is SignalStatus.EXPIRED:
        board.expire_signal("sig-0000000a", "late", at(40))
    elif status is SignalStatus.UNCLAIMED:
        board.mark_unclaimed("sig-0000000a", "nobody able", at(1))
    signal = board.signal("sig-0000000a")
    assert signal.status is status
    return signal


@pytest.mark.parametrize("status", list(SignalStatus))
def test_the_document_of_a_signal_in_every_status_validates_against_the_contract(status, validator):
    document = signal_in(status).to_document()

    validator.validate(document)
    assert json.loads(json.dumps(document)) == document  # plain JSON values only
    assert document["status"] == status.value


COMPLETED_DOCUMENT = {
    "signal_id": "sig-0000000a",
    "blackboard_id": "bb-1",
    "signal_type": "ANALYSIS",
    "payload": {
        "ps_id": "PS-1",
        "entry_id": "e-7",
        "topic": "Claims",
        "prompt": "Look",
        "context": {"k": [1]},
    },
    "target_capabilities": ["ANALYSIS", "RESEARCH"],
    "posted_by": "ps-orchestrator",
    "claimed_by": "ps-analyst",
    "status": "COMPLETED",
    "created_at": "2026-01-04T09:00:00+00:00",
    "claimed_at": "2026-01-04T09:00:02+00:00",
    "completed_at": "2026-01-04T09:00:03+00:00",
    "result": {"artifact_path": "a.md", "knowledge_items": ["KI-1"], "error": None},
    "version": 3,
    "after": [],
    "waiting_for": [],
    "claimable_since": "2026-01-04T09:00:00+00:00",
    "dedupe_key": "key-1",
}


def test_the_document_carries_every_field_of_the_signal():
    signal = signal_in(SignalStatus.COMPLETED)

    document = signal.to_document()

    assert {
        field: document.get(field) for field in COMPLETED_DOCUMENT
    } == COMPLETED_DOCUMENT  # more may follow


def test_the_document_of_a_waiting_signal_names_what_it_waits_for(validator):
    board = BlackboardAggregate("bb-1")
    for sid in ("sig-0000000a", "sig-0000000b"):
        board.post_signal(
            signal_id=sid,
            signal_type=SignalType.RESEARCH,
            posted_by="ps-o",
            at=at(0),
            payload=SignalPayload(ps_id="PS-1", entry_id="e-1", topic="t"),
        )
    board.post_signal(
        signal_id="sig-0000000c",
        signal_type=SignalType.SYNTHESIS,
        posted_by="ps-o",
        at=at(1),
        payload=SignalPayload(ps_id="PS-1", entry_id="e-2", topic="t"),
        after=["sig-0000000b", "sig-0000000a"],
    )

    document = board.signal("sig-0000000c").to_document()

    validator.validate(document)
    assert document["after"] == ["sig-0000000b", "sig-0000000a"]
    assert document["waiting_for"] == ["sig-0000000a", "sig-0000000b"]
    assert (
        document["claimable_since"] is None and document["claimed_at"] is None and document["result"] is None
    )


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("signal_id", "sig-XYZ"),
        ("status", "DONE"),
        ("created_at", "yesterday"),
        ("version", 0),
        ("target_capabilities", []),
    ],
)
def test_the_contract_check_itself_catches_a_broken_document(field, value, validator):
    document = {**signal_in(SignalStatus.POSTED).to_document(), field: value}

    with pytest.raises(jsonschema.ValidationError):
        validator.validate(document)


# ===================================================================== transitions copy
def test_a_transition_returns_a_changed_copy_equal_to_what_dataclasses_replace_makes():
    from dataclasses import replace

    posted = AgentSignal(
        signal_id="sig-0000000a",
        blackboard_id="b",
        signal_type=SignalType.RESEARCH,
        payload=SignalPayload(ps_id="ps-1", entry_id="e-1", topic="t"),
        target_capabilities=("RESEARCH",),
        posted_by="ps",
        created_at=T0,
        after=("sig-0000000b",),
        waiting_for=frozenset({"sig-0000000b"}),
    )
    claimed = posted.claimed("ps-researcher", T0 + timedelta(seconds=1), token="tok")

    assert claimed == replace(
        posted,
        version=2,
        status=SignalStatus.CLAIMED,
        claimed_by="ps-researcher",
        claimed_at=T0 + timedelta(seconds=1),
        claim_token="tok",
    )
    assert posted.status is SignalStatus.POSTED and posted.version == 1  # the original is untouched
    with pytest.raises(AttributeError):
        claimed.status = SignalStatus.POSTED  # still frozen
    with pytest.raises(TypeError, match="no field"):
        posted._changed(stauts=SignalStatus.CLAIMED)
