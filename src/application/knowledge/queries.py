"""Read side of entries: current entries from their rows; history and time travel by replaying the
keys' own events from the log (never a board's signals)."""

from __future__ import annotations

import copy
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from blackboard.application.authority import Authority
from blackboard.application.callers import Caller
from blackboard.application.knowledge.commands import (
    EntryCriteria,
    ListEntries,
    ReadEntry,
    SearchEntries,
    SummarizeBoard,
)
from blackboard.application.knowledge.ports import (
    EntryCounts,
    EntryFilter,
    EntryReadModel,
    EntrySearch,
    SearchHit,
)
from blackboard.application.ports import Clock, Recorded, SignalReadModel
from blackboard.application.projection import Projector
from blackboard.application.usage import UsageTotal
from blackboard.domain.errors import NotFound, SignalNotFound
from blackboard.domain.events import EntryEvent
from blackboard.domain.knowledge import permissions as key_permissions
from blackboard.domain.knowledge import rules as entry_rules
from blackboard.domain.knowledge.entries import Entry, EntryNotFound


class BoardNotFound(NotFound):
    def __init__(self, blackboard_id: str) -> None:
        super().__init__(f"no blackboard {blackboard_id}: it holds no signal and no entry")


@dataclass(frozen=True, slots=True)
class BoardSummary:
    """What `summary` tells of a board: its entries' counts and its signals by status."""

    blackboard_id: str
    entries: EntryCounts
    signals_by_status: dict[str, int]
    usage: dict[str, UsageTotal] = field(default_factory=dict)  # runners' runs, per agent


class KnowledgeQueries:
    def __init__(
        self,
        entries: EntryReadModel,
        signals: SignalReadModel,
        projector: Projector | None = None,
        clock: Clock | None = None,
        claim_timeout: timedelta | None = None,
        authority: Authority | None = None,
    ) -> None:
        self._authority = authority or Authority()  # a caller confined to a board reads no other (reach)
        self._entries = entries
        self._signals = signals
        self._projector = projector
        self._clock = clock
        self._claim_timeout = claim_timeout  # a claim older than this is lost (None: leases are not checked)

    def acting(self, caller: Caller) -> KnowledgeQueries:
        """These queries for one caller, whoever the process is: an MCP session's."""
        clone = copy.copy(self)
        clone._authority = self._authority.acting(caller)
        return clone

    def read(self, query: ReadEntry) -> Entry:
        """The key now, or (`at`) as it was right after that log position. A read naming a signal with
        key permissions is checked against them first (KeyPermissionDenied); it writes nothing, so
        the signal's current row is enough."""
        self._authority.reach(query.blackboard_id)
        if query.signal_id is not None:
            self._check(query)
        if query.at is None:  # the row and the catch-up's check in one read; a second only when behind
            entry, behind = self._entries.get_current(query.blackboard_id, query.key)
            if behind:
                self._catch_up()
                entry = self._entries.get(query.blackboard_id, query.key)
        else:
            entry = entry_rules.replay(
                _pairs(self._entries.records(query.blackboard_id, query.key, query.at))
            )
        if entry is None:
            raise EntryNotFound(query.blackboard_id, query.key, query.at)
        return entry

    def history(self, query: ReadEntry) -> list[Recorded]:
        """Every recorded version of the key (accepted, candidate, resolution), oldest first: its events
        with their positions."""
        self._authority.reach(query.blackboard_id)
        if query.signal_id is not None:
            self._check(query)
        records = self._entries.records(query.blackboard_id, query.key, query.at)
        if not records:
            raise EntryNotFound(query.blackboard_id, query.key, query.at)
        return records

    def _check(self, query: ReadEntry) -> None:
        self._catch_up()  # the signal's row as its last commit left it
        signal = self._signals.get(query.signal_id) if query.signal_id else None
        if signal is None or signal.blackboard_id != query.blackboard_id:
            raise SignalNotFound(str(query.signal_id), query.blackboard_id)
        now = self._clock.now() if self._clock else datetime.now(UTC)
        key_permissions.check(
            signal,
            "read",
            query.key,
            query.reader or "",
            query.token,
            now,
            self._claim_timeout or timedelta.max,
        )

    def entries(self, query: ListEntries) -> list[Entry]:
        self._authority.reach(query.blackboard_id)
        criteria = _criteria(query, query.limit)
        if query.at is None:
            self._catch_up()
            return self._entries.find(criteria)
        return [e for e in self.board_at(query.blackboard_id, query.at) if criteria.matches(e)][: query.limit]

    def search(self, query: SearchEntries) -> list[SearchHit]:
        """The board's current entries holding every word of the query, best first (the store's rank,
        ties in key order), filtered as `entries` filters them."""
        self._authority.reach(query.blackboard_id)
        asked = EntrySearch(_criteria(query, None), query.words(), query.limit, query.offset)
        hits, behind = self._entries.search_current(asked)  # the hits and the catch-up's check in one read
        if behind:  # a second only when behind, as `read`
            self._catch_up()
            hits = self._entries.search(asked)
        return hits

    def board_at(self, blackboard_id: str, position: int) -> list[Entry]:
        """Every entry of the board as it was right after `position`, in key order."""
        self._authority.reach(blackboard_id)
        streams: dict[str, list[Recorded]] = defaultdict(list)
        for record in self._entries.records(blackboard_id, upto=position):
            streams[record.event.key].append(record)  # type: ignore[attr-defined] - entry events only
        entries = (entry_rules.replay(_pairs(records)) for _, records in sorted(streams.items()))
        return [e for e in entries if e is not None]

    def summary(self, query: SummarizeBoard) -> BoardSummary:
        self._authority.reach(query.blackboard_id)
        self._catch_up()
        counts = self._entries.counts(query.blackboard_id)
        signals = self._signals.count_by_status(query.blackboard_id)
        if counts.latest is None and not signals:
            raise BoardNotFound(query.blackboard_id)
        return BoardSummary(
            query.blackboard_id,
            counts,
            dict(signals),
            # what runners' runs on the board cost, per agent (docs/agents.md, "Runners")
            self._signals.usage_totals(query.blackboard_id).get(query.blackboard_id, {}),
        )

    def _catch_up(self) -> None:
        if self._projector is not None:
            self._projector.catch_up()  # rows of events that came in without them (a rebuild, an import)


def _criteria(query: EntryCriteria, limit: int | None) -> EntryFilter:
    return EntryFilter(
        blackboard_id=query.blackboard_id,
        section=query.section,
        role=query.role,
        author=query.author,
        label=query.label,
        entry_type=query.entry_type,
        topic=query.topic,
        prefix=query.prefix,
        conflicts_only=query.conflicts,
        limit=limit,
        value_equals=tuple(sorted((query.filter or {}).items())),
    )


def _pairs(records: list[Recorded]) -> list[tuple[EntryEvent, int]]:
    return [(r.event, r.position) for r in records if isinstance(r.event, EntryEvent)]
