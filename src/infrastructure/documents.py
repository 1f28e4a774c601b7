"""The JSON documents every interface returns (the CLI's `--json`, the Python API), built here once.

Each interface renders or types these documents, never builds its own, so the same call gives the
same document whichever interface made it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from blackboard.application.ports import Recorded
from blackboard.domain.capabilities import Volunteer
from blackboard.domain.signals import AgentSignal

if TYPE_CHECKING:
    from blackboard.application.queries import BlackboardQueries
    from blackboard.domain.knowledge.entries import Entry
    from blackboard.infrastructure.agents.parsing import AgentDefinition, AgentFileProblem
    from blackboard.infrastructure.agents.registry import FrontmatterAgentRegistry


def signal(item: AgentSignal, overdue: Mapping[str, datetime] | None = None) -> dict[str, Any]:
    """The AgentSignal document of contracts/agent-signal.schema.json. A signal in `overdue`
    (BlackboardQueries.overdue: past its deadline, not yet expired) also carries `overdue_since`, its
    deadline (the schema allows properties beyond its own; docs/agents.md: "Leases, timeouts and expiry")."""
    document = item.to_document()
    if (due := (overdue or {}).get(item.signal_id)) is not None:
        document["overdue_since"] = due.isoformat()
    return document


def signals_now(items: Sequence[AgentSignal], queries: BlackboardQueries) -> list[dict[str, Any]]:
    """Signals as they are now, the overdue ones marked."""
    overdue = queries.overdue(items)
    return [signal(s, overdue) for s in items]


def posted(item: AgentSignal, registry: FrontmatterAgentRegistry) -> dict[str, Any]:
    """A signal just posted; `warnings` (AgentSignal allows extra properties) when only agents with
    nothing to run fit it."""
    from blackboard.infrastructure.agents.runnable import unrunnable_warning

    warning = unrunnable_warning(item, registry)
    return item.to_document() if warning is None else {**item.to_document(), "warnings": [warning]}


def watched(item: AgentSignal, position: int) -> dict[str, Any]:
    """A signal a watch found, with the log position to pass as `since` next time."""
    return {**item.to_document(), "position": position}


def ranking(volunteers: Sequence[Volunteer]) -> list[dict[str, Any]]:
    """The registry's agents ranked for a signal, best first, and who may claim it."""
    return [
        {"agent": v.agent.agent_id, "score": v.score, "threshold": v.threshold, "passes": v.passes}
        for v in volunteers
    ]


def events(records: Sequence[Recorded]) -> list[dict[str, Any]]:
    """Stored events with their global positions, as `blackboard events` prints them."""
    return [event(r) for r in records]


def event(r: Recorded) -> dict[str, Any]:
    """One stored event (`events --jsonl` prints one a line, as it reads them)."""
    return {
        "position": r.position,
        "event_type": r.event.event_type,
        "stream_id": r.event.stream_id,  # a board's, or an entry key's (`<board>\x1f<key>`)
        "version": r.event.version,
        "event_id": r.event.event_id,
        "schema_version": type(r.event).schema_version,
        "occurred_at": r.event.occurred_at.isoformat(),
        "recorded_at": r.recorded_at.isoformat(),
        "data": _shown(r.event.data()),
        "metadata": dict(r.metadata),
    }


def _shown(data: dict[str, Any]) -> dict[str, Any]:
    """An event's data as it is shown: a claim's token is its claimer's proof (whoever holds it may
    complete the claim), so the log shows that there was one, not what it is (`export` keeps it)."""
    return {**data, "token": "(hidden)"} if data.get("token") else data


def agents(registry: FrontmatterAgentRegistry) -> dict[str, Any]:
    """Every file the registry looked at: `agents` (loaded, with their fields), `left_out` (file and
    problems, each with its fix), `folders` (each named folder and whether it exists), and the counts."""
    files = registry.files()
    loaded = sorted((f.agent for f in files if f.agent), key=lambda d: d.name)
    left_out: dict[str, list[AgentFileProblem]] = {}
    for p in registry.problems():  # files, and folders that could not be walked
        left_out.setdefault(str(p.path), []).append(p)
    return {
        "agents": [_agent(d, registry.default_threshold) for d in loaded],
        "left_out": [
            {"file": path, "problems": [_problem(p) for p in found]} for path, found in left_out.items()
        ],
        "folders": [{"folder": str(f), "exists": f.is_dir()} for f in registry.agents_dirs],
        "loaded": len(loaded),
        "files": len(files),
    }


def _problem(p: AgentFileProblem) -> dict[str, str]:
    return {"message": p.message, "fix": p.fix}


def _agent(d: AgentDefinition, default_threshold: float) -> dict[str, Any]:
    return {
        "name": d.name,
        "description": d.description,
        "capabilities": [c.model_dump() for c in d.profile.capabilities],
        "threshold": d.profile.threshold_or(default_threshold),
        "runnable": d.runnable,
        "runner": d.runner_name,  # who runs a file with no handler; None for a command or an entrypoint
        "missing": d.runner_missing,  # what that runner lacks to start, and how to get it
        "command": d.command,
        "entrypoint": d.entrypoint,
        "timeout": d.timeout,
        "model": d.model,
        "tools": list(d.tools),
        "file": str(d.path),
        "warnings": [_problem(w) for w in d.warnings],
    }


def published(record: Recorded) -> Entry:
    """An entry as the version a topic watch found left it (its conflict, if any, is not the
    subscriber's concern): its document is what the watch prints."""
    from blackboard.domain.knowledge import rules as entry_rules
    from blackboard.domain.knowledge.entries import Entry

    event: Any = record.event  # an entry event: a topic watch finds nothing else
    return Entry(
        event.blackboard_id, event.key, event.version, entry_rules.version_of(event, record.position)
    )
