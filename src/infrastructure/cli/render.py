"""How results look: the AgentSignal JSON documents, and short text for people."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Any

from blackboard.application.ports import Recorded
from blackboard.domain.capabilities import Volunteer
from blackboard.domain.events import CHECKPOINT_SEPARATOR, SOLVE_SEPARATOR, STREAM_SEPARATOR
from blackboard.domain.signals import AgentSignal
from blackboard.infrastructure import documents
from blackboard.infrastructure.cli.signal_text import (  # noqa: F401 - the commands take them from here
    Output,
    signal_line,
    signal_text,
    usage_lines,
)


def signal(
    item: AgentSignal, overdue: Mapping[str, datetime] | None = None, waiting: Collection[str] = ()
) -> Output:
    """`overdue`: the deadlines passed of signals not yet expired (BlackboardQueries.overdue); `waiting`: the
    signals no live worker fits (BlackboardQueries.waiting_for_workers)."""
    document = documents.jsonable(documents.signal(item, overdue, waiting))
    return Output(document, signal_text(item, _due(item, overdue), _waits(document)))


def signals(
    items: Sequence[AgentSignal],
    empty: str = "no signals",
    overdue: Mapping[str, datetime] | None = None,
    waiting: Collection[str] = (),
) -> Output:
    marks = overdue or {}
    found = [documents.jsonable(documents.signal(s, marks, waiting)) for s in items]
    lines = [signal_line(s, marks.get(s.signal_id), _waits(d)) for s, d in zip(items, found, strict=True)]
    return Output(found, "\n".join(lines or [empty]))


def _due(item: AgentSignal, overdue: Mapping[str, datetime] | None) -> datetime | None:
    return (overdue or {}).get(item.signal_id)


def _waits(document: dict[str, Any]) -> str | None:
    """What the signal's document says it waits for (`waiting`), if anything."""
    return document.get("waiting")


def events(records: Sequence[Recorded]) -> Output:
    return Output(
        documents.jsonable(documents.events(records)),
        "\n".join(event_line(r) for r in records) or "no events",
    )


def event_line(r: Recorded) -> str:
    stream = r.event.stream_id
    for separator in (STREAM_SEPARATOR, SOLVE_SEPARATOR, CHECKPOINT_SEPARATOR):
        stream = stream.replace(separator, " ")
    return (
        f"{r.position:>6}  {r.recorded_at:%H:%M:%S.%f}"[:-3] + f"  {stream}@{r.event.version:<4} "
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
        "set_by",
        "thread_id",
        "checkpoint_id",
    )  # key, author, holder, picked: entry events; run_id to status: a solve run's; set_by: a budget's;
    # thread_id, checkpoint_id: a LangGraph checkpoint's
    amounts = [f"{k}={data[k]}" for k in ("usd", "tokens") if data.get(k) is not None]  # 0 is a budget too
    return " ".join([*(f"{k}={data[k]}" for k in keep if data.get(k)), *amounts])


def ranking(signal_id: str, volunteers: Sequence[Volunteer]) -> Output:
    data = documents.jsonable(documents.ranking(volunteers))
    lines = [f"agents for {signal_id}, best first (may claim when score > threshold):"] + [
        f"  {'yes' if v.passes else ' no'}  {v.agent.agent_id:<24} score {v.score:.2f}  threshold {v.threshold:.2f}"
        for v in volunteers
    ]
    return Output(data, "\n".join(lines if volunteers else [f"no agents in the registry for {signal_id}"]))
