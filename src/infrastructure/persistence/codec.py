"""Turning events and signals into rows and back."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from json.encoder import encode_basestring_ascii as _quoted
from typing import Any, TypeVar

from pydantic import BaseModel

from blackboard.application.errors import UpgradeNeeded
from blackboard.application.ports import Recorded
from blackboard.domain.events import (
    EVENT_TYPES,
    BlackboardEvent,
    UnreadableEvent,
    board_of_stream,
    load_event,
)
from blackboard.domain.signals import (
    AgentSignal,
    FailedAttempt,
    SignalPayload,
    SignalResult,
    SignalStatus,
    SignalType,
    SignalUsage,
)

M = TypeVar("M", bound=BaseModel)


def event_row(
    event: BlackboardEvent,
    metadata: Mapping[str, Any],
    recorded_at: datetime,
    metadata_json: str | None = None,
) -> dict[str, Any]:
    """`metadata_json`: the metadata already encoded, when many events of one append share it."""
    return {
        "event_id": event.event_id,
        "stream_id": event.stream_id,
        "version": event.version,
        "event_type": event.event_type,
        "schema_version": type(event).schema_version,
        "data": json.dumps(event.data(), separators=(",", ":")),
        "metadata": metadata_json
        if metadata_json is not None
        else json.dumps(dict(metadata), separators=(",", ":")),
        "occurred_at": event.occurred_at,
        "recorded_at": recorded_at,
    }


def event_from_row(row: Any) -> BlackboardEvent:
    cls = EVENT_TYPES.get(row.event_type)
    if cls is not None and row.schema_version == cls.schema_version:
        # the stored JSON is current: pydantic parses it with the envelope in one pass (half the time
        # of json.loads and then validating a dict; every replay, catch-up and `events` goes through here)
        envelope = (
            f'{{"event_id":{json.dumps(row.event_id)},"blackboard_id":{json.dumps(board_of_stream(row.stream_id))},'
            f'"version":{int(row.version)},"occurred_at":"{row.occurred_at.isoformat()}"'
        )
        fields = row.data.strip()[1:]  # the stored object without its opening brace
        return cls.model_validate_json(envelope + ("," + fields if fields.strip() != "}" else "}"))
    envelope = {
        "event_id": row.event_id,
        "blackboard_id": board_of_stream(row.stream_id),  # an entry key's stream is its board's and more
        "version": row.version,
        "occurred_at": row.occurred_at,
    }
    try:
        return load_event(row.event_type, row.schema_version, envelope, json.loads(row.data))
    except UnreadableEvent as exc:  # written by a newer blackboard: stop here, never skip or guess
        raise too_old(exc, f"position {row.position}") from None


def too_old(exc: UnreadableEvent, where: str) -> UpgradeNeeded:
    """The error naming the release to upgrade to, for an event this code cannot read."""
    from blackboard.infrastructure.persistence import schema  # only when an event cannot be read

    release = schema.written_by(schema.opened, exc.event_type, exc.schema_version) if schema.opened else None
    upgrade = (
        f"upgrade blackboard to {release} or later"
        if release
        else "upgrade blackboard to the release that wrote it (the database does not record which)"
    )
    return UpgradeNeeded(f"the event at {where} cannot be read by this blackboard: {exc}; {upgrade}")


def recorded_from_row(row: Any) -> Recorded:
    return Recorded(row.position, event_from_row(row), row.recorded_at, json.loads(row.metadata))


def signal_row(signal: AgentSignal) -> dict[str, Any]:
    return {
        "signal_id": signal.signal_id,
        "blackboard_id": signal.blackboard_id,
        "signal_type": signal.signal_type.value,
        "payload_json": signal.payload.model_dump_json(),
        "target_capabilities": _strings(signal.target_capabilities),
        "posted_by": signal.posted_by,
        "claimed_by": signal.claimed_by,
        "status": signal.status.value,
        "created_at": signal.created_at,
        "claimed_at": signal.claimed_at,
        "completed_at": signal.completed_at,
        "result_json": signal.result.model_dump_json() if signal.result else None,
        "version": signal.version,
        "after_json": _strings(signal.after),
        "waiting_json": _strings(sorted(signal.waiting_for)),
        "waiting": len(signal.waiting_for),
        "claimable_since": signal.claimable_since,
        "dedupe_key": signal.dedupe_key,
        "retry_of": signal.retry_of,
        "claim_token": signal.claim_token,
        "renewed_at": signal.renewed_at,
        "keys_json": json.dumps({"read": list(signal.read_keys), "write": list(signal.write_keys)})
        if signal.read_keys or signal.write_keys
        else None,
        "budget_usd": signal.budget_usd,
        "usage_json": signal.usage.model_dump_json() if signal.usage else None,
        "priority": signal.priority,
        "not_before": signal.not_before,
        "attempt": signal.attempt,
        "max_attempts": signal.max_attempts,
        "attempts_json": attempts_json(signal),
        "gate": signal.gate,
        "gate_timeout_s": signal.gate_timeout_s,
        "gate_expires_at": gate_expires_at(signal),
        "decided_by": signal.decided_by,
        "decision_note": signal.decision_note,
        "concurrency_key": signal.concurrency_key,
    }


def gate_expires_at(signal: AgentSignal) -> datetime | None:
    """When a gate with a timeout of its own expires once open (None: not a gate, no timeout, not open):
    a column, so the sweep's query finds it without date arithmetic in SQL."""
    if not signal.gate or signal.gate_timeout_s is None or signal.claimable_since is None:
        return None
    return signal.claimable_since + timedelta(seconds=signal.gate_timeout_s)


