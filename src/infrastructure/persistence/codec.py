"""Turning events and signals into rows and back."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from json.encoder import encode_basestring_ascii as _quoted
from typing import Any

import msgspec
from pydantic import BaseModel

from blackboard.application.bounds import MAX_INT64
from blackboard.application.carried import check_carried
from blackboard.application.errors import UpgradeNeeded
from blackboard.application.ports import Recorded, StoredEvent
from blackboard.domain.events import (
    BlackboardEvent,
    UnreadableEvent,
    board_of_stream,
    load_event,
)
from blackboard.domain.reservations import Reservation
from blackboard.domain.signals import (
    AgentSignal,
    FailedAttempt,
    SignalPayload,
    SignalResult,
    SignalStatus,
    SignalType,
    SignalUsage,
    Stall,
    entry_number,
)


def event_row(
    event: BlackboardEvent,
    metadata: Mapping[str, Any],
    recorded_at: datetime,
    metadata_json: str | None = None,
) -> dict[str, Any]:
    """`metadata_json`: the metadata already encoded, when many events of one append share it. An event an
    export could not carry to an import is refused here, the one place every append passes (InvalidInput)."""
    data = event.data()
    data_json = json.dumps(data, separators=(",", ":"))
    if metadata_json is None:
        metadata_json = json.dumps(dict(metadata), separators=(",", ":"))
    schema_version = type(event).schema_version
    check_carried(
        data_json,
        metadata_json,
        lambda: StoredEvent(
            0,
            event.event_id,
            event.stream_id,
            event.version,
            event.event_type,
            schema_version,
            data,
            metadata,
            event.occurred_at,
            recorded_at,
        ),
    )
    return {
        "event_id": event.event_id,
        "stream_id": event.stream_id,
        "version": event.version,
        "event_type": event.event_type,
        "schema_version": schema_version,
        "data": data_json,
        "metadata": metadata_json,
        "occurred_at": event.occurred_at,
        "recorded_at": recorded_at,
    }


def event_from_row(row: Any) -> BlackboardEvent:
    """A row of the log as the domain's event (a `Row`'s fields, or a SQLAlchemy row's): `stored_event`."""
    return stored_event(
        row.position,
        row.event_id,
        board_of_stream(row.stream_id),
        row.version,
        row.event_type,
        row.schema_version,
        row.data,
        row.occurred_at,
    )


def stored_event(
    position: int,
    event_id: str,
    blackboard_id: str,
    version: int,
    event_type: str,
    schema_version: int,
    data: str,
    occurred_at: datetime,
) -> BlackboardEvent:
    """The one way a stored event becomes the domain's event, whatever its type and whoever reads it (a
    rebuild or catch-up, `events`, time travel, a command replaying a board): its data decoded into a dict
    (msgspec; the standard library's reader for what msgspec refuses and `json.dumps` may have written: NaN,
    a lone surrogate), upcast dict to dict when an older schema wrote it, and validated by the event's own
    model with its envelope (the domain's `load_event`). No copy of any event class: a field added to one
    is read here as soon as the class has it.

    Validating again rows the board wrote itself costs less than skipping it: pydantic's validator (Rust)
    builds an event in 1.3-2.8 µs, where `model_construct` (its constructor without validation, Python)
    took 6.3 µs an event with its values converted first (`bench/event_decoding.py`)."""
    values = read_json(data)
    envelope = {
        "event_id": event_id,
        "blackboard_id": blackboard_id,
        "version": version,
        "occurred_at": occurred_at,
    }
    try:
        return load_event(event_type, schema_version, envelope, values)
    except UnreadableEvent as exc:  # written by a newer blackboard: stop here, never skip or guess
        raise too_old(exc, f"position {position}") from None


_decode = msgspec.json.decode


def read_json(data: str) -> Any:
    """JSON text the board wrote (`json.dumps`), as Python values: by msgspec (C, 4 µs for an entry's state of
    half a kilobyte where the standard library's reader takes 16), and by the standard library's reader for
    what msgspec refuses and `json.dumps` may have written (NaN, infinities, a lone surrogate)."""
    try:
        return _decode(data)
    except msgspec.DecodeError:
        return json.loads(data)


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


