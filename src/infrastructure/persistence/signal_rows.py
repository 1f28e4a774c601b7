"""One signal read from its row as plain values, for a command that only prints it (`blackboard show`).

Building the domain's models and the pydantic documents costs a CLI call more than reading the row
(importing pydantic and the models is about a third of a `show`), so `show` reads the row here and
prints it with the same words (cli/signal_text.py) and the same document that `documents.signal` builds
from `codec.signal_from_row` of that row: tests/unit/test_signal_rows.py holds the two to each other
for signals in every state. Only when nothing needs the domain: the read model has folded the whole
log (else the projector must catch up first), the signal is not past the earliest deadline it can
have (else whether it is overdue depends on the live workers), and, for a claimable signal, no worker
runs at all (else whether one that is live fits it, and so whether it waits for a worker, is scored as a
claim is). The caller takes the full path otherwise.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from types import SimpleNamespace
from typing import Any

from sqlalchemy import Engine, bindparam, func, select
from sqlalchemy.exc import DBAPIError

from blackboard.application.errors import StoreUnavailable
from blackboard.infrastructure.persistence.engine import read_connection
from blackboard.infrastructure.persistence.tables import CHECKPOINTS, EVENTS, SIGNALS, WORKERS

PROJECTION = "blackboard_signals"  # the signal read model's checkpoint (projection.NAME)
ROW = select(SIGNALS).where(SIGNALS.c.signal_id == bindparam("signal_id"))
RUNNING = select(WORKERS.c.worker_id).where(WORKERS.c.stopped_at.is_(None)).limit(1)
BEHIND = select(
    func.coalesce(func.max(EVENTS.c.position), 0),
    select(CHECKPOINTS.c.position).where(CHECKPOINTS.c.name == PROJECTION).scalar_subquery(),
)


def caught_up_row(engine: Engine, signal_id: str) -> Any | None:
    """The signal's row when the read model has folded every event of the log; None when it has not or
    there is no such signal (the full path then catches up, or says it is not found). A driver's error
    leaves as the read model's does: StoreUnavailable, "could not reach the signals"."""
    try:
        with read_connection(engine) as conn:
            last, folded = conn.execute(BEHIND).one()
            if (folded or 0) != last:
                return None
            return conn.execute(ROW, {"signal_id": signal_id}).one_or_none()
    except (DBAPIError, OSError) as exc:
        raise StoreUnavailable(f"could not reach the signals: {getattr(exc, 'orig', exc)}") from exc


def earliest_deadline(row: Any, post_timeout: timedelta | None, claim_timeout: timedelta) -> datetime | None:
    """domain.blackboard.deadline without a live worker that fits: the earliest an open signal can run
    out of time (a live worker that fits it only puts the deadline later); None for an ended signal, one
    waiting for upstreams, or one waiting for a worker with no post timeout. A test holds the two to each
    other."""
    if row.gate:  # a gate: its own timeout, or none
        return row.expires_at if row.status == "POSTED" else None
    if row.status == "POSTED" and row.timeout_s is not None:  # its own post timeout
        return row.expires_at
    if row.status == "POSTED" and row.claimable_since is not None:
        return None if post_timeout is None else row.claimable_since + post_timeout
    lease = row.renewed_at or row.claimed_at
    if row.status == "CLAIMED" and lease is not None:
        return lease + claim_timeout
    return None


def view(row: Any) -> SimpleNamespace:
    """The signal with the attributes of `AgentSignal` that its text reads (cli/signal_text.py)."""
    payload = json.loads(row.payload_json)
    result = _result(row.result_json)
    usage = _usage(row.usage_json)
    keys = json.loads(row.keys_json) if row.keys_json is not None else {"read": [], "write": []}
    return SimpleNamespace(
        signal_id=row.signal_id,
        blackboard_id=row.blackboard_id,
        signal_type=row.signal_type,
        status=row.status,
        payload=SimpleNamespace(
            ps_id=payload["ps_id"],
            entry_id=payload["entry_id"],
            topic=payload["topic"],
            prompt=payload.get("prompt", ""),
            context=payload.get("context", {}),
        ),
        target_capabilities=json.loads(row.target_capabilities),
        posted_by=row.posted_by,
        claimed_by=row.claimed_by,
        created_at=row.created_at,
        claimed_at=row.claimed_at,
        completed_at=row.completed_at,
        result=None if result is None else SimpleNamespace(**result),
        version=row.version,
        after=json.loads(row.after_json),
        waiting_for=sorted(json.loads(row.waiting_json)),
        claimable_since=row.claimable_since,
        dedupe_key=row.dedupe_key,
        retry_of=row.retry_of,
        renewed_at=row.renewed_at,
        read_keys=list(keys["read"]),
        write_keys=list(keys["write"]),
        budget_usd=row.budget_usd,
        usage=None if usage is None else SimpleNamespace(**usage),
        priority=row.priority,
        not_before=row.not_before,
        attempt=row.attempt,
        max_attempts=row.max_attempts,
        attempt_limit=row.max_attempts
        if row.max_attempts is not None
        else (json.loads(row.attempts_json)[-1]["max_attempts"] if row.attempts_json else None),
        attempts=[_attempt_view(a) for a in json.loads(row.attempts_json)] if row.attempts_json else [],
        gate=bool(row.gate),
        timeout_s=row.timeout_s,
        decided_by=row.decided_by,
        decision_note=row.decision_note,
        flow_id=row.flow_id,
        step_id=row.step_id,
    )


