"""How results look: the AgentSignal JSON documents, and short text for people."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from blackboard.application.ports import Recorded
from blackboard.domain.capabilities import Volunteer
from blackboard.domain.events import SOLVE_SEPARATOR, STREAM_SEPARATOR
from blackboard.domain.signals import AgentSignal
from blackboard.infrastructure import documents


@dataclass(frozen=True, slots=True)
class Output:
    """What a command prints: `data` with --json, `text` otherwise."""

    data: Any
    text: str


def signal(item: AgentSignal, overdue: Mapping[str, datetime] | None = None) -> Output:
    """`overdue`: the deadlines passed of signals not yet expired (BlackboardQueries.overdue)."""
    due = (overdue or {}).get(item.signal_id)
    return Output(_document(item, due), signal_text(item, due))


def signals(
    items: Sequence[AgentSignal], empty: str = "no signals", overdue: Mapping[str, datetime] | None = None
) -> Output:
    marks = overdue or {}
    lines = [signal_line(s, marks.get(s.signal_id)) for s in items] or [empty]
    return Output([_document(s, marks.get(s.signal_id)) for s in items], "\n".join(lines))


def _document(s: AgentSignal, due: datetime | None) -> dict[str, Any]:
    """The signal's document; an overdue one not yet expired also carries `overdue_since`, its deadline
    (docs/agents.md: "Leases, timeouts and expiry")."""
    return documents.jsonable(documents.signal(s, {s.signal_id: due} if due is not None else None))


def signal_line(s: AgentSignal, due: datetime | None = None) -> str:
    who = f" by {s.claimed_by}" if s.claimed_by else ""
    late = f" OVERDUE since {due:%H:%M:%S}" if due else ""
    return (
        f"{s.signal_id}  {s.signal_type:<13} {s.status:<9}{who}{late}  [{s.blackboard_id}] {s.payload.topic}"
    )


def signal_text(s: AgentSignal, due: datetime | None = None) -> str:
    lines = [signal_line(s, due), f"  posted by {s.posted_by} at {s.created_at:%Y-%m-%d %H:%M:%S}"]
    if due:
        lines.append(
            f"  overdue: its deadline passed at {due:%Y-%m-%d %H:%M:%S}; "
            "the next command on it or the next sweep records it EXPIRED"
        )
    if s.after:
        waiting = f" (waiting for {', '.join(sorted(s.waiting_for))})" if s.waiting_for else ""
        lines.append(f"  after {', '.join(s.after)}{waiting}")
    if s.read_keys or s.write_keys:
        lines.append(
            f"  keys: read {', '.join(s.read_keys) or 'none'}; write {', '.join(s.write_keys) or 'none'}"
        )
    if s.claimed_at:
        lines.append(f"  claimed by {s.claimed_by} at {s.claimed_at:%Y-%m-%d %H:%M:%S}")
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


def usage_lines(s: AgentSignal) -> list[str]:
    """A runner's run: what it cost, and where its transcript is."""
    u = s.usage
    assert u is not None
    cost = "cost unknown" if u.cost_usd is None else f"${u.cost_usd:.4f}"
    lines = [
        f"  run: {u.runner}{f' ({u.model})' if u.model else ''}, {u.input_tokens:,} tokens in, "
        f"{u.output_tokens:,} out, {cost}, {u.turns} turn(s), {u.duration_ms / 1000:.1f}s"
        + (f", session {u.session_id}" if u.session_id else "")
    ]
    if u.transcript_path:
        lines.append(f"  transcript: {u.transcript_path}")
    return lines


def events(records: Sequence[Recorded]) -> Output:
    return Output(
        documents.jsonable(documents.events(records)),
        "\n".join(event_line(r) for r in records) or "no events",
    )


def event_line(r: Recorded) -> str:
    return (
        f"{r.position:>6}  {r.recorded_at:%H:%M:%S.%f}"[:-3]
        + f"  {r.event.stream_id.replace(STREAM_SEPARATOR, ' ').replace(SOLVE_SEPARATOR, ' ')}@{r.event.version:<4} "
        f"{r.event.event_type:<22} {_summary(r)}"
    )


def _summary(record: Recorded) -> str:
    data = record.event.data()
    keep = (
        "signal_id",
        "signal_type",
        "after",
        "claimed_by",
        "completed_by",
        "failed_by",
        "error",
        "reason",
        "key",
        "author",
        "holder",
        "picked",
        "run_id",
        "agent",
        "capability",
        "status",
    )  # key, author, holder, picked: entry events; run_id to status: a solve run's
    return " ".join(f"{k}={data[k]}" for k in keep if data.get(k))


def ranking(signal_id: str, volunteers: Sequence[Volunteer]) -> Output:
    data = documents.jsonable(documents.ranking(volunteers))
    lines = [f"agents for {signal_id}, best first (may claim when score > threshold):"] + [
        f"  {'yes' if v.passes else ' no'}  {v.agent.agent_id:<24} score {v.score:.2f}  threshold {v.threshold:.2f}"
        for v in volunteers
    ]
    return Output(data, "\n".join(lines if volunteers else [f"no agents in the registry for {signal_id}"]))
