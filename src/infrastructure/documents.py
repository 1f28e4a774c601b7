"""The JSON documents every interface prints or returns, defined once: pydantic models, and the functions
that build them from the core's values.

The CLI prints `model_dump(mode="json")` of these (`--json`), the MCP tools return it, the web view sends
it, and the Python API returns the models themselves (`blackboard.models` re-exports them), so the same
call gives the same document whichever interface made it. `schemas/*.json` are generated from the models
(`make schemas`, tools/schemas.py; a test holds the files to them). A field that some documents carry
and others do not (`overdue_since`, `waiting`, `warnings`) is left out when it has no value, never null. Extra
properties pass through, as the contracts allow. Times are `datetime`s that dump as `isoformat()`.
"""

from collections.abc import Collection, Iterator, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Generic, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    RootModel,
    SerializerFunctionWrapHandler,
    WithJsonSchema,
    model_serializer,
)

from blackboard.application.budgets import spent_of
from blackboard.application.ports import Recorded
from blackboard.domain.capabilities import Volunteer
from blackboard.domain.knowledge.entries import ENTRY_TYPES, KEY_PATTERN
from blackboard.domain.limits import Budget, Spent
from blackboard.domain.signals import (
    MAX_LABELS,
    AgentSignal,
    EntryId,
    Label,
    NonEmpty,
    SignalIdText,
    SignalStatus,
    SignalType,
    Topic,
)
from blackboard.infrastructure.waiting import waiting_for_a_worker

if TYPE_CHECKING:
    from blackboard.application import usage as application_usage
    from blackboard.application.knowledge import ports as application_search
    from blackboard.application.knowledge.queries import BoardSummary
    from blackboard.application.queries import BlackboardQueries
    from blackboard.application.status import BoardStatus
    from blackboard.domain.flows import FlowCounts, FlowProgress
    from blackboard.domain.knowledge import entries as domain
    from blackboard.domain.presence import WorkerPresence
    from blackboard.infrastructure.agents.parsing import AgentDefinition, AgentFileProblem
    from blackboard.infrastructure.agents.registry import FrontmatterAgentRegistry

DATE_TIME = {"type": "string", "format": "date-time"}
TEXTS = {"type": "array", "items": {"type": "string"}}
TEXT = {"type": "string"}
Time = Annotated[
    datetime,
    PlainSerializer(lambda value: value.isoformat(), return_type=str, when_used="json"),
    WithJsonSchema(DATE_TIME),
]
Number = int | float  # as written: a file's `timeout: 60` stays 60, as the CLI prints it
Key = Annotated[str, Field(pattern=f"^{KEY_PATTERN.pattern}$")]
T = TypeVar("T", bound=BaseModel)


def _absent(value: Any) -> bool:
    """For a field left out of the document when it has no value (its schema: the value's type alone)."""
    return value is None


class Document(BaseModel):
    model_config = ConfigDict(frozen=True, extra="allow", defer_build=True)


# ---------------------------------------------------------------- signals


class Payload(Document):
    ps_id: NonEmpty
    entry_id: EntryId
    topic: Topic
    prompt: str
    context: dict[str, Any]


class Result(Document):
    """What the agent handed back. Without an artifact (a failure, an expiry, knowledge items alone)
    `artifact_path` is left out, not null: seed 003's schema (section 9.1) wants a string there."""

    artifact_path: Annotated[str | None, WithJsonSchema({"type": "string"})] = Field(
        default=None, exclude_if=_absent
    )
    knowledge_items: list[str]
    error: str | None


class Usage(Document):
    """What a runner's run of a signal cost (docs/agents.md, "Runners"): recorded with its completion or
    failure; `transcript_path` links the run's transcript."""

    runner: str
    model: str | None
    input_tokens: int
    output_tokens: int
    cost_usd: Number | None
    turns: int
    duration_ms: int
    session_id: str | None
    transcript_path: str | None


class Attempt(Document):
    """An attempt at a signal that failed and was retried (docs/control.md, "Retries"); the last attempt's
    outcome is the signal's `result`."""

    attempt: Annotated[int, Field(ge=1)]
    claimed_by: str | None  # whose attempt it was
    error: str  # what ended it
    ended_at: Time
    retry_at: Time  # the next attempt was not claimable before then
    expired: bool  # its claim ran out (a worker that died), rather than its claimer failing it