def _strings(values: Iterable[str]) -> str:
    """`json.dumps(list(values))` for strings, to the byte (every fold writes three of them a signal) without
    the encoder's set-up per call."""
    return "[" + ", ".join(map(_quoted, values)) + "]"


def changing_row(signal: AgentSignal) -> dict[str, Any]:
    """The columns a signal's later events change (projection.CHANGING), keyed as the fold's update binds them."""
    return {
        "b_signal_id": signal.signal_id,
        "b_status": signal.status.value,
        "b_claimed_by": signal.claimed_by,
        "b_claimed_at": signal.claimed_at,
        "b_completed_at": signal.completed_at,
        "b_result_json": signal.result.model_dump_json() if signal.result else None,
        "b_version": signal.version,
        "b_waiting_json": _strings(sorted(signal.waiting_for)),
        "b_waiting": len(signal.waiting_for),
        "b_claimable_since": signal.claimable_since,
        "b_claim_token": signal.claim_token,
        "b_renewed_at": signal.renewed_at,
        "b_usage_json": signal.usage.model_dump_json() if signal.usage else None,
        "b_not_before": signal.not_before,
        "b_attempt": signal.attempt,
        "b_attempts_json": attempts_json(signal),
        "b_gate_expires_at": gate_expires_at(signal),
        "b_decided_by": signal.decided_by,
        "b_decision_note": signal.decision_note,
        "b_concurrency_key": signal.concurrency_key,
    }


def attempts_json(signal: AgentSignal) -> str | None:
    """The attempts that failed and were retried, as JSON; NULL for a signal never retried."""
    if not signal.attempts:
        return None
    return json.dumps([a.model_dump(mode="json") for a in signal.attempts])


def signal_from_row(row: Any) -> AgentSignal:
    """The signal a row of ours holds. Its JSON columns were written from validated models
    (`signal_row`), so they are built again without validating (pydantic's validation cost a row about
    33 µs); a document whose fields are not exactly the model's (a row an older release wrote) is
    validated as before."""
    return AgentSignal(
        signal_id=row.signal_id,
        blackboard_id=row.blackboard_id,
        signal_type=SignalType(row.signal_type),
        payload=_trusted(SignalPayload, json.loads(row.payload_json)),
        target_capabilities=tuple(json.loads(row.target_capabilities)),
        posted_by=row.posted_by,
        created_at=row.created_at,
        status=SignalStatus(row.status),
        after=tuple(json.loads(row.after_json)),
        waiting_for=frozenset(json.loads(row.waiting_json)),
        claimable_since=row.claimable_since,
        claimed_by=row.claimed_by,
        claimed_at=row.claimed_at,
        completed_at=row.completed_at,
        result=_result(row.result_json) if row.result_json else None,
        dedupe_key=row.dedupe_key,
        retry_of=row.retry_of,
        claim_token=row.claim_token,
        renewed_at=row.renewed_at,
        version=row.version,
        budget_usd=row.budget_usd,
        usage=_trusted(SignalUsage, json.loads(row.usage_json)) if row.usage_json else None,
        priority=row.priority,
        not_before=row.not_before,
        attempt=row.attempt,
        max_attempts=row.max_attempts,
        attempts=tuple(FailedAttempt.model_validate(a) for a in json.loads(row.attempts_json))
        if row.attempts_json
        else (),
        gate=bool(row.gate),
        gate_timeout_s=row.gate_timeout_s,
        decided_by=row.decided_by,
        decision_note=row.decision_note,
        concurrency_key=row.concurrency_key,
        **_keys(row.keys_json),
    )


_new, _set = object.__new__, object.__setattr__
_FIELDS: dict[type[BaseModel], frozenset[str]] = {}


def _trusted(cls: type[M], values: dict[str, Any]) -> M:
    """`cls` from a JSON document that `model_dump_json` of a validated `cls` wrote, unvalidated, when it
    holds exactly the model's fields, each of a JSON type the field keeps as it is; else validated."""
    if (names := _FIELDS.get(cls)) is None:
        names = _FIELDS[cls] = frozenset(cls.model_fields)
    if values.keys() != names:
        return cls.model_validate(values)
    model = _new(cls)
    _set(model, "__dict__", values)
    _set(model, "__pydantic_fields_set__", set(values))
    _set(model, "__pydantic_extra__", None)
    _set(model, "__pydantic_private__", None)
    return model


def _result(result_json: str) -> SignalResult:
    values = json.loads(result_json)
    if isinstance(items := values.get("knowledge_items"), list):  # a tuple in the model
        values["knowledge_items"] = tuple(items)
    return _trusted(SignalResult, values)


def _keys(keys_json: str | None) -> dict[str, tuple[str, ...]]:
    if keys_json is None:
        return {}
    keys = json.loads(keys_json)
    return {"read_keys": tuple(keys["read"]), "write_keys": tuple(keys["write"])}
