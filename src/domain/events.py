"""Blackboard events: immutable facts, numbered per board, each type with its own schema version."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any, ClassVar
from uuid import uuid4

from pydantic import BaseModel, ConfigDict, Field

from blackboard.domain.reservations import Reservation
from blackboard.domain.signals import (
    DEFAULT_PRIORITY,
    Priority,
    SignalPayload,
    SignalResult,
    SignalType,
    SignalUsage,
)

ENVELOPE = frozenset({"event_id", "blackboard_id", "version", "occurred_at"})


class BlackboardEvent(BaseModel):
    """Envelope shared by every event; `version` is the position in the board's own stream."""

    # schemas are built on first use: a CLI call that reads no event of a type pays nothing for it
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)
    schema_version: ClassVar[int] = 1

    event_id: str = Field(default_factory=lambda: str(uuid4()))
    blackboard_id: str = Field(min_length=1)
    version: int = Field(ge=1)
    occurred_at: datetime
    signal_id: str

    @property
    def event_type(self) -> str:
        return type(self).__name__

    @property
    def stream_id(self) -> str:
        """The stream it belongs to: a signal's event, its board's."""
        return self.blackboard_id

    def data(self) -> dict[str, Any]:
        """The event's own fields as JSON-ready values, without the envelope."""
        return self.model_dump(mode="json", exclude=set(ENVELOPE))


class AgentSignalPosted(BlackboardEvent):
    # 2 added retry_of, 3 read_keys and write_keys, 4 budget_usd, 5 priority, 6 not_before, 7 max_attempts,
    # 8 gate and gate_timeout_s, 9 gate_timeout_s renamed timeout_s and given to every signal, 10 flow_id and
    # step_id, 11 payload.labels
    schema_version: ClassVar[int] = 11

    signal_type: SignalType
    payload: SignalPayload
    target_capabilities: tuple[str, ...] = Field(min_length=1)
    posted_by: str = Field(min_length=1)
    after: tuple[str, ...] = ()
    dedupe_key: str | None = None
    retry_of: str | None = None  # the FAILED, EXPIRED or CANCELLED signal this one retries
    # key patterns (a trailing `*` matches a prefix) its claimer may read and write while it holds the claim
    read_keys: tuple[str, ...] = ()
    write_keys: tuple[str, ...] = ()
    budget_usd: float | None = Field(default=None, gt=0)  # what a runner's run of it may spend at most
    priority: Priority = DEFAULT_PRIORITY  # 0 (P0, most urgent) to 4
    not_before: datetime | None = None  # not claimable before then; its post timeout counts from then
    max_attempts: int | None = Field(default=None, ge=1)  # None: the claiming agent's retry policy decides
    gate: bool = False  # a person decides it (approve, reject); no agent claims it
    # its own timeout: a gate expires this long after it opens; any other signal, its post timeout (it expires
    # once it has waited this long with no live worker that fits it); None: the reader's default post timeout
    timeout_s: float | None = Field(default=None, gt=0)
    # a step of a flow (`blackboard flow run`, domain/flows.py): the flow's id and the step's; None: no flow
    flow_id: str | None = None
    step_id: str | None = None


class AgentSignalClaimed(BlackboardEvent):
    schema_version: ClassVar[int] = 5  # 2 added token, 3 concurrency_key, 4 reserved, 5 runner

    claimed_by: str = Field(min_length=1)
    score: float | None = None
    # the claim's own token (a secret per claim); completing or renewing must present it
    token: str | None = None
    concurrency_key: str | None = None  # the claimer's (domain/limits.py): the claim counts under it
    # what the claim reserved of its board's budget until its run ends (domain/reservations.py); None:
    # nothing (its runs record no usage, or it was claimed before reservations)
    reserved: Reservation | None = None
    # the runner its worker runs it with (claude-code, anthropic, openai), so a person may nudge that run;
    # None: a command or entrypoint handler, or a claim outside a worker's runner: nothing takes input
    runner: str | None = None


class BoardBudgetSet(BlackboardEvent):
    """Someone set the board's budget (`blackboard budget`): its signals are not claimed once the usage
    its runners recorded reaches it. `usd` and `tokens` are the budget from here on (None: no limit)."""

    signal_id: str | None = None  # a board's event: no signal
    usd: float | None = Field(default=None, ge=0)
    tokens: int | None = Field(default=None, ge=0)
    set_by: str = Field(min_length=1)
    reason: str = ""