class Signal(Document):
    """The document that every interface (CLI --json, MCP tools, Python API) returns for one signal
    (schemas/agent-signal.schema.json, generated from this model; field names and constraints follow
    section 9.1 of the main design). Extra properties are allowed."""

    model_config = ConfigDict(title="AgentSignal")

    signal_id: SignalIdText
    blackboard_id: NonEmpty
    signal_type: SignalType
    payload: Payload
    target_capabilities: Annotated[list[NonEmpty], Field(min_length=1)]
    posted_by: NonEmpty
    claimed_by: str | None
    status: SignalStatus
    created_at: Time
    claimed_at: Time | None
    completed_at: Time | None
    result: Result | None
    version: Annotated[int, Field(ge=1)]
    after: list[str]
    waiting_for: list[str]  # upstreams not yet completed
    claimable_since: Time | None
    dedupe_key: str | None
    retry_of: str | None
    lease_renewed_at: Time | None
    read_keys: list[str]
    write_keys: list[str]
    budget_usd: Number | None = None  # what a runner's run of it may spend (`post --budget-usd`)
    usage: Usage | None = None  # what a runner's run of it cost, once it ended
    priority: Annotated[int, Field(ge=0, le=4)] = 2  # 0 (P0, most urgent) to 4: claimed most urgent first
    not_before: Time | None = None  # not claimable before then (`post --not-before`, or a retry's wait)
    attempt: Annotated[int, Field(ge=1)] = 1  # the attempt under way, or the next one
    # the post's --max-attempts, else the limit of the claimer's policy once an attempt failed; null: not known yet
    max_attempts: Annotated[int | None, Field(ge=1)] = None
    attempts: list[Attempt] = Field(default_factory=list)  # the attempts that failed and were retried
    gate: bool = False  # a person decides it (`approve`, `reject`); no agent claims it
    # its own timeout (`post --timeout`): a gate expires this long after it opens; another signal once it has
    # waited this long with no live worker that fits it; null: none (the default post timeout, off unless set)
    timeout_s: Number | None = None
    decided_by: str | None = None  # who ended it on purpose: approved or rejected the gate, or cancelled it
    decision_note: str | None = None  # the approval's note, the rejection's or the cancel's reason
    flow_id: str | None = None  # the flow it is a step of (`blackboard flow run`); null: none
    step_id: str | None = None  # its step's id in that flow
    labels: list[Label] = Field(default_factory=list, max_length=MAX_LABELS)  # `post --label`; []: none
    # past its deadline, not yet expired (BlackboardQueries.overdue): the deadline
    overdue_since: Annotated[Time | None, WithJsonSchema(DATE_TIME)] = Field(default=None, exclude_if=_absent)
    # claimable, and no live worker fits it (BlackboardQueries.waiting_for_workers): `a worker that fits: T`
    waiting: Annotated[str | None, WithJsonSchema(TEXT)] = Field(default=None, exclude_if=_absent)
    # a post that only agents with nothing to run fit
    warnings: Annotated[list[str] | None, WithJsonSchema(TEXTS)] = Field(default=None, exclude_if=_absent)


class WatchedSignal(Signal):
    """A signal a watch found, and the log position to pass as `since` to see the next one."""

    position: int


def signal(
    item: AgentSignal, overdue: Mapping[str, datetime] | None = None, waiting: Collection[str] = ()
) -> Signal:
    """One signal. A signal in `overdue` (BlackboardQueries.overdue: past its deadline, not yet expired)
    also carries `overdue_since`, its deadline (docs/agents.md: "Leases, timeouts and expiry"); one in
    `waiting` (BlackboardQueries.waiting_for_workers), `waiting`: what it waits for."""
    return Signal(
        **_signal_fields(item),
        overdue_since=(overdue or {}).get(item.signal_id),
        waiting=waiting_for_a_worker(item.target_capabilities) if item.signal_id in waiting else None,
    )


def signals_now(items: Sequence[AgentSignal], queries: "BlackboardQueries") -> list[Signal]:
    """Signals as they are now, the overdue ones marked, and those waiting for a worker that fits."""
    overdue, waiting = queries.overdue(items), queries.waiting_for_workers(items)
    return [signal(s, overdue, waiting) for s in items]


