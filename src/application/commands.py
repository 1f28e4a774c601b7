"""Commands and queries: the requests the application accepts, validated at the boundary."""

from __future__ import annotations

import re
from typing import Annotated, Any
from uuid import uuid4

from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict, Field, model_validator

from blackboard.application.bounds import MAX_INT64
from blackboard.application.entry_values import check_knowledge_items
from blackboard.application.fields import (
    BoardName,
    Count,
    Dollars,
    KeyPattern,
    Name,
    Position,
    Printable,
    Seconds,
    Token,
    WorkerId,
)
from blackboard.application.json_values import check_json
from blackboard.domain.signals import (
    DEFAULT_PRIORITY,
    EntryId,
    Labels,
    NonEmpty,
    Priority,
    SignalIdText,
    SignalStatus,
    SignalType,
    SignalUsage,
    Topic,
)


class Message(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class Command(Message):
    """A request to change a board. `correlation_id` ties the events it causes to the caller's work."""

    correlation_id: Name | None = None


def command_metadata(cmd: Command, actor: str, **extra: Any) -> dict[str, Any]:
    """The metadata stored with every event a command causes, the one place it is built: who (`actor`),
    which command, its causation id (this command, fresh) and correlation id (the caller's, else the
    causation id); the claiming worker's public id (`worker`, as public as `status`) when the command
    names one; then `extra`."""
    causation_id = str(uuid4())
    metadata: dict[str, Any] = {
        "actor": actor,
        "command": type(cmd).__name__,
        "causation_id": causation_id,
        "correlation_id": cmd.correlation_id or causation_id,
    }
    if (worker := getattr(cmd, "worker_id", None)) is not None:
        metadata["worker"] = worker
    return {**metadata, **extra}


def _storable_context(context: dict[str, Any]) -> dict[str, Any]:
    check_json(context, "context")  # raises InvalidInput, which no model turns into a ValidationError
    return context


def _cursor(text: str) -> str:
    """A follow's cursor as a follow gave it back (application/output.py, Cursor); empty: from the start."""
    if text and re.fullmatch(r"[0-9]{1,9}:[0-9]{1,9}", text) is None:
        raise ValueError(f"must be ATTEMPT:SEQUENCE as a follow gave it (e.g. 1:42), got {text[:40]!r}")
    return text


# A post that names whom it is for (`target_capabilities`) and no type takes this one of seed 003's six kinds.
DEFAULT_SIGNAL_TYPE = SignalType.RESEARCH


class PostSignal(Command):
    """UC-001: put a unit of work on a board. Seed 003's payload fields have defaults (docs/cli.md, `post`):
    the board is the PS id and the PS id the board, so one of the two names both; the entry id is the
    board's next `e-N`, numbered where the post is decided (None here); the type, once a capability says
    whom the signal is for, is DEFAULT_SIGNAL_TYPE."""

    blackboard_id: BoardName | None = None  # before ps_id: a bad board is said as itself, not as its PS id
    signal_type: SignalType
    ps_id: BoardName  # the board, unless blackboard_id is given
    entry_id: EntryId | None = None  # None: the board's next e-N (BlackboardService.post_signal)
    topic: Topic
    prompt: str = ""
    context: Annotated[dict[str, Any], AfterValidator(_storable_context)] = Field(default_factory=dict)
    target_capabilities: tuple[Name, ...] = ()
    posted_by: Name = "ps-skill"
    after: tuple[SignalIdText, ...] = ()
    dedupe_key: Name | None = None
    # entry keys its claimer may read and write while it holds the claim (domain/knowledge/permissions.py)
    read_keys: tuple[KeyPattern, ...] = ()
    write_keys: tuple[KeyPattern, ...] = ()
    # what a runner's run of it may spend at most, in US dollars (the agent file's max_budget_usd may be smaller)
    budget_usd: Dollars | None = None
    priority: Priority = DEFAULT_PRIORITY  # 0 (P0, most urgent) to 4: claimed before less urgent work
    not_before: AwareDatetime | None = None  # not claimable before then; its post timeout counts from then
    # how many attempts it gets, whoever claims it (docs/control.md, "Retries"); None: the claimer's policy
    max_attempts: Annotated[int, Field(ge=1, le=1000)] | None = None
    gate: bool = False  # a person decides it (approve, reject); no agent claims it
    # its own timeout, in seconds: a gate expires this long after it opens (without one it waits for a person
    # however long); another signal once it has waited this long with no live worker that fits it (without
    # one, the default post timeout applies: off unless BLACKBOARD_POST_TIMEOUT is set)
    timeout_s: Annotated[float, Field(gt=0, le=10 * 365 * 86400, allow_inf_nan=False)] | None = None
    # labels to find it by (`--label`, repeatable): a label given twice is kept once, in the order given
    labels: Annotated[Labels, AfterValidator(lambda given: tuple(dict.fromkeys(given)))] = ()

    @model_validator(mode="before")
    @classmethod
    def _defaults(cls, given: Any) -> Any:
        """The PS id from the board, and the type from a capability, when left out (None or absent); what
        is still missing then is refused as missing, naming the field (errors/input.py says what else may
        stand for it)."""
        if not isinstance(given, dict):
            return given
        filled = dict(given)
        if filled.get("ps_id") is None and filled.get("blackboard_id") is not None:
            filled["ps_id"] = filled["blackboard_id"]
        if filled.get("signal_type") is None and filled.get("target_capabilities"):
            filled["signal_type"] = DEFAULT_SIGNAL_TYPE
        for name in ("ps_id", "signal_type"):
            if filled.get(name) is None:
                filled.pop(name, None)  # None given is left out: "Field required", not "not a string"
        return filled

    @property
    def board(self) -> str:
        return self.blackboard_id or self.ps_id


class ClaimSignal(Command):
    """UC-002: an agent takes a signal it is able to do."""

    signal_id: SignalIdText
    agent_id: Name
    blackboard_id: BoardName | None = None
    token: Token | None = None  # the claim's own token: later commands on this claim must present it


class RenewClaim(Command):
    """The claimer is still at work: restart its claim timeout (a lease)."""

    signal_id: SignalIdText
    agent_id: Name
    token: Token | None = None
    blackboard_id: BoardName | None = None


class RetrySignal(Command):
    """Post the work of a FAILED, EXPIRED or CANCELLED signal again, linked to it by `retry_of`."""

    signal_id: SignalIdText
    posted_by: Name = "ps-skill"
    blackboard_id: BoardName | None = None


Reason = Annotated[str, Field(min_length=1, max_length=2000)]


class CancelSignal(Command):
    """End a signal that is not final on purpose: CANCELLED, with what waits on it; its run is stopped."""

    signal_id: SignalIdText
    cancelled_by: Name = "ps-skill"
    reason: Reason = "no reason given"
    blackboard_id: BoardName | None = None


class ApproveGate(Command):
    """A person approves an open gate: it COMPLETES, and what waits on it may run."""

    signal_id: SignalIdText
    approved_by: Printable
    note: Annotated[str, Field(max_length=2000)] | None = None
    blackboard_id: BoardName | None = None


class RejectGate(Command):
    """A person rejects an open gate: it FAILS, and what waits on it expires."""

    signal_id: SignalIdText
    rejected_by: Printable
    reason: Reason
    blackboard_id: BoardName | None = None


class NudgeSignal(Command):
    """A person's word to the agent running a CLAIMED signal, delivered at its next turn (`blackboard nudge`)."""

    signal_id: SignalIdText
    nudged_by: Printable
    text: Annotated[str, Field(min_length=1, max_length=8000)]
    blackboard_id: BoardName | None = None


class SetBudget(Command):
    """A board's budget from now on (`blackboard budget`); a limit left None stays as it was. The
    domain checks the values (domain/limits.py: finite, 0 or more, not below what was spent)."""

    board: BoardName
    usd: float | None = None  # the domain's rule names the field: finite, 0 or more, not below what was spent
    tokens: Annotated[int, Field(le=MAX_INT64)] | None = None
    set_by: Name = "ps-skill"
    reason: Annotated[str, Field(max_length=2000)] = ""


class CancelSignals(Command):
    """Cancel in bulk: every open signal of a board, or those posted with a correlation id (on a board,
    or on any), with what waits on them. At least one of the two must be given."""

    blackboard_id: BoardName | None = None
    posted_with: Name | None = None  # the correlation id the signals were posted with
    cancelled_by: Name = "ps-skill"
    reason: Reason = "no reason given"

    @model_validator(mode="after")
    def _something(self) -> CancelSignals:
        if self.blackboard_id is None and self.posted_with is None:
            raise ValueError(
                "name a board (blackboard_id) or a correlation id (posted_with) to cancel in bulk"
            )
        return self


def _landable(items: tuple[str, ...]) -> tuple[str, ...]:
    check_knowledge_items(
        items
    )  # raises InvalidInput naming the item, which no model turns into a ValidationError
    return items


class CompleteSignal(Command):
    """UC-003: the claimer hands back its result. Each knowledge item must be able to land as an entry's
    value, or the completion is refused with nothing written (entry_values.py)."""

    signal_id: SignalIdText
    agent_id: Name
    artifact_path: NonEmpty | None = None
    knowledge_items: Annotated[tuple[str, ...], AfterValidator(_landable)] = ()
    blackboard_id: BoardName | None = None
    token: Token | None = None
    usage: SignalUsage | None = None  # what a runner's run of it cost
    # the attempt whose claim the run held (the claimed signal's `attempt`): a run refused because that
    # claim ended by another hand is charged for that attempt, once; None: the signal's current attempt
    attempt: Annotated[int, Field(ge=1)] | None = None


class FailSignal(Command):
    """The claimer reports that it could not do the work."""

    signal_id: SignalIdText
    agent_id: Name
    error: NonEmpty
    blackboard_id: BoardName | None = None
    token: Token | None = None
    usage: SignalUsage | None = None  # what a runner's run of it cost
    # the attempt whose claim the run held (the claimed signal's `attempt`): a run refused because that
    # claim ended by another hand is charged for that attempt, once; None: the signal's current attempt
    attempt: Annotated[int, Field(ge=1)] | None = None
    # the handler asked for a retry this many seconds from now (`{"retry_after": S}`): with attempts left,
    # that is the wait instead of the backoff's
    retry_after: Annotated[float, Field(ge=0, le=86_400, allow_inf_nan=False)] | None = None
    # its run showed no progress for this many seconds (the agent file's `stall_timeout`) and was stopped:
    # recorded as AgentSignalStalled with this failure (docs/control.md, "Stalls")
    stalled: Annotated[float, Field(ge=0, allow_inf_nan=False)] | None = None


class ClaimSignals(Command):
    """A worker's batch: claim up to `limit` of these signals of one board, in this order, skipping
    any that is no longer claimable (taken meanwhile, expired, waiting). One append for all."""

    blackboard_id: BoardName
    signal_ids: tuple[SignalIdText, ...] = Field(min_length=1)
    agent_id: Name
    # a token of its own for each signal (one not named is claimed with none): each claim's proof is
    # that claim's alone, so a run holding one cannot act on another claim of the same worker
    tokens: dict[SignalIdText, Token] = Field(default_factory=dict)
    limit: Count = 1
    worker_id: WorkerId | None = None  # the claiming worker's public id, in its claims' metadata (`worker`)
    # the runner the worker runs these claims with (claude-code, anthropic, openai), so a person may nudge
    # their runs; None: a handler runs them, which takes no nudge
    runner: Name | None = None

    @model_validator(mode="after")
    def _a_token_per_claim(self) -> ClaimSignals:
        unknown = sorted(set(self.tokens) - set(self.signal_ids))
        if unknown:
            raise ValueError(f"tokens names signals not claimed here: {', '.join(unknown)}")
        if len(set(self.tokens.values())) < len(self.tokens):
            raise ValueError("tokens must differ: every claim has a token of its own")
        return self


class RecordOutcomes(Command):
    """A worker's batch: the completions and failures of signals it holds on one board, in one
    append. An outcome that is refused (its claim expired meanwhile) does not stop the others."""

    blackboard_id: BoardName
    agent_id: Name
    outcomes: tuple[CompleteSignal | FailSignal, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _one_agent(self) -> RecordOutcomes:
        """One agent's batch: an outcome naming another agent is a mistake, not a delegation."""
        others = sorted({o.agent_id for o in self.outcomes} - {self.agent_id})
        if others:
            raise ValueError(f"every outcome must be {self.agent_id}'s, not {', '.join(others)}'s")
        return self


class ExpireSignals(Command):
    """Move every signal past its timeout to EXPIRED (on one board, or on all)."""

    blackboard_id: BoardName | None = None


class EnforceDeadline(Command):
    """Record the expiry of one signal if it is past its deadline, as any command that finds it late does
    (a wait that reached the deadline: no sweeper needed); nothing otherwise."""

    signal_id: SignalIdText
    blackboard_id: BoardName | None = None
    by: Name = "waiter"  # the actor of the events it records


class GetOpenSignals(Message):
    """Claimable signals that target any of the capabilities, oldest first."""

    capabilities: tuple[Name, ...] = ()
    limit: Count = 10
    blackboard_id: BoardName | None = None
    catch_up: bool = (
        True  # False: as the read model stands, sparing two queries (a worker: its claim decides)
    )


class GetSignalById(Message):
    signal_id: SignalIdText
    at: Position | None = None  # as the signal was right after this log position


class ListSignals(Message):
    status: SignalStatus | None = None
    signal_type: SignalType | None = None
    capability: Name | None = None
    capabilities: tuple[Name, ...] = ()  # any of them, with `capability` (a repeated --capability)
    blackboard_id: BoardName | None = None
    limit: Count | None = None
    at: Position | None = None  # as the boards were right after this log position
    labels: Labels = ()  # only signals carrying every one of these


class WatchSignals(Message):
    """UC-004: completions of these types after global position `since`, waiting up to `timeout` seconds."""

    signal_types: tuple[SignalType, ...] = Field(min_length=1)
    since: Position = 0
    blackboard_id: BoardName | None = None
    labels: Labels = ()  # only signals carrying every one of these
    timeout: Seconds | None = None  # None: as long as it takes


class WaitForSignal(Message):
    """`wait`: the signal once it is final, waiting up to `timeout` seconds."""

    signal_id: SignalIdText
    timeout: Seconds | None = None  # None: as long as it takes
    blackboard_id: BoardName | None = None


class FollowSignal(Message):
    """`show --follow`: the run's output after `after` (`ATTEMPT:SEQUENCE`, as a follow gave it back; None:
    from the first line) as it comes, then the signal once it is final, waiting up to `timeout` seconds."""

    signal_id: SignalIdText
    after: Annotated[str, AfterValidator(_cursor)] | None = None
    timeout: Seconds | None = None  # None: as long as it takes


class ReadEvents(Message):
    """The event log after global position `since`, in order (`blackboard events`)."""

    since: Position = 0
    limit: Count | None = None
    blackboard_id: BoardName | None = None