class AgentSignalClaimRenewed(BlackboardEvent):
    """The claimer is still at work: the claim timeout counts again from here (a lease)."""

    claimed_by: str = Field(min_length=1)


class AgentSignalCompleted(BlackboardEvent):
    schema_version: ClassVar[int] = 3  # 2 added usage, 3 usage.resumed_from

    completed_by: str = Field(min_length=1)
    result: SignalResult
    usage: SignalUsage | None = None  # what the run cost, when a runner ran it


class AgentSignalFailed(BlackboardEvent):
    schema_version: ClassVar[int] = 3  # 2 added usage, 3 usage.resumed_from

    failed_by: str = Field(min_length=1)
    error: str
    usage: SignalUsage | None = None


class AgentSignalAttemptFailed(BlackboardEvent):
    """An attempt at the signal failed with attempts left (docs/control.md, "Retries"): the claimer
    failed it (`reason`: its error; a handler asking for a retry too), or its claim ran out (`expired`).
    The same signal is POSTED again, claimable from `retry_at`; what waits on it keeps waiting."""

    schema_version: ClassVar[int] = 2  # 2 usage.resumed_from

    attempt: int = Field(ge=1)  # the attempt that failed; the next is attempt + 1
    max_attempts: int = Field(ge=2)  # the limit that applied: the post's, or the claimer's policy
    claimed_by: str | None = None  # whose attempt it was
    reason: str
    retry_at: datetime  # the next attempt is not claimable before then (its backoff, with jitter)
    expired: bool = False
    usage: SignalUsage | None = None  # what the failed attempt's run cost, when a runner ran it


class AgentSignalRunCharged(BlackboardEvent):
    """A run whose outcome was refused because its claim had ended by another hand (the signal cancelled,
    expired, or retried after its claim lapsed) spent `usage` all the same: it is charged to the board, as a
    completion's or a failure's is (the signal's usage, the board's budget, `status` and `summary`), and the
    signal stays as it is. `charged_to`: the agent whose run it was; `attempt`: the number of the attempt
    whose claim the run held. A run is charged once per attempt (BlackboardAggregate.check_charge)."""

    schema_version: ClassVar[int] = 2  # 2 usage.resumed_from

    charged_to: str = Field(min_length=1)
    attempt: int = Field(ge=1)
    usage: SignalUsage
    reason: str  # why its outcome was not recorded


class AgentSignalStalled(BlackboardEvent):
    """The claimer's run of the signal showed no progress (no output line, token or tool call) for
    `seconds_idle` seconds, its agent file's `stall_timeout` (docs/control.md, "Stalls"): the worker stopped it.
    Recorded together with that attempt's failure (AgentSignalAttemptFailed or AgentSignalFailed), in the
    same append: a stall is one failed attempt, and the signal's retries decide what follows."""

    actor: str = Field(min_length=1)  # whose run it was (the claimer)
    seconds_idle: float = Field(ge=0)
    attempt: int = Field(ge=1)  # the attempt whose run stalled


class AgentSignalExpired(BlackboardEvent):
    reason: str


class AgentSignalUnclaimed(BlackboardEvent):
    reason: str


class AgentSignalCancelled(BlackboardEvent):
    """Someone ended the signal on purpose (`blackboard cancel`): it is CANCELLED, whatever ran it stops,
    and an outcome sent afterwards is refused. `cause`: the upstream whose cancel took this one down
    (None for the signal that was named)."""

    cancelled_by: str = Field(min_length=1)
    reason: str = Field(min_length=1)
    cause: str | None = None

    @property
    def why(self) -> str:
        """What the signal's result says: the reason, and the upstream that took it down."""
        if self.cause is None:
            return f"cancelled by {self.cancelled_by}: {self.reason}"
        return f"upstream {self.cause} was cancelled by {self.cancelled_by}: {self.reason}"


class AgentSignalApproved(BlackboardEvent):
    """A person approved a gate (`blackboard approve`): it is COMPLETED and what waits on it may run."""

    approved_by: str = Field(min_length=1)
    note: str | None = None


class AgentSignalRejected(BlackboardEvent):
    """A person rejected a gate (`blackboard reject`): it is FAILED and what waits on it expires."""

    rejected_by: str = Field(min_length=1)
    reason: str = Field(min_length=1)


