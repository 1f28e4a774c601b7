"""The codec's rows match the statements that bind them."""

from __future__ import annotations

from datetime import timedelta

from blackboard.domain.blackboard import BlackboardAggregate
from blackboard.domain.signals import SignalResult
from blackboard.infrastructure.persistence import fold as projection
from blackboard.infrastructure.persistence.codec import changing_row, signal_row
from tests.contract.stories import RESEARCHER, post
from tests.fakes import T0

COLUMNS = ("signal_id", *projection.CHANGING)


def signals():
    """A completed signal (result, times, token), one claimed and renewed, and one waiting for it."""
    board = BlackboardAggregate("bb-1")
    post(board, 1)
    post(board, 2)
    post(board, 3, after=("sig-00000002",))
    board.claim_signal("sig-00000001", RESEARCHER, T0, token="tok-1")
    board.complete_signal(
        "sig-00000001", "ps-researcher", SignalResult(artifact_path="r.md"), T0, token="tok-1"
    )
    board.claim_signal("sig-00000002", RESEARCHER, T0, token="tok-2")
    board.renew_claim("sig-00000002", "ps-researcher", T0 + timedelta(seconds=5), token="tok-2")
    return list(board.signals.values())


def test_changing_row_binds_exactly_the_names_the_update_statement_expects():
    for signal in signals():
        row = changing_row(signal)

        assert set(row) == {"b_signal_id", *("b_" + column for column in projection.CHANGING)}


def test_changing_row_holds_the_values_the_full_row_has_for_those_columns():
    for signal in signals():
        full, changing = signal_row(signal), changing_row(signal)

        assert {column: changing[f"b_{column}"] for column in COLUMNS} == {
            column: full[column] for column in COLUMNS
        }


def _former_row(signal) -> dict:
    """The row as `signal_row` built it before the fold's rows became tuples: the models' own
    `model_dump_json`, the enums' `value`, `json.dumps` of each list. The tuples must hold these bytes."""
    import json

    from blackboard.infrastructure.persistence.codec import attempts_json, expires_at

    return {
        "signal_id": signal.signal_id,
        "blackboard_id": signal.blackboard_id,
        "signal_type": signal.signal_type.value,
        "payload_json": signal.payload.model_dump_json(),
        "target_capabilities": json.dumps(list(signal.target_capabilities)),
        "posted_by": signal.posted_by,
        "claimed_by": signal.claimed_by,
        "status": signal.status.value,
        "created_at": signal.created_at,
        "claimed_at": signal.claimed_at,
        "completed_at": signal.completed_at,
        "result_json": signal.result.model_dump_json() if signal.result else None,
        "version": signal.version,
        "after_json": json.dumps(list(signal.after)),
        "waiting_json": json.dumps(sorted(signal.waiting_for)),
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
        "timeout_s": signal.timeout_s,
        "expires_at": expires_at(signal),
        "decided_by": signal.decided_by,
        "decision_note": signal.decision_note,
        "concurrency_key": signal.concurrency_key,
        "reserved_usd": signal.reserved.usd if signal.reserved else None,
        "reserved_tokens": signal.reserved.tokens if signal.reserved else None,
        "entry_number": int(signal.payload.entry_id.removeprefix("e-")),
        "flow_id": signal.flow_id,
        "step_id": signal.step_id,
        "charged_attempts_json": json.dumps(list(signal.charged_attempts))
        if signal.charged_attempts
        else None,
        "labels_json": json.dumps(list(signal.payload.labels)) if signal.payload.labels else None,
        "stalls_json": json.dumps([t.model_dump(mode="json") for t in signal.stalls])
        if signal.stalls
        else None,
        "stalls": len(signal.stalls),
        "claim_runner": signal.claim_runner,
        "nudges": signal.nudges,
    }


def _varied():
    """The signals above, and copies with every optional column set: unicode and nested context, a
    result with knowledge items, usage, keys, several upstreams, a gate with a timeout, a failed attempt."""
    from dataclasses import replace

    from blackboard.domain.reservations import Reservation
    from blackboard.domain.signals import FailedAttempt, SignalPayload, SignalUsage, Stall

    base = signals()
    full = replace(
        base[0],
        payload=SignalPayload(
            ps_id="ps-1",
            entry_id="e-1",
            topic='café ☕ "quoted"',
            prompt="a\nb",
            context={"x": [1, 2.5, None]},
            labels=("bug", "team:core"),
        ),
        result=SignalResult(artifact_path="r.md", knowledge_items=("k-1", "k-2"), error="é"),
        usage=SignalUsage(
            runner="claude", model="m", input_tokens=3, output_tokens=4, cost_usd=0.25, turns=2
        ),
        after=("sig-b", "sig-a"),
        waiting_for=frozenset({"sig-b", "sig-a", "sig-c"}),
        target_capabilities=("Research", "review ü"),
        read_keys=("r/*",),
        write_keys=(),
        gate=True,
        timeout_s=30.0,
        claimable_since=T0,
        attempts=(
            FailedAttempt(attempt=1, claimed_by="a", error="boom", retry_at=T0, ended_at=T0, max_attempts=3),
        ),
        attempt=2,
        max_attempts=3,
        budget_usd=1.5,
        decided_by="ann",
        decision_note="ok",
        concurrency_key="ck",
        reserved=Reservation(usd=0.5, tokens=100_005),
        flow_id="docbot-1",
        step_id="plan",
        charged_attempts=(1,),
        stalls=(Stall(attempt=1, actor="a", seconds_idle=300.0, at=T0),),
        priority=0,
    )
    return [*base, full]


def test_the_fold_s_tuples_hold_what_the_former_dict_rows_held_byte_for_byte():
    from blackboard.infrastructure.persistence.codec import (
        SIGNAL_COLUMNS,
        changing_values,
        signal_values,
    )
    from blackboard.infrastructure.persistence.tables import SIGNALS

    assert set(SIGNAL_COLUMNS) == set(SIGNALS.c.keys())  # every column of the table, once
    for signal in _varied():
        former = _former_row(signal)
        values = signal_values(signal, "ev-post")

        assert dict(zip(SIGNAL_COLUMNS, values, strict=True)) == {**former, "post_event_id": "ev-post"}
        assert signal_row(signal) == former
        assert all(type(v) is str for k, v in former.items() if k in ("signal_type", "status"))
        assert [type(v) for v in values[:-1]] == [type(v) for v in former.values()]  # no enum bound
        assert changing_values(signal) == tuple(former[column] for column in COLUMNS)