def posted(
    item: AgentSignal, registry: "FrontmatterAgentRegistry", queries: "BlackboardQueries | None" = None
) -> Signal:
    """A signal just posted; `warnings` when only agents with nothing to run fit it, or when it waits for a
    worker that fits (none is live: `waiting` too, and which agents a worker may be started for)."""
    from blackboard.infrastructure.agents.runnable import unrunnable_warning, unstarted_warning

    waiting = queries.waiting_for_workers([item]) if queries is not None else set()
    # one warning: when no agent a worker can run fits it, that one says it waits (and why none can start)
    warning = unrunnable_warning(item, registry) or (unstarted_warning(item, registry) if waiting else None)
    return signal(item, None, waiting).model_copy(update={"warnings": None if warning is None else [warning]})


def watched(item: AgentSignal, position: int) -> WatchedSignal:
    """A signal a watch found, with the log position to pass as `since` next time."""
    return WatchedSignal(**_signal_fields(item), position=position)


def _signal_fields(s: AgentSignal) -> dict[str, Any]:
    result = s.result
    return {
        "signal_id": s.signal_id,
        "blackboard_id": s.blackboard_id,
        "signal_type": s.signal_type,
        "payload": Payload(**s.payload.model_dump(exclude={"labels"})),  # its labels: `labels`
        "target_capabilities": list(s.target_capabilities),
        "posted_by": s.posted_by,
        "claimed_by": s.claimed_by,
        "status": s.status,
        "created_at": s.created_at,
        "claimed_at": s.claimed_at,
        "completed_at": s.completed_at,
        "result": None
        if result is None
        else Result(
            artifact_path=result.artifact_path,
            knowledge_items=list(result.knowledge_items),
            error=result.error,
        ),
        "version": s.version,
        "after": list(s.after),
        "waiting_for": sorted(s.waiting_for),
        "claimable_since": s.claimable_since,
        "dedupe_key": s.dedupe_key,
        "retry_of": s.retry_of,
        "lease_renewed_at": s.renewed_at,
        "read_keys": list(s.read_keys),
        "write_keys": list(s.write_keys),
        "budget_usd": s.budget_usd,
        "usage": None if s.usage is None else Usage(**s.usage.model_dump()),
        "priority": s.priority,
        "not_before": s.not_before,
        "attempt": s.attempt,
        "max_attempts": s.attempt_limit,
        "attempts": [
            Attempt(
                attempt=a.attempt,
                claimed_by=a.claimed_by,
                error=a.error,
                ended_at=a.ended_at,
                retry_at=a.retry_at,
                expired=a.expired,
            )
            for a in s.attempts
        ],
        "gate": s.gate,
        "timeout_s": s.timeout_s,
        "decided_by": s.decided_by,
        "decision_note": s.decision_note,
        "flow_id": s.flow_id,
        "step_id": s.step_id,
        "labels": list(s.payload.labels),
    }  # never the claim's token: it is the claimer's proof


class Match(Document):
    """One agent ranked for a signal, and whether it may claim it."""

    agent: str
    score: Number
    threshold: Number
    passes: bool


def ranking(volunteers: Sequence[Volunteer]) -> list[Match]:
    """The registry's agents ranked for a signal, best first, and who may claim it."""
    return [
        Match(agent=v.agent.agent_id, score=v.score, threshold=v.threshold, passes=v.passes)
        for v in volunteers
    ]


# ---------------------------------------------------------------- the log


class Event(Document):
    """One stored event with its global position, as `blackboard events` prints it."""

    position: int
    event_type: str
    stream_id: str  # a board's, or an entry key's (`<board>\x1f<key>`)
    version: int
    event_id: str
    schema_version: int
    occurred_at: Time
    recorded_at: Time
    data: dict[str, Any]
    metadata: dict[str, Any]


def events(records: Sequence[Recorded]) -> list[Event]:
    """Stored events with their global positions, as `blackboard events` prints them."""
    return [event(r) for r in records]


def event(r: Recorded) -> Event:
    """One stored event (`events --jsonl` prints one a line, as it reads them)."""
    return Event(
        position=r.position,
        event_type=r.event.event_type,
        stream_id=r.event.stream_id,
        version=r.event.version,
        event_id=r.event.event_id,
        schema_version=type(r.event).schema_version,
        occurred_at=r.event.occurred_at,
        recorded_at=r.recorded_at,
        data=_shown(r.event.data()),
        metadata=dict(r.metadata),
    )


