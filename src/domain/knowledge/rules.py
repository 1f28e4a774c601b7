"""The rules of writing an entry key, and the fold of its events (the only place its state changes).

- The first write of a key is version 1.
- A later write is the next version when it names `replaces` at the key's version (compare-and-set,
  any author), or comes from the current version's author, or carries a JSON-equal value.
- Any other write (another author, another value) is kept as a candidate and the key is in conflict;
  while it is, every write is kept as a candidate, until `resolve` records a new version.
- `replaces` that is not the key's version is refused, recording nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import datetime
from typing import Any

from blackboard.domain.errors import RuleViolation
from blackboard.domain.events import EntryCandidateKept, EntryConflictResolved, EntryEvent, EntryWritten
from blackboard.domain.knowledge.entries import (
    CONTENT,
    CandidateNotFound,
    Entry,
    EntryNotFound,
    NotInConflict,
    StaleVersion,
    Version,
)


def write(
    entry: Entry | None,
    blackboard_id: str,
    key: str,
    content: Mapping[str, Any],
    at: datetime,
    replaces: int | None = None,
) -> EntryEvent:
    """The event a write records; raises StaleVersion when `replaces` is not the key's version."""
    version = entry.version if entry is not None else 0
    if replaces is not None and replaces != version:
        raise StaleVersion(key, replaces, version)
    fields = {
        **content,
        "blackboard_id": blackboard_id,
        "key": key,
        "version": version + 1,
        "occurred_at": at,
    }
    if entry is None:
        return EntryWritten(**fields)
    holder = entry.current
    if not entry.in_conflict and (
        replaces is not None
        or content["author"] == holder.author
        or json_equal(content.get("value"), holder.value)
    ):
        return EntryWritten(**fields)
    return EntryCandidateKept(**fields, holder=holder.author)


def resolve(
    entry: Entry,
    author: str,
    rationale: str,
    at: datetime,
    pick: int | None = None,
    value: Any = None,
    topics: tuple[str, ...] | None = None,
) -> EntryConflictResolved:
    """End a conflict with the candidate version `pick`, or (no pick) with a merged `value` that keeps
    the holder's type and namespace; either way `author` writes the new version. It is published to
    `topics` when given, else to the topics the key had (its holder's), and a picked candidate's too:
    resolving never takes the key off a topic its followers read it by."""
    if not entry.in_conflict:
        raise NotInConflict(entry.key)
    if pick is not None:
        chosen = next((c for c in entry.candidates if c.version == pick), None)
        if chosen is None:
            raise CandidateNotFound(entry.key, pick, [c.version for c in entry.candidates])
        content = content_of(chosen)
    else:
        content = {**content_of(entry.current), "value": value}
    kept = (*entry.current.topics, *content["topics"]) if topics is None else topics
    return EntryConflictResolved(
        **{**content, "author": author, "topics": tuple(dict.fromkeys(kept))},
        blackboard_id=entry.blackboard_id,
        key=entry.key,
        version=entry.version + 1,
        occurred_at=at,
        picked=pick,
        rationale=rationale,
    )


def check_recorded(entry: Entry | None, event: EntryEvent) -> None:
    """Raise the broken rule's error unless `write` or `resolve` could have recorded `event` from
    `entry` (an import replays each key through here). A write's `replaces` is not recorded, so an
    accepted version from any author is one a compare-and-set could have written."""
    if isinstance(event, EntryConflictResolved):
        if entry is None:
            raise EntryNotFound(event.blackboard_id, event.key)
        if not entry.in_conflict:
            raise NotInConflict(event.key)
        if event.picked is not None and event.picked not in [c.version for c in entry.candidates]:
            raise CandidateNotFound(event.key, event.picked, [c.version for c in entry.candidates])
    elif isinstance(event, EntryCandidateKept):
        if entry is None:
            raise NotRecordable(event.key, "a first write is accepted, never kept as a candidate")
        if event.holder != entry.current.author:
            raise NotRecordable(
                event.key,
                f"its candidate names {event.holder} as holder, but {entry.current.author} holds it",
            )
        if not entry.in_conflict and event.author == entry.current.author:
            raise NotRecordable(
                event.key, "a write by the key's holder is its next version, never a candidate"
            )
    elif entry is not None and entry.in_conflict:
        raise NotRecordable(event.key, "while it is in conflict every write is kept as a candidate")


class NotRecordable(RuleViolation):
    def __init__(self, key: str, why: str) -> None:
        super().__init__(f"{key}: {why}")


def evolve(entry: Entry | None, event: EntryEvent, position: int = 0) -> Entry:
    """The key's state after `event`, stored at log `position`."""
    written = version_of(event, position)
    if isinstance(event, EntryCandidateKept):
        if entry is None:
            raise ValueError(f"{event.key}: a candidate cannot be the first write of a key")
        held = entry.candidates or (entry.current,)
        return replace(entry, version=event.version, candidates=(*held, written))
    if isinstance(event, EntryWritten | EntryConflictResolved):
        return Entry(event.blackboard_id, event.key, event.version, written)
    raise TypeError(f"entries cannot apply {type(event).__name__}")


def replay(events: Iterable[tuple[EntryEvent, int]]) -> Entry | None:
    """A key's state after its events (each with its log position), in stream order."""
    entry = None
    for event, position in events:
        entry = evolve(entry, event, position)
    return entry


def version_of(event: EntryEvent, position: int = 0) -> Version:
    return Version(
        blackboard_id=event.blackboard_id,
        key=event.key,
        version=event.version,
        written_at=event.occurred_at,
        position=position,
        **{name: getattr(event, name) for name in CONTENT},
    )


def content_of(version: Version) -> dict[str, Any]:
    return {name: getattr(version, name) for name in CONTENT}


def json_equal(a: Any, b: Any) -> bool:
    """Equal as JSON values: objects key by key, arrays item by item, numbers by value (1 == 1.0),
    but `true` is not `1`, as Python's own == would have it."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list | tuple) and isinstance(b, list | tuple):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and a == b
