"""A signal as text for people, and what a command prints: the words every command prints an `AgentSignal`
with (render.py re-exports these beside the documents)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from blackboard.domain.signal_kinds import SignalStatus


@dataclass(frozen=True, slots=True)
class Output:
    """What a command prints: `data` with --json, `text` otherwise."""

    data: Any
    text: str


def signal_line(s: Any, due: datetime | None = None, waiting: str | None = None) -> str:
    """One line; `waiting`: what it waits for (its document's `waiting`), said after its status."""
    by = ended_by(s)
    who = f" by {by}" if by else ""
    late = f" OVERDUE since {due:%H:%M:%S}" if due else ""
    waits = f" (waiting for {waiting})" if waiting else ""
    return (
        f"{s.signal_id}  {s.signal_type:<13} {s.status:<9}{who}{late}{waits}  [{s.blackboard_id}] "
        f"{s.payload.topic}"
    )


def signal_text(s: Any, due: datetime | None = None, waiting: str | None = None) -> str:
    lines = [signal_line(s, due), f"  posted by {s.posted_by} at {s.created_at:%Y-%m-%d %H:%M:%S}"]
    if s.payload.labels:
        lines.append(f"  labels: {', '.join(s.payload.labels)}")
    if s.flow_id is not None:
        shown = f"blackboard flow status {s.flow_id} --blackboard {s.blackboard_id}"
        lines.append(f"  step {s.step_id} of flow {s.flow_id} ({shown})")
    if due:
        lines.append(
            f"  overdue: its deadline passed at {due:%Y-%m-%d %H:%M:%S}; "
            "the next command on it or the next sweep records it EXPIRED"
        )
    if waiting:
        lines.append(f"  waiting for {waiting}; none is live (blackboard worker --agent NAME starts one)")
    timeout = post_timeout_line(s)
    if timeout:
        lines.append(timeout)
    if s.after:
        # an ended signal waits for nothing: an upstream that took it down is named by its reason line
        awaited = s.waiting_for if s.status == SignalStatus.POSTED else ()
        waiting = f" (waiting for {', '.join(sorted(awaited))})" if awaited else ""
        lines.append(f"  after {', '.join(s.after)}{waiting}")
    if s.read_keys or s.write_keys:
        lines.append(
            f"  keys: read {', '.join(s.read_keys) or 'none'}; write {', '.join(s.write_keys) or 'none'}"
        )
    if s.attempt > 1 or s.attempt_limit is not None:
        limit = f" of {s.attempt_limit}" if s.attempt_limit is not None else ""
        lines.append(f"  attempt {s.attempt}{limit}")
    if s.status == SignalStatus.POSTED and s.not_before:  # `post --not-before`, or a retry's wait
        lines.append(f"  not before {s.not_before:%Y-%m-%d %H:%M:%S} UTC: no worker claims it until then")
    for a in s.attempts:
        how = "claim ran out" if a.expired else "failed"
        resumed = f", resumed from {a.resumed_from}" if a.resumed_from else ""
        lines.append(
            f"  attempt {a.attempt} {how} ({a.claimed_by or 'nobody'}, {a.ended_at:%H:%M:%S}{resumed}): {a.error}"
        )
    for t in getattr(s, "stalls", ()):  # docs/control.md, "Stalls"
        lines.append(
            f"  attempt {t.attempt} stalled ({t.actor}, {t.at:%H:%M:%S}): no progress for {t.seconds_idle:.0f}s, "
            "stopped"
        )
    if s.gate:
        lines.append(gate_line(s))
    if s.claimed_at:
        stopped = "; its run was stopped by the cancel" if s.status == SignalStatus.CANCELLED else ""
        lines.append(f"  claimed by {s.claimed_by} at {s.claimed_at:%Y-%m-%d %H:%M:%S}{stopped}")
    if s.completed_at:
        lines.append(f"  {s.status.lower()} at {s.completed_at:%Y-%m-%d %H:%M:%S}")
    if s.result and s.result.artifact_path:
        lines.append(f"  artifact: {s.result.artifact_path}")
    lines += [f"  knowledge: {k}" for k in (s.result.knowledge_items if s.result else ())]
    if s.result and s.result.error:
        lines.append(f"  reason: {s.result.error}")
    if s.budget_usd is not None:
        lines.append(f"  budget: ${s.budget_usd:g}")
    if s.usage is not None:
        lines += usage_lines(s)
    return "\n".join(lines)


def post_timeout_line(s: Any) -> str | None:
    """A POSTED signal (not a gate) posted with a timeout of its own: how long it may wait for a worker."""
    if s.gate or s.status != SignalStatus.POSTED or not s.timeout_s:
        return None
    return f"  post timeout: {s.timeout_s:g}s while no live worker fits it, then EXPIRED"


def ended_by(s: Any) -> str | None:
    """Who the status line says it is by: whoever ended it on purpose (a gate's decider, or who cancelled
    it), else its claimer; never, for a CANCELLED signal, the agent whose run was stopped."""
    if s.decided_by:
        return s.decided_by
    return None if s.status == SignalStatus.CANCELLED else s.claimed_by


def gate_line(s: Any) -> str:
    """A gate: who decided it and why, or that it waits for a person (and for how long at most)."""
    if s.decided_by is not None:
        verb = {SignalStatus.COMPLETED: "approved", SignalStatus.CANCELLED: "cancelled"}.get(
            s.status, "rejected"
        )
        note = f": {s.decision_note}" if s.decision_note else ""
        return f"  gate: {verb} by {s.decided_by}{note}"
    if s.status != SignalStatus.POSTED:
        return "  gate: not decided"
    limit = f", {s.timeout_s:g}s at most once open" if s.timeout_s else ""
    return f"  gate: waits for a person (blackboard approve / reject){limit}"


def usage_lines(s: Any) -> list[str]:
    """A runner's run: what it cost, and where its transcript is."""
    u = s.usage
    assert u is not None
    cost = "cost unknown" if u.cost_usd is None else f"${u.cost_usd:.4f}"
    lines = [
        f"  run: {u.runner}{f' ({u.model})' if u.model else ''}, {u.input_tokens:,} tokens in, "
        f"{u.output_tokens:,} out, {cost}, {u.turns} turn(s), {u.duration_ms / 1000:.1f}s"
        + (f", session {u.session_id}" if u.session_id else "")
        + (f", resumed from {u.resumed_from}" if u.resumed_from else "")
    ]
    if u.transcript_path:
        lines.append(f"  transcript: {u.transcript_path}")
    return lines