class AgentSignalNudged(BlackboardEvent):
    """A person nudged the running agent (`blackboard nudge`): `text` reaches the run of `attempt` at its
    next turn, as a user message (docs/agents.md, "Nudges"). The signal's state is unchanged."""

    nudged_by: str = Field(min_length=1)
    text: str = Field(min_length=1)
    attempt: int = Field(ge=1)  # the attempt whose run it is for: a later attempt's run never gets it


STREAM_SEPARATOR = "\x1f"  # never in a board id nor a key (both refuse control characters)
SOLVE_SEPARATOR = "\x1e"  # a solve run's stream: `<board>\x1e<run>`, never a board's nor an entry key's
CHECKPOINT_SEPARATOR = "\x1d"  # a LangGraph thread's checkpoints: `<board>\x1d<thread>`


def entry_stream_id(blackboard_id: str, key: str) -> str:
    """An entry key's own stream: `<board>\x1f<key>`, never a board's id (a board id has no control
    character), and the board is what comes before the separator."""
    return f"{blackboard_id}{STREAM_SEPARATOR}{key}"


def solve_stream_id(blackboard_id: str, run_id: str) -> str:
    """A solve run's own stream (`blackboard solve`): `<board>\x1e<run>`."""
    return f"{blackboard_id}{SOLVE_SEPARATOR}{run_id}"


def checkpoint_stream_id(blackboard_id: str, thread_id: str) -> str:
    """A LangGraph thread's checkpoints (`blackboard.langgraph.BlackboardSaver`): `<board>\x1d<thread>`."""
    return f"{blackboard_id}{CHECKPOINT_SEPARATOR}{thread_id}"


def board_of_stream(stream_id: str) -> str:
    """The board a stream belongs to: its own, an entry key's, a solve run's or a checkpoint thread's (a board
    id has no control character: what comes before the first separator is the board)."""
    return (
        stream_id.split(STREAM_SEPARATOR, 1)[0].split(SOLVE_SEPARATOR, 1)[0].split(CHECKPOINT_SEPARATOR, 1)[0]
    )


class EntryEvent(BlackboardEvent):
    """A write to one entry key; `version` is its place in the key's own stream, and every
    field but `key` is the written version's content and provenance."""

    signal_id: str | None = None  # the signal whose work produced it, if any
    key: str
    value: Any = None  # any JSON
    entry_type: str = "note"
    author: str = Field(min_length=1)
    section: str = "default"
    role: str = "assistant"
    label: str = "unlabelled"
    confidence: float | None = None
    depends_on: tuple[str, ...] = ()
    topics: tuple[str, ...] = ()
    meta: dict[str, Any] = Field(default_factory=dict)

    @property
    def stream_id(self) -> str:
        return entry_stream_id(self.blackboard_id, self.key)


class EntryWritten(EntryEvent):
    """An accepted version: the key's new current value."""


class EntryCandidateKept(EntryEvent):
    """A write that disagreed with the key's holder: kept as a candidate, the key is (or stays) in conflict."""

    holder: str  # who held the key when this candidate came


class EntryConflictResolved(EntryEvent):
    """A conflict ended: this content (a picked candidate's, or a merged value) is the new version."""

    picked: int | None = None  # the candidate version chosen; None for a merged value
    rationale: str = Field(min_length=1)


class SolveEvent(BlackboardEvent):
    """A fact of a solve run (`blackboard solve`, seed 004): a controller agent deciding, step by step, which
    specialist acts next on a board, until it gives an answer or its iterations run out. Each run is its
    own stream, `<board>\x1e<run>`; `actor` is who acted (who started the run, or the controller)."""

    signal_id: str | None = None  # the signal a decision posted, if any
    run_id: str = Field(min_length=1)
    actor: str = Field(min_length=1)

    @property
    def stream_id(self) -> str:
        return solve_stream_id(self.blackboard_id, self.run_id)


