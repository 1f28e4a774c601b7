"""Ports of the knowledge side: an entry key held in one transaction, and the entries' read side."""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from blackboard.application.ports import Recorded
from blackboard.domain.events import EntryEvent
from blackboard.domain.knowledge.entries import Entry
from blackboard.domain.signals import AgentSignal


class EntryTransaction(abc.ABC):
    """One write transaction holding one entry key (its own stream): writers of other keys, and of
    signals, never wait on it. `load` reads the key's state under the hold; `commit` appends its
    events at the version loaded and writes the key's row, in this transaction."""

    def __init__(self, blackboard_id: str, key: str) -> None:
        self.blackboard_id = blackboard_id
        self.key = key

    @abc.abstractmethod
    def load(self) -> Entry | None:
        """The key as the last commit left it (None: never written). From its read-model row, or
        while the read model is behind the log (a rebuild), from the key's events."""

    @abc.abstractmethod
    def commit(self, events: Sequence[EntryEvent], metadata: Mapping[str, Any]) -> list[Recorded]:
        """Append the events after the version `load` found (ConcurrencyConflict if it moved) and
        write the row they leave while the read model is live; returns them as stored."""

    @abc.abstractmethod
    def signal(self, signal_id: str) -> AgentSignal | None:
        """The signal of this board as its last commit left it (None: the board has no such signal),
        held until this transaction ends against the board's writers, so no completion, failure or
        expiry of it commits between this check and the entry's commit (key permissions)."""

    @abc.abstractmethod
    def claims_of(self, agent_id: str) -> list[AgentSignal]:
        """This board's signals CLAIMED by `agent_id` as its last commit left them, held as `signal`
        holds them (the claims whose key permissions bind the agent's writes)."""


@dataclass(frozen=True, slots=True)
class EntryFilter:
    """Current entries of one board matching every criterion that is set, in key order."""

    blackboard_id: str
    section: str | None = None
    role: str | None = None
    author: str | None = None
    label: str | None = None
    entry_type: str | None = None
    topic: str | None = None
    prefix: str | None = None
    conflicts_only: bool = False
    limit: int | None = None
    # the value, an object, has each of these top-level fields equal to the JSON scalar given (`_same`)
    value_equals: tuple[tuple[str, Any], ...] = ()

    def matches(self, entry: Entry) -> bool:
        """The same test in memory (time travel folds entries, then filters them here)."""
        v = entry.current
        wanted = {
            "section": self.section,
            "role": self.role,
            "author": self.author,
            "label": self.label,
            "entry_type": self.entry_type,
        }
        return (
            entry.blackboard_id == self.blackboard_id
            and all(want is None or getattr(v, name) == want for name, want in wanted.items())
            and (self.topic is None or self.topic in v.topics)
            and (self.prefix is None or entry.key.startswith(self.prefix))
            and (not self.conflicts_only or entry.in_conflict)
            and self.value_matches(entry)
        )

    def value_matches(self, entry: Entry) -> bool:
        value = entry.current.value
        return not self.value_equals or (
            isinstance(value, dict)
            and all(name in value and _same(value[name], want) for name, want in self.value_equals)
        )


@dataclass(frozen=True, slots=True)
class EntrySearch:
    """Current entries matching `criteria` (its limit unused) and holding every one of `words`; best first
    by the store's rank, ties in key order; `offset` skipped, at most `limit` given."""

    criteria: EntryFilter
    words: tuple[str, ...]
    limit: int
    offset: int = 0


def _same(have: Any, want: Any) -> bool:
    """JSON equality of two scalars: a boolean is no number, 1 is 1.0 (as both stores compare)."""
    if isinstance(have, bool) or isinstance(want, bool) or have is None or want is None:
        return type(have) is type(want) and have == want
    if isinstance(have, str) or isinstance(want, str):
        return isinstance(have, str) and isinstance(want, str) and have == want
    return isinstance(have, int | float) and have == want


@dataclass(frozen=True, slots=True)
class SearchHit:
    """An entry a search found and its rank's score: higher is better, comparable within one search."""

    entry: Entry
    score: float


@dataclass(frozen=True, slots=True)
class EntryCounts:
    """What `summary` tells of a board's entries."""

    by_type: dict[str, int]
    by_author: dict[str, int]
    in_conflict: list[str]  # keys, in key order
    latest: Entry | None  # the entry whose current version was written last


class EntryReadModel(abc.ABC):
    """The entries' read side: current entries from their rows, history from the event log."""

    @abc.abstractmethod
    def get(self, blackboard_id: str, key: str) -> Entry | None:
        """The key's current state (with its candidates while in conflict), None if never written."""

    def get_current(self, blackboard_id: str, key: str) -> tuple[Entry | None, bool]:
        """The key's row as `get` reads it, and whether the rows may be behind the log (True: catch up and
        read again). A store whose rows share the log's database tells both in one statement; this default
        does not know, so says True."""
        return None, True

    @abc.abstractmethod
    def find(self, criteria: EntryFilter) -> list[Entry]:
        """Current entries matching `criteria`, in key order."""

    def search(self, query: EntrySearch) -> list[SearchHit]:
        """The entries `query` finds, best first. This default reads every entry matching the criteria
        and ranks by how often the words occur; a store searches an index of its own."""
        from blackboard.application.knowledge.search import matches

        scored = [
            SearchHit(e, float(n))
            for e in self.find(replace(query.criteria, limit=None))
            if (n := matches(e, query.words))
        ]
        scored.sort(key=lambda hit: (-hit.score, hit.entry.key))
        return scored[query.offset : query.offset + query.limit]

    def search_current(self, query: EntrySearch) -> tuple[list[SearchHit], bool]:
        """`search`'s hits, and whether the rows may be behind the log (True: catch up and search again),
        as `get_current` tells it. This default does not know, so finds nothing and says True."""
        return [], True

    @abc.abstractmethod
    def records(self, blackboard_id: str, key: str | None = None, upto: int | None = None) -> list[Recorded]:
        """The entry events of the board (of one key, with `key`) at or below position `upto`, in
        position order: what time travel and `--history` replay."""

    def counts(self, blackboard_id: str) -> EntryCounts:
        """Counts of the board's current entries by type and author, its keys in conflict, its latest
        entry. This default reads every entry; a store counts where the rows are."""
        from collections import Counter

        found = self.find(EntryFilter(blackboard_id=blackboard_id))
        return EntryCounts(
            by_type=dict(Counter(e.current.entry_type for e in found)),
            by_author=dict(Counter(e.current.author for e in found)),
            in_conflict=[e.key for e in found if e.in_conflict],
            latest=max(found, key=lambda e: e.current.position, default=None),
        )

    def board_counts(self, blackboard_id: str | None = None) -> dict[str, tuple[int, int]]:
        """Each board's (or one board's) number of entries and of keys in conflict. This default
        knows only the board it is given; a store counts every board where the rows are."""
        if blackboard_id is None:
            raise NotImplementedError(f"{type(self).__name__} counts one board at a time")
        counts = self.counts(blackboard_id)
        entries = sum(counts.by_type.values())
        return {blackboard_id: (entries, len(counts.in_conflict))} if entries else {}
