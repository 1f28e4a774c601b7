"""A signal's documents: the signal as every interface shows it, a watched one, and an agent's match."""

from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import (
    ConfigDict,
    Field,
    WithJsonSchema,
)

from blackboard.domain.capabilities import Volunteer
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
from blackboard.infrastructure.documents.base import DATE_TIME, TEXT, TEXTS, Document, Number, Time, _absent
from blackboard.infrastructure.interfaces.waiting import waiting_for_a_worker

if TYPE_CHECKING:
    from blackboard.application.output import OutputLine as RunOutputLine
    from blackboard.application.queries import BlackboardQueries
    from blackboard.infrastructure.agents.registry import FrontmatterAgentRegistry

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
    # the earlier attempt's session the run continued (docs/agents.md, "Resume instead of restart"); null: afresh
    resumed_from: str | None = None


class Attempt(Document):
    """An attempt at a signal that failed and was retried (docs/control.md, "Retries"); the last attempt's
    outcome is the signal's `result`."""

    attempt: Annotated[int, Field(ge=1)]
    claimed_by: str | None  # whose attempt it was
    error: str  # what ended it
    ended_at: Time
    retry_at: Time  # the next attempt was not claimable before then
    expired: bool  # its claim ran out (a worker that died), rather than its claimer failing it
    resumed_from: str | None = (
        None  # the earlier attempt's session its run continued; null: afresh, or unknown
    )


class StalledAttempt(Document):
    """An attempt whose run showed no progress for its agent file's `stall_timeout` and was stopped
    (docs/control.md, "Stalls"); that attempt failed, and the signal's retries decided what followed."""

    attempt: Annotated[int, Field(ge=1)]
    actor: str  # whose run it was
    seconds_idle: Number  # how long it had shown no output line, token or tool call
    at: Time  # when it was stopped


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
    stalls: list[StalledAttempt] = Field(default_factory=list)  # the attempts whose run stalled; []: none
    # past its deadline, not yet expired (BlackboardQueries.overdue): the deadline
    overdue_since: Annotated[Time | None, WithJsonSchema(DATE_TIME)] = Field(default=None, exclude_if=_absent)
    # claimable, and no live worker fits it (BlackboardQueries.waiting_for_workers): `a worker that fits: T`
    waiting: Annotated[str | None, WithJsonSchema(TEXT)] = Field(default=None, exclude_if=_absent)
    # a post that only agents with nothing to run fit
    warnings: Annotated[list[str] | None, WithJsonSchema(TEXTS)] = Field(default=None, exclude_if=_absent)


class WatchedSignal(Signal):
    """A signal a watch found, and the log position to pass as `since` to see the next one."""

    position: int


class OutputLine(Document):
    """A line of a run's output, as a follow gives it (`show --follow`, docs/cli.md): `text` as the run wrote
    it (a transcript record's JSON), `line` as a follower shows it (a transcript record's step, stderr marked
    `stderr: `, a notice in parentheses: shown_line);
    `cursor` (`ATTEMPT:SEQUENCE`) is the `after` that goes on past it."""

    signal_id: str
    attempt: int
    sequence: int
    cursor: str
    at: Time
    stream: Literal["transcript", "stdout", "stderr", "notice"]
    text: str
    line: str


class FollowedOutput(Document):
    """A page of a run's output (MCP `blackboard_follow`, the web view): its lines after `after`, the `after`
    to ask with next, and the signal once it ended (`outcome`: null while it runs)."""

    signal_id: str
    lines: list[OutputLine]
    after: str
    outcome: Signal | None


def output_line(item: "RunOutputLine") -> OutputLine:
    """A line of a run's output, with `line` as every follower shows it (shown_line)."""
    return OutputLine(
        signal_id=item.signal_id,
        attempt=item.attempt,
        sequence=item.sequence,
        cursor=str(item.cursor),
        at=item.at,
        stream=str(item.stream),  # type: ignore[arg-type]
        text=item.text,
        line=shown_line(item.stream, item.text),
    )


def shown_line(stream: str, text: str) -> str:
    """A line of output as every follower shows it (`show --follow`, the web view): a runner's transcript
    record as its step (the one rendering of transcripts), a handler's stdout as written, its stderr marked
    `stderr: `, the worker's notice in parentheses."""
    from blackboard.infrastructure.interfaces.transcript_lines import readable

    if stream == "transcript":
        return readable(text)
    if stream == "stderr":
        return f"stderr: {text}"
    if stream == "notice":
        return f"({text})"
    return text


def followed(
    signal_id: str, items: Sequence["RunOutputLine"], after: str, outcome: AgentSignal | None
) -> FollowedOutput:
    return FollowedOutput(
        signal_id=signal_id,
        lines=[output_line(i) for i in items],
        after=after,
        outcome=None if outcome is None else signal(outcome),
    )


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
                resumed_from=a.resumed_from,
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
        "stalls": [
            StalledAttempt(attempt=t.attempt, actor=t.actor, seconds_idle=t.seconds_idle, at=t.at)
            for t in s.stalls
        ],
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