def _shown(data: dict[str, Any]) -> dict[str, Any]:
    """An event's data as it is shown: a claim's token is its claimer's proof (whoever holds it may
    complete the claim), so the log shows that there was one, not what it is (`export` keeps it)."""
    return {**data, "token": "(hidden)"} if data.get("token") else data


# ---------------------------------------------------------------- agents


class FileProblem(Document):
    message: str
    fix: str


class Agent(Document):
    name: str
    description: str | None
    capabilities: list[dict[str, Any]]
    threshold: Number
    runnable: bool
    runner: str | None = None  # who runs a file with no handler; None for a command or an entrypoint
    missing: str | None = None  # what that runner lacks to start, and how to get it
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
    glob: str | None = None  # the --agents-dir glob it came from


class Agents(Document):
    """Every file the registry looked at: the agents that loaded, the files left out and why."""

    agents: list[Agent]
    left_out: list[LeftOut]
    folders: list[Folder]
    loaded: int
    files: int


def agents(registry: "FrontmatterAgentRegistry") -> Agents:
    """Every file the registry looked at: `agents` (loaded, with their fields), `left_out` (file and
    problems, each with its fix), `folders` (each folder read, whether it exists, and the glob it came
    from), and the counts."""
    files = registry.files()
    loaded = sorted((f.agent for f in files if f.agent), key=lambda d: d.name)
    left_out: dict[str, list[AgentFileProblem]] = {}
    for p in registry.problems():  # files, and folders that could not be walked
        left_out.setdefault(str(p.path), []).append(p)
    return Agents(
        agents=[_agent(d, registry.default_threshold) for d in loaded],
        left_out=[
            LeftOut(file=path, problems=[_problem(p) for p in found]) for path, found in left_out.items()
        ],
        folders=_folders(registry),
        loaded=len(loaded),
        files=len(files),
    )


def _folders(registry: "FrontmatterAgentRegistry") -> list[Folder]:
    """Each folder read, with the glob it came from (`glob`, null for a folder named as it is); a glob
    that matches nothing is listed as itself, a folder that does not exist."""
    listed: list[Folder] = []
    for given, matched in registry.folders():
        if matched is None:
            listed.append(Folder(folder=str(given), exists=given.is_dir(), glob=None))
        else:
            found = [Folder(folder=str(f), exists=True, glob=str(given)) for f in matched]
            listed += found or [Folder(folder=str(given), exists=False, glob=str(given))]
    return listed


def _problem(p: "AgentFileProblem") -> FileProblem:
    return FileProblem(message=p.message, fix=p.fix)


def _agent(d: "AgentDefinition", default_threshold: float) -> Agent:
    return Agent(
        name=d.name,
        description=d.description,
        capabilities=[c.model_dump() for c in d.profile.capabilities],
        threshold=d.profile.threshold_or(default_threshold),
        runnable=d.runnable,
        runner=d.runner_name,
        missing=d.runner_missing,
        command=d.command,
        entrypoint=d.entrypoint,
        timeout=d.timeout,
        model=d.model,
        tools=list(d.tools),
        file=str(d.path),
        warnings=[_problem(w) for w in d.warnings],
    )


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


# ---------------------------------------------------------------- the store


class Worker(Document):
    """A live worker as `status` shows it (presence: a table, not events)."""

    worker_id: str
    agent: str
    host: str
    pid: int
    started_at: Time
    last_beat_at: Time
    boards: list[str] | None  # null: every board
    running: list[str]  # what it runs on the board shown (or on any, outside a board)


def worker(w: "WorkerPresence", blackboard_id: str | None = None) -> Worker:
    return Worker(
        worker_id=w.worker_id,
        agent=w.agent_id,
        host=w.host,
        pid=w.pid,
        started_at=w.started_at,
        last_beat_at=w.last_beat,
        boards=list(w.boards) or None,
        running=[sid for sid, board in w.running if blackboard_id in (None, board)],
    )


class OpenGate(Document):
    """A gate waiting for a person's decision, as `status` lists it."""

    signal_id: str
    topic: str
    posted_by: str
    open_since: Time | None  # when it opened (its upstreams completed, its not_before came)
    timeout_s: Number | None  # it expires this long after it opened; null: it waits


def open_gate(s: AgentSignal) -> OpenGate:
    return OpenGate(
        signal_id=s.signal_id,
        topic=s.payload.topic,
        posted_by=s.posted_by,
        open_since=s.claimable_since,
        timeout_s=s.timeout_s,
    )


