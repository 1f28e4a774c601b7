"""The documents the Python API returns, typed: `model_dump(mode="json")` is what the CLI prints with `--json`.

Each model is validated from the document the CLI prints (infrastructure/documents.py), so the two
cannot drift apart; extra fields pass through, as the contracts allow. Times are `datetime`s that
dump as the CLI writes them (`isoformat()`).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Annotated, Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, PlainSerializer, RootModel

Time = Annotated[
    datetime, PlainSerializer(lambda value: value.isoformat(), return_type=str, when_used="json")
]
Number = int | float  # as written: a file's `timeout: 60` stays 60, as the CLI prints it
T = TypeVar("T", bound=BaseModel)


class Document(BaseModel):
    model_config = ConfigDict(frozen=True, extra="allow")


class Payload(Document):
    ps_id: str
    entry_id: str
    topic: str
    prompt: str = ""
    context: dict[str, Any] = {}


class Result(Document):
    artifact_path: str | None = None
    knowledge_items: list[str] = []
    error: str | None = None


class Usage(Document):
    """What a runner's run of a signal cost (docs/agents.md, "Runners")."""

    runner: str
    model: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: Number | None = None
    turns: int = 0
    duration_ms: int = 0
    session_id: str | None = None
    transcript_path: str | None = None


class UsageTotal(Document):
    """Runs summed: `cost_usd` of those priced, `unpriced_runs` how many were not."""

    runs: int
    input_tokens: int
    output_tokens: int
    cost_usd: Number
    unpriced_runs: int
    turns: int
    duration_ms: int


class BoardUsage(UsageTotal):
    by_agent: dict[str, UsageTotal]


class Signal(Document):
    """One AgentSignal (contracts/agent-signal.schema.json)."""

    signal_id: str
    blackboard_id: str
    signal_type: str
    payload: Payload
    target_capabilities: list[str]
    posted_by: str
    claimed_by: str | None
    status: str  # POSTED, CLAIMED, COMPLETED, FAILED, EXPIRED or UNCLAIMED
    created_at: Time
    claimed_at: Time | None
    completed_at: Time | None
    result: Result | None
    version: int
    after: list[str]
    waiting_for: list[str]
    claimable_since: Time | None
    dedupe_key: str | None
    retry_of: str | None
    lease_renewed_at: Time | None
    read_keys: list[str]
    write_keys: list[str]
    budget_usd: Number | None = None
    usage: Usage | None = None


class WatchedSignal(Signal):
    """A signal a watch found, and the log position to pass as `since` to see the next one."""

    position: int


class Version(Document):
    """One version of an entry key (the entry document of contracts/knowledge.md, without `conflict`)."""

    blackboard_id: str
    key: str
    version: int
    value: Any
    entry_type: str
    author: str
    section: str
    role: str
    label: str
    confidence: Number | None
    depends_on: list[str]
    topics: list[str]
    meta: dict[str, Any]
    signal_id: str | None
    written_at: Time
    position: int


class Candidates(Document):
    candidates: list[Version]


class Entry(Version):
    """A key now: its accepted version, and while it is in conflict, the candidates."""

    conflict: Candidates | None


class HistoryVersion(Version):
    """A recorded version and what became of it: `status` accepted, candidate (with `holder`) or
    resolution (with `picked` and `rationale`)."""

    conflict: None
    status: str


class Match(Document):
    agent: str
    score: Number
    threshold: Number
    passes: bool


class FileProblem(Document):
    message: str
    fix: str


class Agent(Document):
    name: str
    description: str | None
    capabilities: list[dict[str, Any]]
    threshold: Number
    runnable: bool
    runner: str | None = None
    missing: str | None = None
    command: str | None
    entrypoint: str | None
    timeout: Number | None
    model: str | None
    tools: list[str]
    file: str
    warnings: list[FileProblem]


class LeftOut(Document):
    file: str
    problems: list[FileProblem]


class Folder(Document):
    folder: str
    exists: bool


class Agents(Document):
    """Every file the registry looked at: the agents that loaded, the files left out and why."""

    agents: list[Agent]
    left_out: list[LeftOut]
    folders: list[Folder]
    loaded: int
    files: int


class Event(Document):
    position: int
    event_type: str
    stream_id: str
    version: int
    event_id: str
    schema_version: int
    occurred_at: Time
    recorded_at: Time
    data: dict[str, Any]
    metadata: dict[str, Any]


class Summary(Document):
    blackboard_id: str
    entries: int
    entries_by_type: dict[str, int]
    entries_by_author: dict[str, int]
    signals_by_status: dict[str, int]
    open_conflicts: list[str]
    latest_entry: Entry | None
    usage: BoardUsage


class Listing(RootModel[list[T]], Generic[T]):
    """A list of documents: iterate it, index it, take its `len`; it dumps as the CLI's JSON array."""

    model_config = ConfigDict(frozen=True)

    def __iter__(self) -> Iterator[T]:  # type: ignore[override] - the items, not the model's fields
        return iter(self.root)

    def __len__(self) -> int:
        return len(self.root)

    def __getitem__(self, index: int) -> T:
        return self.root[index]


Signals = Listing[Signal]
Entries = Listing[Entry]
History = Listing[HistoryVersion]
Ranking = Listing[Match]
Events = Listing[Event]