# The columns of a signal's row, in the order `signal_values` gives them (the fold's INSERT); the last,
# post_event_id, is the fold's own (the event that posted it), not the signal's
SIGNAL_COLUMNS = (
    "signal_id",
    "blackboard_id",
    "signal_type",
    "payload_json",
    "target_capabilities",
    "posted_by",
    "claimed_by",
    "status",
    "created_at",
    "claimed_at",
    "completed_at",
    "result_json",
    "version",
    "after_json",
    "waiting_json",
    "waiting",
    "claimable_since",
    "dedupe_key",
    "retry_of",
    "claim_token",
    "renewed_at",
    "keys_json",
    "budget_usd",
    "usage_json",
    "priority",
    "not_before",
    "attempt",
    "max_attempts",
    "attempts_json",
    "gate",
    "timeout_s",
    "expires_at",
    "decided_by",
    "decision_note",
    "concurrency_key",
    "reserved_usd",
    "reserved_tokens",
    "entry_number",
    "flow_id",
    "step_id",
    "charged_attempts_json",
    "labels_json",
    "stalls_json",
    "stalls",
    "claim_runner",
    "nudges",
    "post_event_id",
)
# The columns a signal's later events change, in the order `changing_values` gives them after the key
# (signal_id, first): projection.CHANGING
CHANGING_COLUMNS = (
    "status",
    "claimed_by",
    "claimed_at",
    "completed_at",
    "result_json",
    "version",
    "waiting_json",
    "waiting",
    "claimable_since",
    "claim_token",
    "renewed_at",
    "usage_json",
    "not_before",
    "attempt",
    "attempts_json",
    "expires_at",
    "decided_by",
    "decision_note",
    "concurrency_key",
    "reserved_usd",
    "reserved_tokens",
    "charged_attempts_json",
    "stalls_json",
    "stalls",
    "claim_runner",
    "nudges",
)


def _json(model: BaseModel) -> str:
    """`model.model_dump_json()`, to the byte: the same serializer with its defaults, without the method's
    keywords passed on each call (the models build their schema when first used: `defer_build`)."""
    return model.__pydantic_serializer__.to_json(model).decode()


def signal_values(signal: AgentSignal, post_event_id: str | None = None) -> tuple[Any, ...]:
    """A signal's row as a tuple, in SIGNAL_COLUMNS' order (the fold's INSERT binds it as it is: no dict a
    row); `post_event_id`, the last, is the event that posted it. Enums as their value (`_value_`: the
    plain str, read without `value`'s descriptor)."""
    result, usage, after, waiting = signal.result, signal.usage, signal.after, signal.waiting_for
    read_keys, write_keys, reserved = signal.read_keys, signal.write_keys, signal.reserved
    return (
        signal.signal_id,
        signal.blackboard_id,
        signal.signal_type._value_,
        _json(signal.payload),
        _strings(signal.target_capabilities),
        signal.posted_by,
        signal.claimed_by,
        signal.status._value_,
        signal.created_at,
        signal.claimed_at,
        signal.completed_at,
        _json(result) if result else None,
        signal.version,
        _strings(after) if after else "[]",
        _strings(sorted(waiting)) if waiting else "[]",
        len(waiting),
        signal.claimable_since,
        signal.dedupe_key,
        signal.retry_of,
        signal.claim_token,
        signal.renewed_at,
        json.dumps({"read": list(read_keys), "write": list(write_keys)}) if read_keys or write_keys else None,
        signal.budget_usd,
        _json(usage) if usage else None,
        signal.priority,
        signal.not_before,
        signal.attempt,
        signal.max_attempts,
        attempts_json(signal),
        signal.gate,
        signal.timeout_s,
        expires_at(signal),
        signal.decided_by,
        signal.decision_note,
        signal.concurrency_key,
        None if reserved is None else reserved.usd,
        None if reserved is None else reserved.tokens,
        stored_entry_number(signal.payload.entry_id),
        signal.flow_id,
        signal.step_id,
        charged_json(signal),
        _strings(labels) if (labels := signal.payload.labels) else None,
        stalls_json(signal),
        len(signal.stalls),
        signal.claim_runner,
        signal.nudges,
        post_event_id,
    )


def signal_row(signal: AgentSignal) -> dict[str, Any]:
    """A signal's row as a dict of its columns (without the fold's post_event_id): `signal_values`'."""
    return dict(zip(SIGNAL_COLUMNS[:-1], signal_values(signal)[:-1], strict=True))


def stored_entry_number(entry_id: str) -> int | None:
    """The N of `e-N` as its column holds it: NULL past 64 bits (the board's next e-N is then not above it:
    an id that long is a caller's own)."""
    n = entry_number(entry_id)
    return n if n <= MAX_INT64 else None


def expires_at(signal: AgentSignal) -> datetime | None:
    """The earliest a signal with a timeout of its own can expire unclaimed: `timeout_s` after it became
    claimable (a gate: after it opened; another signal may wait longer while a live worker fits it). None:
    no timeout of its own, or not claimable yet. A column, so the sweep's query finds it without date
    arithmetic in SQL."""
    if signal.timeout_s is None or signal.claimable_since is None:
        return None
    return signal.claimable_since + timedelta(seconds=signal.timeout_s)