class BoardBudget(Document):
    """A board's budget (`blackboard budget`): its signals are not claimed once what was spent reaches it."""

    blackboard_id: str
    usd: float | None  # None: no limit in US dollars
    tokens: int | None  # None: no limit in tokens
    spent_usd: float  # what the runners' runs recorded on the board cost (priced runs)
    spent_tokens: int  # their input and output tokens
    reached: str | None  # why its signals wait; None: they are claimed as usual
    # what its open claims reserved until their runs end (docs/control.md, "Limits")
    reserved_usd: float = 0.0
    reserved_tokens: int = 0


def board_budget(
    blackboard_id: str, budget: Budget, spent: Spent, reserved: Spent | None = None
) -> BoardBudget:
    held = reserved or Spent()
    return BoardBudget(
        blackboard_id=blackboard_id,
        usd=budget.usd,
        tokens=budget.tokens,
        spent_usd=round(spent.usd, 6),
        spent_tokens=spent.tokens,
        reached=budget.reached(spent),
        reserved_usd=round(held.usd, 6),
        reserved_tokens=held.tokens,
    )


class Status(Document):
    """One board in `blackboard status`."""

    blackboard_id: str
    signals: dict[str, int]  # by status, statuses with none left out
    signals_total: int
    oldest_waiting_since: Time | None
    oldest_waiting_seconds: float | None
    entries: int
    open_conflicts: int
    live_workers: list[str]  # agents of the live workers serving it, and of its live claims
    workers: list[Worker]  # the live workers serving it
    usage: BoardUsage  # what runners' runs on the board cost, per agent
    open_gates: list[OpenGate] = []  # gates a person may decide now (`approve`, `reject`), oldest first
    budget: BoardBudget | None = None  # its budget, when it has one (`blackboard budget`)
    # claimable signals no live worker fits, by their targets (`RESEARCH` -> how many): each is waiting for
    # a worker that fits
    waiting_for_workers: dict[str, int] = {}
    # its flows with a step still open, then the last few that ended, newest first (BoardStatus.flows)
    flows: list["FlowSummary"] = []


def status(b: "BoardStatus") -> Status:
    return Status(
        blackboard_id=b.blackboard_id,
        signals=dict(b.signals),
        signals_total=sum(b.signals.values()),
        oldest_waiting_since=b.oldest_waiting,
        oldest_waiting_seconds=None if b.waiting_seconds is None else round(b.waiting_seconds, 1),
        entries=b.entries,
        open_conflicts=b.open_conflicts,
        live_workers=list(b.live_workers),
        workers=[worker(w, b.blackboard_id) for w in b.workers],
        usage=board_usage(b.usage),
        open_gates=[open_gate(g) for g in b.open_gates],
        budget=board_budget(b.blackboard_id, b.budget, spent_of(b.usage), b.reserved)
        if b.budget.is_set
        else None,
        waiting_for_workers=dict(b.waiting_for_workers),
        flows=[flow_summary(f) for f in b.flows],
    )


# ---------------------------------------------------------------- flows

FlowState = Literal["running", "completed", "failed", "cancelled"]


class FlowSummary(Document):
    """A flow's steps counted by the status each stands at (a step retried: its latest signal's)."""

    flow_id: str
    blackboard_id: str
    state: FlowState  # running while a step is open; else completed, cancelled or failed
    by_status: dict[str, int]  # its steps by status, statuses with none left out
    steps_total: int
    started_at: Time | None  # when it was run


class Step(Document):
    """One step of a flow as it stands: its latest signal (a retry's, once it was retried)."""

    step_id: str
    status: SignalStatus
    signal_id: SignalIdText
    tries: Annotated[int, Field(ge=1)]  # its signals: 1, and one more for each retry
    waiting_for: list[str]  # the steps it still waits for
    signal: Signal


class Flow(FlowSummary):
    """A flow step by step (`blackboard flow status`, `flow run`), in the steps' order."""

    steps: list[Step]


def flow_summary(f: "FlowCounts") -> FlowSummary:
    return FlowSummary(
        flow_id=f.flow_id,
        blackboard_id=f.blackboard_id,
        state=f.state,  # type: ignore[arg-type] - domain flow_state says one of the four
        by_status=dict(f.counts),
        steps_total=f.steps,
        started_at=f.started_at,
    )