def claimable(row: Any) -> bool:
    """POSTED, waiting for no upstream, not a gate (domain AgentSignal.is_claimable)."""
    return row.status == "POSTED" and not row.waiting and not row.gate


def any_worker_running(engine: Engine) -> bool:
    """Whether any worker has a row that does not say it stopped: one may be live (whether it is, and fits
    a signal, the domain decides: application/presence.py). None running: no live worker fits anything."""
    try:
        with read_connection(engine) as conn:
            return conn.execute(RUNNING).first() is not None
    except (DBAPIError, OSError) as exc:
        raise StoreUnavailable(f"could not read the live workers: {getattr(exc, 'orig', exc)}") from exc


def document(signal: SimpleNamespace, waiting: str | None = None) -> dict[str, Any]:
    """The signal's JSON document (documents.Signal, dumped): its fields in the model's order, times as
    ISO 8601, an absent artifact left out; never the claim's token; `waiting` when it waits for a worker."""
    p, r, u = signal.payload, signal.result, signal.usage
    return {
        "signal_id": signal.signal_id,
        "blackboard_id": signal.blackboard_id,
        "signal_type": signal.signal_type,
        "payload": {
            "ps_id": p.ps_id,
            "entry_id": p.entry_id,
            "topic": p.topic,
            "prompt": p.prompt,
            "context": p.context,
        },
        "target_capabilities": list(signal.target_capabilities),
        "posted_by": signal.posted_by,
        "claimed_by": signal.claimed_by,
        "status": signal.status,
        "created_at": _time(signal.created_at),
        "claimed_at": _time(signal.claimed_at),
        "completed_at": _time(signal.completed_at),
        "result": None
        if r is None
        else {
            **({} if r.artifact_path is None else {"artifact_path": r.artifact_path}),
            "knowledge_items": list(r.knowledge_items),
            "error": r.error,
        },
        "version": signal.version,
        "after": list(signal.after),
        "waiting_for": list(signal.waiting_for),
        "claimable_since": _time(signal.claimable_since),
        "dedupe_key": signal.dedupe_key,
        "retry_of": signal.retry_of,
        "lease_renewed_at": _time(signal.renewed_at),
        "read_keys": list(signal.read_keys),
        "write_keys": list(signal.write_keys),
        "budget_usd": signal.budget_usd,
        "usage": None if u is None else dict(vars(u)),
        "priority": signal.priority,
        "not_before": _time(signal.not_before),
        "attempt": signal.attempt,
        "max_attempts": signal.attempt_limit,
        "attempts": [
            {
                "attempt": a.attempt,
                "claimed_by": a.claimed_by,
                "error": a.error,
                "ended_at": _time(a.ended_at),
                "retry_at": _time(a.retry_at),
                "expired": a.expired,
            }
            for a in signal.attempts
        ],
        "gate": signal.gate,
        "timeout_s": signal.timeout_s,
        "decided_by": signal.decided_by,
        "decision_note": signal.decision_note,
        "flow_id": signal.flow_id,
        "step_id": signal.step_id,
        **({} if waiting is None else {"waiting": waiting}),
    }


def _attempt_view(stored: dict[str, Any]) -> SimpleNamespace:
    """A failed attempt with the attributes of domain.signals.FailedAttempt."""
    return SimpleNamespace(
        attempt=stored["attempt"],
        claimed_by=stored.get("claimed_by"),
        error=stored["error"],
        ended_at=datetime.fromisoformat(stored["ended_at"]),
        retry_at=datetime.fromisoformat(stored["retry_at"]),
        max_attempts=stored["max_attempts"],
        expired=stored.get("expired", False),
    )


def _result(raw: str | None) -> dict[str, Any] | None:
    if not raw:  # as codec.signal_from_row reads it
        return None
    stored = json.loads(raw)
    return {
        "artifact_path": stored.get("artifact_path"),
        "knowledge_items": list(stored.get("knowledge_items", ())),
        "error": stored.get("error"),
    }


def _usage(raw: str | None) -> dict[str, Any] | None:
    """SignalUsage's fields in its order, with its defaults."""
    if not raw:
        return None
    stored = json.loads(raw)
    cost = stored.get("cost_usd")
    return {
        "runner": stored["runner"],
        "model": stored.get("model"),
        "input_tokens": stored.get("input_tokens", 0),
        "output_tokens": stored.get("output_tokens", 0),
        "cost_usd": None if cost is None else float(cost),  # a float field
        "turns": stored.get("turns", 0),
        "duration_ms": stored.get("duration_ms", 0),
        "session_id": stored.get("session_id"),
        "transcript_path": stored.get("transcript_path"),
    }


def _time(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()