def _strings(values: Iterable[str]) -> str:
    """`json.dumps(list(values))` for strings, to the byte (every fold writes three of them a signal) without
    the encoder's set-up per call."""
    return "[" + ", ".join(map(_quoted, values)) + "]"


def changing_values(signal: AgentSignal) -> tuple[Any, ...]:
    """The columns a signal's later events change, as a tuple: its signal_id (the key), then
    CHANGING_COLUMNS' values in their order (the fold's UPDATE)."""
    result, usage, waiting, reserved = signal.result, signal.usage, signal.waiting_for, signal.reserved
    return (
        signal.signal_id,
        signal.status._value_,
        signal.claimed_by,
        signal.claimed_at,
        signal.completed_at,
        _json(result) if result else None,
        signal.version,
        _strings(sorted(waiting)) if waiting else "[]",
        len(waiting),
        signal.claimable_since,
        signal.claim_token,
        signal.renewed_at,
        _json(usage) if usage else None,
        signal.not_before,
        signal.attempt,
        attempts_json(signal),
        expires_at(signal),
        signal.decided_by,
        signal.decision_note,
        signal.concurrency_key,
        None if reserved is None else reserved.usd,
        None if reserved is None else reserved.tokens,
        charged_json(signal),
        stalls_json(signal),
        len(signal.stalls),
        signal.claim_runner,
        signal.nudges,
    )


_CHANGING_KEYS = ("b_signal_id", *(f"b_{n}" for n in CHANGING_COLUMNS))


def changing_row(signal: AgentSignal) -> dict[str, Any]:
    """The columns a signal's later events change (projection.CHANGING), keyed as the fold's update binds
    them: `changing_values`'."""
    return dict(zip(_CHANGING_KEYS, changing_values(signal), strict=True))


def attempts_json(signal: AgentSignal) -> str | None:
    """The attempts that failed and were retried, as JSON; NULL for a signal never retried."""
    if not signal.attempts:
        return None
    return json.dumps([a.model_dump(mode="json") for a in signal.attempts])


def charged_json(signal: AgentSignal) -> str | None:
    """The attempts whose run was charged, as a JSON array of their numbers; NULL for none."""
    charged = signal.charged_attempts
    return "[" + ", ".join(map(str, charged)) + "]" if charged else None


def stalls_json(signal: AgentSignal) -> str | None:
    """The attempts whose run stalled, as JSON; NULL for none."""
    if not signal.stalls:
        return None
    return json.dumps([s.model_dump(mode="json") for s in signal.stalls])


def signal_from_row(row: Any) -> AgentSignal:
    """The signal a row of ours holds; its JSON columns read by their models' own validators from the JSON
    text (pydantic's, in one pass: 1-2.5 µs a document, less than building them unvalidated from
    `json.loads`, measured: `bench/event_decoding.py` and issue 35's notes in docs/performance.md)."""
    return AgentSignal(
        signal_id=row.signal_id,
        blackboard_id=row.blackboard_id,
        signal_type=SignalType(row.signal_type),
        payload=SignalPayload.model_validate_json(row.payload_json),
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
        result=SignalResult.model_validate_json(row.result_json) if row.result_json else None,
        dedupe_key=row.dedupe_key,
        retry_of=row.retry_of,
        claim_token=row.claim_token,
        renewed_at=row.renewed_at,
        version=row.version,
        budget_usd=row.budget_usd,
        usage=SignalUsage.model_validate_json(row.usage_json) if row.usage_json else None,
        priority=row.priority,
        not_before=row.not_before,
        attempt=row.attempt,
        max_attempts=row.max_attempts,
        attempts=tuple(FailedAttempt.model_validate(a) for a in json.loads(row.attempts_json))
        if row.attempts_json
        else (),
        gate=bool(row.gate),
        timeout_s=row.timeout_s,
        decided_by=row.decided_by,
        decision_note=row.decision_note,
        concurrency_key=row.concurrency_key,
        reserved=_reserved(row.reserved_usd, row.reserved_tokens),
        flow_id=row.flow_id,
        step_id=row.step_id,
        charged_attempts=tuple(json.loads(row.charged_attempts_json)) if row.charged_attempts_json else (),
        stalls=tuple(Stall.model_validate(s) for s in json.loads(row.stalls_json)) if row.stalls_json else (),
        claim_runner=row.claim_runner,
        nudges=row.nudges or 0,
        **_keys(row.keys_json),
    )


def _reserved(usd: float | None, tokens: int | None) -> Reservation | None:
    if usd is None and tokens is None:
        return None
    return Reservation(usd=usd, tokens=tokens)


def _keys(keys_json: str | None) -> dict[str, tuple[str, ...]]:
    if keys_json is None:
        return {}
    keys = json.loads(keys_json)
    return {"read_keys": tuple(keys["read"]), "write_keys": tuple(keys["write"])}
