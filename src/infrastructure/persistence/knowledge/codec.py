"""Turning an entry key's state into its read-model row and back."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from blackboard.domain.knowledge.entries import Entry, Version
from blackboard.infrastructure.persistence.codec import read_json


def entry_row(entry: Entry) -> dict[str, Any]:
    current = entry.current
    state = {
        "version": entry.version,
        "current": _version(current),
        "candidates": [_version(c) for c in entry.candidates],
    }
    return {
        "blackboard_id": entry.blackboard_id,
        "key": entry.key,
        "version": entry.version,
        "current_version": current.version,
        "author": current.author,
        "entry_type": current.entry_type,
        "section": current.section,
        "role": current.role,
        "label": current.label,
        "signal_id": current.signal_id,
        "position": current.position,
        "candidates": len(entry.candidates),
        "state_json": json.dumps(state, separators=(",", ":"), ensure_ascii=False),
    }


def topic_rows(entry: Entry) -> list[dict[str, str]]:
    return [
        {"blackboard_id": entry.blackboard_id, "key": entry.key, "topic": t}
        for t in dict.fromkeys(entry.current.topics)
    ]


def entry_from_row(row: Any) -> Entry:
    state = read_json(row.state_json)
    return Entry(
        row.blackboard_id,
        row.key,
        state["version"],
        _from(row, state["current"]),
        tuple(_from(row, c) for c in state["candidates"]),
    )


def _version(v: Version) -> dict[str, Any]:
    """A version in the row's state (the board and key are the row's own columns)."""
    return {
        "version": v.version,
        "value": v.value,
        "entry_type": v.entry_type,
        "author": v.author,
        "section": v.section,
        "role": v.role,
        "label": v.label,
        "confidence": v.confidence,
        "depends_on": list(v.depends_on),
        "topics": list(v.topics),
        "meta": dict(v.meta or {}),
        "signal_id": v.signal_id,
        "written_at": v.written_at.isoformat(),
        "position": v.position,
    }


def _from(row: Any, data: dict[str, Any]) -> Version:
    """A version from its part of the row's state (a dict of its own, just decoded: its values are converted
    in place, which spares a copy of it for every row a search or a listing reads)."""
    data["written_at"] = datetime.fromisoformat(data["written_at"])
    data["depends_on"] = tuple(data["depends_on"])
    data["topics"] = tuple(data["topics"])
    return Version(**data, blackboard_id=row.blackboard_id, key=row.key)
