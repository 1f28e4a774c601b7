"""Whether a stored event is one the board could have recorded: an import replays a whole board through here.

Each signal event has the rule of the command that records it, checked with the aggregate's own
check (`BlackboardAggregate.check_*`, the very method the command calls) against the state the
events before it left; then the event is folded in as any replay folds it. What the log does not
hold is not judged: a claimant's score against its threshold (the importing machine may not have the
agent files) and the token a completion presented (only the claim records its token).

An event type without a rule here is refused: `admit` never lets through what it cannot judge, and
tests/unit/test_admission.py fails for a signal event type added to EVENT_TYPES without one.
"""

from __future__ import annotations

from functools import singledispatch

from blackboard.domain.blackboard import BlackboardAggregate
from blackboard.domain.errors import RuleViolation
from blackboard.domain.events import (
    AgentSignalCancelled,
    AgentSignalClaimed,
    AgentSignalClaimRenewed,
    AgentSignalCompleted,
    AgentSignalExpired,
    AgentSignalFailed,
    AgentSignalPosted,
    AgentSignalUnclaimed,
    BlackboardEvent,
)
from blackboard.domain.signals import SignalStatus


class NoRule(RuleViolation):
    def __init__(self, event_type: str) -> None:
        super().__init__(f"no rule of this blackboard's judges a {event_type}")


def admit(board: BlackboardAggregate, event: BlackboardEvent) -> None:
    """Raise the broken rule's error (a BlackboardError) if `board` could not have recorded `event`
    from its state now; else fold it in."""
    rule(event, board)
    board.apply(event)


@singledispatch
def rule(event: BlackboardEvent, board: BlackboardAggregate) -> None:
    raise NoRule(type(event).__name__)


def has_rule(event_type: type[BlackboardEvent]) -> bool:
    return rule.dispatch(event_type) is not rule.dispatch(BlackboardEvent)


@rule.register
def _(event: AgentSignalPosted, board: BlackboardAggregate) -> None:
    if event.dedupe_key is not None and (existing := board.find_by_key(event.dedupe_key)) is not None:
        raise DedupedPost(event.signal_id, event.dedupe_key, existing.signal_id)
    board.check_post(event.signal_id, event.posted_by, event.target_capabilities, event.priority, event.after)
    if len(set(event.after)) != len(event.after):
        raise RepeatedUpstream(event.signal_id)
    if event.retry_of is not None:
        board.check_retriable(event.retry_of)


@rule.register
def _(event: AgentSignalClaimed, board: BlackboardAggregate) -> None:
    board.check_claimable(event.signal_id, event.occurred_at)


@rule.register
def _(event: AgentSignalClaimRenewed, board: BlackboardAggregate) -> None:
    board.check_claimer(event.signal_id, event.claimed_by, "renewed", _token(board, event))


@rule.register
def _(event: AgentSignalCompleted, board: BlackboardAggregate) -> None:
    board.check_claimer(event.signal_id, event.completed_by, "completed", _token(board, event))


@rule.register
def _(event: AgentSignalFailed, board: BlackboardAggregate) -> None:
    board.check_claimer(event.signal_id, event.failed_by, "failed", _token(board, event))


@rule.register
def _(event: AgentSignalExpired, board: BlackboardAggregate) -> None:
    board.check_open(event.signal_id, "expired")  # its timeout is the sweeper's setting, not the log's


@rule.register
def _(event: AgentSignalUnclaimed, board: BlackboardAggregate) -> None:
    board.check_unclaimed(event.signal_id)


@rule.register
def _(event: AgentSignalCancelled, board: BlackboardAggregate) -> None:
    signal = board.check_open(event.signal_id, "cancelled")
    if event.cause is not None:  # taken down by an upstream's cancel: one it waits on, cancelled already
        upstream = board.signal(event.cause) if event.cause in signal.after else None
        if upstream is None or upstream.status is not SignalStatus.CANCELLED:
            raise CancelCause(event.signal_id, event.cause, upstream.status if upstream else None)


def _token(board: BlackboardAggregate, event: BlackboardEvent) -> str | None:
    """The token the command presented: the log keeps only the claim's, so it is taken as given."""
    return board.signal(event.signal_id).claim_token


class DedupedPost(RuleViolation):
    def __init__(self, signal_id: str, dedupe_key: str, existing: str) -> None:
        super().__init__(
            f"{signal_id} is posted with dedupe key {dedupe_key!r}, which names {existing} already: "
            "such a post records nothing"
        )


class RepeatedUpstream(RuleViolation):
    def __init__(self, signal_id: str) -> None:
        super().__init__(f"{signal_id} names an upstream twice; a post records each once")


class CancelCause(RuleViolation):
    def __init__(self, signal_id: str, cause: str, status: SignalStatus | None) -> None:
        why = f"it is {status}, not CANCELLED" if status else f"{signal_id} does not wait on it"
        super().__init__(f"{signal_id}'s cancel names upstream {cause} as its cause, but {why}")