def flow(f: "FlowProgress", waiting: Collection[str] = ()) -> Flow:
    """A flow step by step; a step in `waiting` (BlackboardQueries.waiting_for_workers) says so in its signal."""
    counts = f.counts
    return Flow(
        flow_id=f.flow_id,
        blackboard_id=f.blackboard_id,
        state=f.state,  # type: ignore[arg-type]
        by_status=counts,
        steps_total=len(f.steps),
        started_at=f.started_at,
        steps=[
            Step(
                step_id=s.step_id,
                status=s.status,
                signal_id=s.signal.signal_id,
                tries=s.tries,
                waiting_for=list(s.waiting_for),
                signal=signal(s.signal, None, waiting),
            )
            for s in f.steps
        ],
    )


# ---------------------------------------------------------------- solve runs


class SolveStep(Document):
    """One iteration: the signal posted for a specialist and how it ended, or a decision refused."""

    iteration: int
    signal_id: str | None
    agent: str | None
    capability: str | None
    topic: str | None
    reason: str
    status: str | None  # the signal's once it ended; None while it runs or for a refused decision
    error: str | None


class SolveRun(Document):
    """A solve run as its events tell it (`blackboard solve`, `solve --status RUN`); `orphaned`: running by
    its events, but the process that drove it is gone (`solve --resume` takes it up)."""

    run_id: str
    blackboard_id: str
    state: Literal["running", "solved", "stopped", "orphaned"]
    problem: str
    problem_key: str
    controller: str
    runner: str
    model: str | None
    started_by: str
    max_iterations: int
    iterations: int
    specialists: list[str]
    without_workers: list[str]
    started_workers: list[str]
    steps: list[SolveStep]
    answer: str | None
    answer_key: str | None
    reason: str | None
    synthesis: bool  # at the iteration limit, the controller is asked once for its best answer
    synthesized: bool  # the answer is that best answer: the run stopped at its limit
    controller_cost_usd: float
    step_timeout: float | None  # seconds a step may have no live worker that fits it (None: started before)
    resumes: int  # how many times a process took the run up again
    process: str | None  # `host:pid` of the process that drives it, or drove it last
    version: int


def solve_run(run: Any) -> SolveRun:
    """From the domain's `SolveRun` (domain/solve/run.py)."""
    return SolveRun(
        run_id=run.run_id,
        blackboard_id=run.blackboard_id,
        state=run.state,
        problem=run.problem,
        problem_key=run.problem_key,
        controller=run.controller,
        runner=run.runner,
        model=run.model,
        started_by=run.started_by,
        max_iterations=run.max_iterations,
        iterations=run.iterations,
        specialists=list(run.specialists),
        without_workers=list(run.without_workers),
        started_workers=list(run.started_workers),
        steps=[
            SolveStep(
                iteration=s.iteration,
                signal_id=s.signal_id,
                agent=s.agent,
                capability=s.capability,
                topic=s.topic,
                reason=s.reason,
                status=s.status,
                error=s.error,
            )
            for s in run.steps
        ],
        answer=run.answer,
        answer_key=run.answer_key,
        reason=run.reason,
        synthesis=run.synthesis,
        synthesized=run.synthesized,
        controller_cost_usd=round(run.cost_usd, 6),
        step_timeout=run.step_timeout,
        resumes=run.resumes,
        process=run.process,
        version=run.version,
    )


# ---------------------------------------------------------------- lists, and JSON


class Listing(RootModel[list[T]], Generic[T]):
    """A list of documents: iterate it, index it, take its `len`; it dumps as the CLI's JSON array."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    def __iter__(self) -> Iterator[T]:  # type: ignore[override] - the items, not the model's fields
        return iter(self.root)

    def __len__(self) -> int:
        return len(self.root)

    def __getitem__(self, index: int) -> T:
        return self.root[index]


Signals = Listing[Signal]
Entries = Listing[Entry]
SearchHits = Listing[SearchHit]
History = Listing[HistoryVersion]
Ranking = Listing[Match]
Events = Listing[Event]


def jsonable(document: Any) -> Any:
    """A document, or a list or object holding documents, as the JSON value the CLI prints and the MCP
    tools return (any other value as it is)."""
    if isinstance(document, BaseModel):
        return document.model_dump(mode="json")
    if isinstance(document, list | tuple):
        return [jsonable(d) for d in document]
    if isinstance(document, dict):
        return {k: jsonable(v) for k, v in document.items()}
    return document
