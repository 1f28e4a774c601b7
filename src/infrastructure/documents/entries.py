"""The knowledge's documents: an entry, its versions and candidates, a search hit, a board's usage and summary."""

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from blackboard.application.ports import Recorded
from blackboard.domain.knowledge.entries import ENTRY_TYPES
from blackboard.domain.signals import (
    NonEmpty,
)
from blackboard.infrastructure.documents.base import Document, Key, Number, Time

if TYPE_CHECKING:
    from blackboard.application import usage as application_usage
    from blackboard.application.knowledge import ports as application_search
    from blackboard.application.knowledge.queries import BoardSummary
    from blackboard.domain.knowledge import entries as domain

# ---------------------------------------------------------------- entries


class Version(Document):
    """One version of an entry key (the entry document of docs/knowledge.md, without `conflict`)."""

    blackboard_id: NonEmpty
    key: Key
    version: Annotated[int, Field(ge=1)]
    value: Any
    entry_type: Literal[ENTRY_TYPES]  # type: ignore[valid-type]
    author: NonEmpty
    section: str
    role: str
    label: str
    confidence: Annotated[float, Field(ge=0, le=1)] | None
    depends_on: list[Key]
    topics: list[str]
    meta: dict[str, Any]
    signal_id: str | None
    written_at: Time
    position: Annotated[int, Field(ge=1)]


class Candidates(Document):
    candidates: list[Version]


class Entry(Version):
    """The entry document that every interface (CLI --json, MCP tools, Python API) returns for one entry
    key: its accepted version and, while it is in conflict, the candidates (docs/knowledge.md, "The
    entry document"). Extra properties are allowed."""

    model_config = ConfigDict(title="Entry")

    conflict: Candidates | None


class SearchHit(Entry):
    """An entry a search found (the entry document) and its `score`: the store's rank, higher is better
    (SQLite: minus its bm25; PostgreSQL: ts_rank), comparable only within one search's hits."""

    model_config = ConfigDict(title="SearchHit")

    score: float


class HistoryVersion(Version):
    """A recorded version and what became of it: `status` accepted, candidate (with `holder`) or
    resolution (with `picked`, null for a merged value, and `rationale`)."""

    conflict: None
    status: Literal["accepted", "candidate", "resolution"]
    holder: str | None = None
    picked: int | None = None
    rationale: str | None = None

    @model_serializer(mode="wrap")
    def _its_own(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Only the fields of its status: `picked` is null for a merge, and absent elsewhere."""
        data = handler(self)
        for name in {"holder", "picked", "rationale"} - set(_OWN[self.status]):
            data.pop(name, None)
        return data


_OWN = {"accepted": (), "candidate": ("holder",), "resolution": ("picked", "rationale")}


def version(v: "domain.Version") -> Version:
    return Version(**_version_fields(v))


def entry(e: "domain.Entry") -> Entry:
    """A key now: its accepted version and, while in conflict, the candidates."""
    conflict = Candidates(candidates=[version(c) for c in e.candidates]) if e.candidates else None
    return Entry(**_version_fields(e.current), conflict=conflict)


def entries(items: Sequence["domain.Entry"]) -> list[Entry]:
    return [entry(e) for e in items]


def search_hits(items: Sequence["application_search.SearchHit"]) -> list[SearchHit]:
    """What a search found, best first: each entry document with its score."""
    return [_hit(hit.entry, hit.score) for hit in items]


def _hit(e: "domain.Entry", score: float) -> SearchHit:
    conflict = Candidates(candidates=[version(c) for c in e.candidates]) if e.candidates else None
    return SearchHit(**_version_fields(e.current), conflict=conflict, score=score)


def published(record: Recorded) -> Entry:
    """What a topic watch prints of a version it found."""
    return entry(published_entry(record))


def published_entry(record: Recorded) -> "domain.Entry":
    """An entry as the version a topic watch found left it (its conflict, if any, is not the
    subscriber's concern)."""
    from blackboard.domain.knowledge import rules as entry_rules
    from blackboard.domain.knowledge.entries import Entry as KeyState

    event: Any = record.event  # an entry event: a topic watch finds nothing else
    return KeyState(
        event.blackboard_id, event.key, event.version, entry_rules.version_of(event, record.position)
    )


def history_version(record: Recorded) -> HistoryVersion:
    """A recorded version as an entry document, saying what became of it (`status`)."""
    from blackboard.domain.events import EntryCandidateKept, EntryConflictResolved
    from blackboard.domain.knowledge import rules as entry_rules

    event: Any = record.event  # an entry event: a key's history holds nothing else
    fields = {**_version_fields(entry_rules.version_of(event, record.position)), "conflict": None}
    if isinstance(event, EntryCandidateKept):
        return HistoryVersion(**fields, status="candidate", holder=event.holder)
    if isinstance(event, EntryConflictResolved):
        return HistoryVersion(**fields, status="resolution", picked=event.picked, rationale=event.rationale)
    return HistoryVersion(**fields, status="accepted")


def _version_fields(v: "domain.Version") -> dict[str, Any]:
    return {
        "blackboard_id": v.blackboard_id,
        "key": v.key,
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
        "written_at": v.written_at,
        "position": v.position,
    }


class UsageTotal(Document):
    """Runs summed: `cost_usd` of those priced (null when runs ran and none was priced: unknown, not free),
    `unpriced_runs` how many were not."""

    runs: int
    input_tokens: int
    output_tokens: int
    cost_usd: Number | None
    unpriced_runs: int
    turns: int
    duration_ms: int


class BoardUsage(UsageTotal):
    """What runners' runs on a board cost: the total, and each agent's under `by_agent` (name order)."""

    by_agent: dict[str, UsageTotal]


def _total(t: "application_usage.UsageTotal") -> dict[str, Any]:
    return {
        "runs": t.runs,
        "input_tokens": t.input_tokens,
        "output_tokens": t.output_tokens,
        "cost_usd": None if (cost := t.known_cost_usd) is None else round(cost, 6),
        "unpriced_runs": t.unpriced_runs,
        "turns": t.turns,
        "duration_ms": t.duration_ms,
    }


def board_usage(by_agent: Mapping[str, "application_usage.UsageTotal"]) -> BoardUsage:
    """A board's total and each agent's; zeros when nothing ran."""
    from blackboard.application.usage import total

    return BoardUsage(
        **_total(total(by_agent.values())),
        by_agent={agent: UsageTotal(**_total(by_agent[agent])) for agent in sorted(by_agent)},
    )


class Summary(Document):
    """A board at a glance: entries by type and author, signals by status, open conflicts, the latest entry."""

    blackboard_id: str
    entries: int
    entries_by_type: dict[str, int]
    entries_by_author: dict[str, int]
    signals_by_status: dict[str, int]
    open_conflicts: list[str]
    latest_entry: Entry | None
    usage: BoardUsage  # what runners' runs on the board cost (docs/agents.md, "Runners")


def summary(s: "BoardSummary") -> Summary:
    counts = s.entries
    return Summary(
        blackboard_id=s.blackboard_id,
        entries=sum(counts.by_type.values()),
        entries_by_type=dict(sorted(counts.by_type.items())),
        entries_by_author=dict(sorted(counts.by_author.items())),
        signals_by_status=dict(sorted(s.signals_by_status.items())),
        open_conflicts=list(counts.in_conflict),
        latest_entry=entry(counts.latest) if counts.latest else None,
        usage=board_usage(s.usage),
    )
