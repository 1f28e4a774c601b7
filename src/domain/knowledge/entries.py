"""Entries: what agents know, under named keys. A key's state, the rules of a write, and their fold.

Every key is its own stream. Its state (`Entry`) is the current version and, while the key is in
conflict, the candidates. Decisions (`write`, `resolve`) check a rule and return the one event to
record; `evolve` is the only place state changes, and replaying a key's events through it gives
the same state again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from blackboard.domain.errors import NotFound, RuleViolation

ENTRY_TYPES = (
    "query",
    "finding",
    "plan",
    "analysis",
    "recommendation",
    "decision",
    "artifact",
    "final",
    "note",
)
KEY_PATTERN = re.compile(r"[A-Za-z0-9_.:/-]{1,200}")  # keys and topic names
MAX_VALUE_BYTES = 1024 * 1024  # a value's JSON, UTF-8: larger values belong in an artifact file
# an entry's content fields, the one list of them: what a version holds, what a write event carries of it
# (rules.version_of, rules.content_of), and what a write command stores (application WriteEntry.content)
CONTENT = (
    "value",
    "entry_type",
    "author",
    "section",
    "role",
    "label",
    "confidence",
    "depends_on",
    "topics",
    "meta",
    "signal_id",
)


@dataclass(frozen=True, slots=True)
class Version:
    """One recorded version of a key (accepted, a candidate, or a resolution): content and provenance."""

    blackboard_id: str
    key: str
    version: int
    value: Any
    author: str
    written_at: datetime
    position: int = 0  # the global log position of the event that wrote it (0 until stored)
    entry_type: str = "note"
    section: str = "default"
    role: str = "assistant"
    label: str = "unlabelled"
    confidence: float | None = None
    depends_on: tuple[str, ...] = ()
    topics: tuple[str, ...] = ()
    meta: dict[str, Any] | None = None
    signal_id: str | None = None


@dataclass(frozen=True, slots=True)
class Entry:
    """A key's state: its stream `version` (the last recorded write of any kind), the `current`
    accepted version, and while in conflict the `candidates` (the holder's version first)."""

    blackboard_id: str
    key: str
    version: int
    current: Version
    candidates: tuple[Version, ...] = ()

    @property
    def in_conflict(self) -> bool:
        return bool(self.candidates)


class KeyInConflict(RuleViolation):
    """The write was kept as a candidate, not accepted: the key is in conflict. It *was* recorded."""

    def __init__(self, entry: Entry, candidate: int) -> None:
        holder = entry.current
        super().__init__(
            f"{entry.key} is held by {holder.author} (version {holder.version}) with a different value; yours "
            f"is kept as candidate version {candidate} and the key is in conflict until someone runs "
            f"`blackboard resolve {entry.key} --pick VERSION | --value JSON --rationale TEXT`"
        )
        self.entry = entry
        self.candidate = candidate


class StaleVersion(RuleViolation):
    def __init__(self, key: str, replaces: int, version: int) -> None:
        super().__init__(
            f"--replaces: {key} is at version {version}, not {replaces}; "
            "a compare-and-set writes only over the current version (nothing was written)"
        )


class NotInConflict(RuleViolation):
    def __init__(self, key: str) -> None:
        super().__init__(f"{key} is not in conflict; only a key in conflict can be resolved")


class EntryNotFound(NotFound):
    def __init__(self, blackboard_id: str, key: str, at: int | None = None) -> None:
        when = f" at position {at}" if at is not None else ""
        super().__init__(f"no entry {key} on blackboard {blackboard_id}{when}")


class CandidateNotFound(NotFound):
    def __init__(self, key: str, pick: int, versions: list[int]) -> None:
        super().__init__(
            f"--pick: {key} has no candidate version {pick}; its candidates are "
            + ", ".join(map(str, versions))
        )
