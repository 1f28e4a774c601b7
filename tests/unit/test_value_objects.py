"""Value objects of a signal: its id, its payload, its transitions."""

from __future__ import annotations

from datetime import timedelta

import pytest
from pydantic import ValidationError

from blackboard.domain.signals import (
    FINAL_STATUSES,
    AgentSignal,
    SignalId,
    SignalPayload,
    SignalResult,
    SignalStatus,
    SignalType,
)
from tests.fakes import T0


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
def test_the_final_statuses_are_completed_failed_expired_unclaimed_and_cancelled():
    assert (
        {s for s in SignalStatus if s.is_final}
        == FINAL_STATUSES
        == {
            SignalStatus.COMPLETED,
            SignalStatus.FAILED,
            SignalStatus.EXPIRED,
            SignalStatus.UNCLAIMED,
            SignalStatus.CANCELLED,
        }
    )


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
