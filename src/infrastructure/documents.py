"""The JSON documents every interface returns (the CLI's `--json`, the Python API), built here once.

Each interface renders or types these documents, never builds its own, so the same call gives the
same document whichever interface made it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from blackboard.application.ports import Recorded
from blackboard.domain.capabilities import Volunteer
from blackboard.domain.signals import AgentSignal

if TYPE_CHECKING:
    from blackboard.domain.entries import Entry
    from blackboard.infrastructure.agents.registry import FrontmatterAgentRegistry


def signal(item: AgentSignal) -> dict[str, Any]:
    """The AgentSignal document of contracts/agent-signal.schema.json."""
    return item.to_document()


def watched(item: AgentSignal, position: int) -> dict[str, Any]:
    """A signal a watch found, with the log position to pass as `since` next time."""
    return {**item.to_document(), "position": position}


def ranking(volunteers: Sequence[Volunteer]) -> list[dict[str, Any]]:
    """The registry's agents ranked for a signal, best first, and who may claim it."""
    return [{"agent": v.agent.agent_id, "score": v.score, "threshold": v.threshold, "passes": v.passes}
            for v in volunteers]


def events(records: Sequence[Recorded]) -> list[dict[str, Any]]:
    """Stored events with their global positions, as `blackboard events` prints them."""
    return [
        {
            "position": r.position,
            "event_type": r.event.event_type,
            "stream_id": r.event.stream_id,  # a board's, or an entry key's (`<board>\x1f<key>`)
            "version": r.event.version,
            "event_id": r.event.event_id,
            "schema_version": type(r.event).schema_version,
            "occurred_at": r.event.occurred_at.isoformat(),
            "recorded_at": r.recorded_at.isoformat(),
            "data": r.event.data(),
            "metadata": dict(r.metadata),
        }
        for r in records
    ]


def agents(registry: FrontmatterAgentRegistry) -> list[dict[str, Any]]:
    """The registry's agents that loaded (its bad files are `registry.problems()`)."""
    return [
        {
            "name": d.profile.agent_id,
            "description": d.description,
            "capabilities": [c.model_dump() for c in d.profile.capabilities],
            "threshold": d.profile.threshold_or(registry.default_threshold),
            "command": d.command,
            "timeout": d.timeout,
            "file": str(d.path),
        }
        for d in registry.definitions()
    ]


def published(record: Recorded) -> Entry:
    """An entry as the version a topic watch found left it (its conflict, if any, is not the
    subscriber's concern): its document is what the watch prints."""
    from blackboard.domain import entry_rules
    from blackboard.domain.entries import Entry

    event: Any = record.event  # an entry event: a topic watch finds nothing else
    return Entry(event.blackboard_id, event.key, event.version, entry_rules.version_of(event, record.position))
