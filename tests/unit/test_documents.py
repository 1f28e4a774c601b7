"""The AgentSignal document every interface returns (infrastructure/documents/), held for a signal in every
status to the schema the package ships (generated from the models) and to the contract's, which it refines."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

import jsonschema
import pytest

from blackboard.domain.blackboard import BlackboardAggregate
from blackboard.domain.signals import (
    AgentSignal,
    SignalPayload,
    SignalResult,
    SignalStatus,
    SignalType,
)
from blackboard.infrastructure.documents import jsonable, signal
from tests.fakes import T0, agent
from tests.paths import CONTRACT_SIGNAL_SCHEMA, SIGNAL_SCHEMA


def document_of(item: AgentSignal) -> dict[str, Any]:
    return jsonable(signal(item))


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


@pytest.fixture(scope="module", params=[SIGNAL_SCHEMA, CONTRACT_SIGNAL_SCHEMA], ids=["shipped", "contract"])
def validator(request) -> jsonschema.Validator:
    schema = json.loads(request.param.read_text(encoding="utf-8"))
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
    elif status is SignalStatus.CANCELLED:
        board.claim_signal("sig-0000000a", analyst, at(2))
        board.cancel_signal("sig-0000000a", "alice", "not needed", at(3))
    signal = board.signal("sig-0000000a")
    assert signal.status is status
    return signal


@pytest.mark.parametrize("status", list(SignalStatus))
def test_the_document_of_a_signal_in_every_status_validates_against_the_schemas(status, validator):
    document = document_of(signal_in(status))

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

    document = document_of(signal)

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

    document = document_of(board.signal("sig-0000000c"))

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
def test_the_schema_check_itself_catches_a_broken_document(field, value, validator):
    document = {**document_of(signal_in(SignalStatus.POSTED)), field: value}

    with pytest.raises(jsonschema.ValidationError):
        validator.validate(document)