class SolveStarted(SolveEvent):
    """The problem was posted; the controller, its bound and the specialists it may pick among, and the
    options a `solve --resume` continues the run with."""

    # 2 added host, pid, controller_ref, step_timeout, start_workers, workdir, permission_mode, allowed_tools;
    # 3 added synthesis
    schema_version: ClassVar[int] = 3

    problem: str = Field(min_length=1)
    problem_key: str  # the entry that holds the problem on the board
    controller: str
    runner: str
    model: str | None = None
    max_iterations: int = Field(ge=1)
    specialists: tuple[str, ...] = ()
    without_workers: tuple[str, ...] = ()  # specialists with no live worker when the run started
    started_workers: tuple[str, ...] = ()  # those `--start-workers` started for the run
    host: str | None = None  # where the process that drives it runs (None: before 2)
    pid: int | None = None
    # `--controller` as a resume finds it again: an agent of the agents folder, or an agent file's absolute
    # path; None: the packaged controller
    controller_ref: str | None = None
    step_timeout: float | None = None  # seconds a step may have no live worker that fits it (None: before 2)
    start_workers: bool = False
    workdir: str | None = None  # the controller's runs' (absolute); None: where solve ran
    permission_mode: str | None = None
    allowed_tools: tuple[str, ...] = ()
    synthesis: bool = True  # at the iteration limit, the controller is asked once for its best answer


class SolveStepPosted(SolveEvent):
    """The controller picked a specialist: the signal it posted (`signal_id`) for it, and why."""

    iteration: int = Field(ge=1)
    agent: str
    capability: str
    topic: str
    reason: str
    usage: SignalUsage | None = None  # what the controller's run cost


class SolveStepEnded(SolveEvent):
    """The signal of a step ended (`signal_id`): how, as the controller will read it next."""

    iteration: int = Field(ge=1)
    status: str
    error: str | None = None


class SolveDecisionFailed(SolveEvent):
    """The controller's run gave no usable decision (its runner failed, or its answer was not a valid
    decision): the iteration is spent, the controller is asked again with the error."""

    iteration: int = Field(ge=1)
    error: str
    output: str = ""  # what it answered, cut to a few thousand characters
    usage: SignalUsage | None = None


class SolveSolved(SolveEvent):
    """The controller declared the problem solved: its final answer, written as the entry `answer_key`."""

    iteration: int = Field(ge=1)
    answer: str = Field(min_length=1)
    answer_key: str
    reason: str
    usage: SignalUsage | None = None


class SolveSynthesized(SolveEvent):
    """The iterations were spent without an answer, and the controller was asked once for its best answer from
    what is known: that answer, written as the entry `answer_key` (type `final`, label `synthesis`), or why
    there is none (`error`, with what it answered). The run's `SolveStopped` follows."""

    answer: str | None = None
    answer_key: str | None = None
    reason: str = ""
    error: str | None = None
    output: str = ""  # what it answered when that was refused, cut to a few thousand characters
    usage: SignalUsage | None = None


class SolveStopped(SolveEvent):
    """The run ended without an answer: its iterations spent, a step no worker took, or interrupted."""

    iterations: int = Field(ge=0)
    reason: str


class SolveResumed(SolveEvent):
    """A process took up a run whose own process had ended (`solve --resume`): where it runs, the bounds from
    now on, and the open step it waits for (`signal_id`), if any."""

    host: str
    pid: int
    max_iterations: int = Field(ge=1)
    step_timeout: float = Field(gt=0)
    start_workers: bool = False
    started_workers: tuple[str, ...] = ()  # the workers this resume started


SOLVE_EVENTS = (
    SolveStarted,
    SolveStepPosted,
    SolveStepEnded,
    SolveDecisionFailed,
    SolveSolved,
    SolveSynthesized,
    SolveStopped,
    SolveResumed,
)


class TypedBlob(BaseModel):
    """A value as a LangGraph serializer gave it (`serde.dumps_typed`): its type tag and its bytes, base64
    in the JSON so the event stays readable."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: str = Field(min_length=1)
    base64: str


class CheckpointRef(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    checkpoint_ns: str = ""
    checkpoint_id: str = Field(min_length=1)


class CheckpointWrite(BaseModel):
    """One pending write of a task: its index (LangGraph's: negative for ERROR, INTERRUPT, ...), channel, value."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    idx: int
    channel: str
    value: TypedBlob


class CheckpointEvent(BlackboardEvent):
    """A fact of one LangGraph thread's checkpoints on a board (docs/langgraph.md, "Checkpointer"). Each
    thread is its own stream, `<board>\x1d<thread>`; the read model keeps what reads see, the log keeps
    every checkpoint, also those a prune or a deletion hid."""

    signal_id: str | None = None  # a thread's event: no signal
    thread_id: str = Field(min_length=1)

    @property
    def stream_id(self) -> str:
        return checkpoint_stream_id(self.blackboard_id, self.thread_id)


class CheckpointSaved(CheckpointEvent):
    """A checkpoint (`put`): the whole checkpoint as the serializer gave it; its metadata as JSON when it
    is JSON (as LangGraph's metadata is: source, step, parents, run_id, ...), else `metadata_blob`. A put of a
    checkpoint id stored already replaces it (as LangGraph's own savers do)."""

    checkpoint_ns: str = ""
    checkpoint_id: str = Field(min_length=1)
    parent_checkpoint_id: str | None = None
    checkpoint: TypedBlob
    checkpoint_metadata: dict[str, Any] = Field(default_factory=dict)
    metadata_blob: TypedBlob | None = None  # when the metadata is not JSON (the JSON then keeps its run_id)


class CheckpointWritesSaved(CheckpointEvent):
    """A task's pending writes on a checkpoint (`put_writes`). A write at an (task_id, idx) stored already
    is kept as it was, except LangGraph's special channels (negative idx), which replace it."""

    checkpoint_ns: str = ""
    checkpoint_id: str = Field(min_length=1)
    task_id: str
    task_path: str = ""
    writes: tuple[CheckpointWrite, ...] = Field(min_length=1)


class CheckpointThreadDeleted(CheckpointEvent):
    """The thread was deleted (`delete_thread`): reads see none of its checkpoints and writes from here on;
    the log keeps them. A later checkpoint starts the thread again."""

    reason: str = ""


class CheckpointsPruned(CheckpointEvent):
    """These checkpoints (and their writes) were pruned: `prune` (keep the last N of each namespace, or
    none), `delete_for_runs` (a run's checkpoints). Reads no longer see them; the log keeps them."""

    checkpoints: tuple[CheckpointRef, ...] = Field(min_length=1)
    reason: str = ""


CHECKPOINT_EVENTS = (CheckpointSaved, CheckpointWritesSaved, CheckpointThreadDeleted, CheckpointsPruned)


# Stored event_type -> class. Rename a class only together with an upcaster.
EVENT_TYPES: dict[str, type[BlackboardEvent]] = {
    cls.__name__: cls
    for cls in (
        AgentSignalPosted,
        AgentSignalClaimed,
        AgentSignalClaimRenewed,
        AgentSignalCompleted,
        AgentSignalFailed,
        AgentSignalAttemptFailed,
        AgentSignalRunCharged,
        AgentSignalStalled,
        AgentSignalExpired,
        AgentSignalUnclaimed,
        AgentSignalCancelled,
        AgentSignalApproved,
        AgentSignalRejected,
        AgentSignalNudged,
        BoardBudgetSet,
        EntryWritten,
        EntryCandidateKept,
        EntryConflictResolved,
        *SOLVE_EVENTS,
        *CHECKPOINT_EVENTS,
    )
}

Upcaster = Callable[[dict[str, Any]], dict[str, Any]]


def _renamed(data: dict[str, Any], old: str, new: str) -> dict[str, Any]:
    data[new] = data.pop(old, None)
    return data


def _not_resumed(data: dict[str, Any]) -> dict[str, Any]:
    """A run's usage recorded before resumes: it started afresh (`resumed_from` None, as absent reads)."""
    usage = data.get("usage")
    return {**data, "usage": None if usage is None else {**usage, "resumed_from": None}}


# (event_type, stored schema version) -> function turning that shape into the next version's.
UPCASTERS: dict[tuple[str, int], Upcaster] = {
    ("AgentSignalPosted", 1): lambda data: {**data, "retry_of": None},
    ("AgentSignalPosted", 2): lambda data: {**data, "read_keys": [], "write_keys": []},  # no key permissions
    ("AgentSignalPosted", 3): lambda data: {**data, "budget_usd": None},  # no budget of its own
    ("AgentSignalPosted", 4): lambda data: {**data, "priority": DEFAULT_PRIORITY},  # posted before priorities
    ("AgentSignalPosted", 5): lambda data: {**data, "not_before": None},  # claimable at once
    ("AgentSignalPosted", 6): lambda data: {**data, "max_attempts": None},  # the claimer's policy decides
    ("AgentSignalPosted", 7): lambda data: {**data, "gate": False, "gate_timeout_s": None},  # before gates
    # a gate's own timeout became every signal's (a non-gate had none: the reader's default applies)
    ("AgentSignalPosted", 8): lambda data: _renamed(data, "gate_timeout_s", "timeout_s"),
    ("AgentSignalPosted", 9): lambda data: {**data, "flow_id": None, "step_id": None},  # before flows
    ("AgentSignalPosted", 10): lambda data: {
        **data,
        "payload": {**data["payload"], "labels": []},
    },  # unlabelled
    ("AgentSignalClaimed", 1): lambda data: {**data, "token": None},
    ("AgentSignalClaimed", 2): lambda data: {**data, "concurrency_key": None},  # claimed under no key
    ("AgentSignalClaimed", 3): lambda data: {**data, "reserved": None},  # claimed before reservations
    ("AgentSignalClaimed", 4): lambda data: {**data, "runner": None},  # claimed before nudges: takes none
    ("AgentSignalCompleted", 1): lambda data: {**data, "usage": None},  # no runner's run recorded
    ("AgentSignalFailed", 1): lambda data: {**data, "usage": None},
    # recorded before a run could resume an earlier attempt's session: every run started afresh
    ("AgentSignalCompleted", 2): lambda data: _not_resumed(data),
    ("AgentSignalFailed", 2): lambda data: _not_resumed(data),
    ("AgentSignalAttemptFailed", 1): lambda data: _not_resumed(data),
    ("AgentSignalRunCharged", 1): lambda data: _not_resumed(data),
    ("SolveStarted", 1): lambda data: {  # started before a run could be resumed: its options were not kept
        **data,
        "host": None,
        "pid": None,
        "controller_ref": None if data.get("controller") == "controller" else data.get("controller"),
        "step_timeout": None,
        "start_workers": bool(data.get("started_workers")),
        "workdir": None,
        "permission_mode": None,
        "allowed_tools": [],
    },
    # started before a run's best answer was asked for at its limit: a resume asks for it, as a run does now
    ("SolveStarted", 2): lambda data: {**data, "synthesis": True},
}


class UnreadableEvent(LookupError):
    """A stored event this code cannot read: written by a newer blackboard. Never skipped, never guessed at."""

    def __init__(self, message: str, event_type: str, schema_version: int | None) -> None:
        super().__init__(message)
        self.event_type = event_type
        self.schema_version = schema_version


class UnknownEventType(UnreadableEvent):
    def __init__(self, event_type: str, schema_version: int | None = None) -> None:
        super().__init__(
            f"stored event type {event_type!r} has no class in EVENT_TYPES", event_type, schema_version
        )


class NewerSchema(UnreadableEvent):
    def __init__(self, event_type: str, schema_version: int, known: int) -> None:
        super().__init__(
            f"stored {event_type} is of schema version {schema_version}, above {known}, the newest this "
            "blackboard reads",
            event_type,
            schema_version,
        )


def upcast(
    event_type: str,
    schema_version: int,
    data: dict[str, Any],
    upcasters: Mapping[tuple[str, int], Upcaster] | None = None,
) -> dict[str, Any]:
    """Bring stored data up to the current schema of its event type, one version at a time."""
    chain = UPCASTERS if upcasters is None else upcasters
    try:
        current = event_class(event_type).schema_version
    except UnknownEventType:
        raise UnknownEventType(event_type, schema_version) from None
    if (
        schema_version > current
    ):  # a newer blackboard wrote it: its fields may mean what this code cannot know
        raise NewerSchema(event_type, schema_version, current)
    while schema_version < current:
        step = chain.get((event_type, schema_version))
        if step is None:
            raise LookupError(f"no upcaster for {event_type} from schema version {schema_version}")
        data = step(dict(data))
        schema_version += 1
    return data


def event_class(event_type: str) -> type[BlackboardEvent]:
    try:
        return EVENT_TYPES[event_type]
    except KeyError:
        raise UnknownEventType(event_type) from None


def load_event(
    event_type: str,
    schema_version: int,
    envelope: Mapping[str, Any],
    data: dict[str, Any],
    upcasters: Mapping[tuple[str, int], Upcaster] | None = None,
) -> BlackboardEvent:
    """Rebuild an event from its stored envelope and (possibly older) data: the one way every stored event
    becomes its class's instance, whatever its type. The data is upcast dict to dict to the class's schema
    version, then validated by the class's own validator (pydantic's, in Rust: faster than building the
    model unvalidated through `model_construct`), so a field added to a class is read with no other
    change; current data skips the upcasters' lookup."""
    cls = EVENT_TYPES.get(event_type)
    if cls is None or schema_version != cls.schema_version:
        data = upcast(event_type, schema_version, data, upcasters)
        cls = EVENT_TYPES[event_type]
    return cls.__pydantic_validator__.validate_python({**data, **envelope})  # type: ignore[no-any-return]
