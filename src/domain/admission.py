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
    AgentSignalApproved,
    AgentSignalAttemptFailed,
    AgentSignalCancelled,
    AgentSignalClaimed,
    AgentSignalClaimRenewed,
    AgentSignalCompleted,
    AgentSignalExpired,
    AgentSignalFailed,
    AgentSignalNudged,
    AgentSignalPosted,
    AgentSignalRejected,
    AgentSignalRunCharged,
    AgentSignalStalled,
    AgentSignalUnclaimed,
    BlackboardEvent,
    BoardBudgetSet,
)
from blackboard.domain.limits import Spent, new_budget
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
    board.check_post(
        event.signal_id,
        event.posted_by,
        event.target_capabilities,
        event.priority,
        event.after,
        event.max_attempts,
        event.gate,
        event.timeout_s,
    )
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
    _no_attempt_left(board, event.signal_id, "FAILED")


@rule.register
def _(event: AgentSignalStalled, board: BlackboardAggregate) -> None:
    """A stall is recorded by the claimer's failure of the attempt under way (fail_signal), just before it."""
    board.check_claimer(event.signal_id, event.actor, "failed", _token(board, event))
    signal = board.signal(event.signal_id)
    if event.attempt != signal.attempt:
        raise AttemptOutOfTurn(
            event.signal_id, f"attempt {event.attempt} stalled while attempt {signal.attempt} ran"
        )


@rule.register
def _(event: AgentSignalExpired, board: BlackboardAggregate) -> None:
    board.check_open(event.signal_id, "expired")  # its timeout is the sweeper's setting, not the log's
    _no_attempt_left(board, event.signal_id, "EXPIRED")


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


@rule.register
def _(event: AgentSignalRunCharged, board: BlackboardAggregate) -> None:
    board.check_charge(event.signal_id, event.charged_to, _token_of_charge(board, event), event.attempt)


def _token_of_charge(board: BlackboardAggregate, event: AgentSignalRunCharged) -> str | None:
    """The log keeps no run's token in a charge: the claim's own stands for it, and the admission checks the
    rest (who, which attempt, how its claim ended). It stands only for the claim of the attempt charged: a
    later claim's token never makes a lapsed attempt's run look like the current claim's."""
    return board.signal(event.signal_id).claim_token


@rule.register
def _(event: AgentSignalAttemptFailed, board: BlackboardAggregate) -> None:
    """A failed attempt with attempts left: the claim it ends is the claimer's (a failure), or lapsed (the
    sweeper's; its timeout is a setting, not the log's), and it is the attempt under way, not the last."""
    signal = board.signal(event.signal_id)
    if event.expired:
        board.check_open(event.signal_id, "retried")
        if signal.status is not SignalStatus.CLAIMED:
            raise AttemptOutOfTurn(event.signal_id, f"its claim lapsed while it was {signal.status.value}")
    else:
        board.check_claimer(event.signal_id, event.claimed_by or "", "failed", _token(board, event))
    if event.claimed_by != signal.claimed_by:
        raise AttemptOutOfTurn(event.signal_id, f"{event.claimed_by} did not hold its claim")
    if event.attempt != signal.attempt or not event.attempt < event.max_attempts:
        raise AttemptOutOfTurn(
            event.signal_id,
            f"attempt {event.attempt} of {event.max_attempts} failed while attempt {signal.attempt} ran",
        )
    if signal.max_attempts is not None and event.max_attempts != signal.max_attempts:
        raise AttemptOutOfTurn(
            event.signal_id, f"it was posted with {signal.max_attempts} attempts, not {event.max_attempts}"
        )
    if event.retry_at < event.occurred_at:
        raise AttemptOutOfTurn(event.signal_id, "its next attempt would come before this one failed")


def _no_attempt_left(board: BlackboardAggregate, signal_id: str, ends: str) -> None:
    """A claimed signal posted with attempts left ends in a retry, never FAILED or EXPIRED: the post's
    `max_attempts` is in the log (a claimer's own policy is in its agent file, which the log does not hold)."""
    signal = board.signal(signal_id)
    if (
        signal.status is SignalStatus.CLAIMED
        and signal.max_attempts is not None
        and signal.attempt < signal.max_attempts
    ):
        raise AttemptOutOfTurn(
            signal_id,
            f"{ends} on attempt {signal.attempt} of {signal.max_attempts}: a failed attempt is retried",
        )


@rule.register
def _(event: AgentSignalApproved, board: BlackboardAggregate) -> None:
    board.check_open_gate(event.signal_id, "approved", event.occurred_at)


@rule.register
def _(event: AgentSignalRejected, board: BlackboardAggregate) -> None:
    board.check_open_gate(event.signal_id, "rejected", event.occurred_at)


@rule.register
def _(event: AgentSignalNudged, board: BlackboardAggregate) -> None:
    signal = board.check_nudge(event.signal_id, event.nudged_by, event.text)
    if event.attempt != signal.attempt:
        raise NudgeOutOfTurn(event.signal_id, event.attempt, signal.attempt)


@rule.register
def _(event: BoardBudgetSet, board: BlackboardAggregate) -> None:
    """The board's own event: the values' rules (finite, 0 or more). Not the spent-so-far rule: a budget may
    be set below what runs spent later, and the log's usage is judged by the runs, not by the budget."""
    new_budget(board.budget, event.usd, event.tokens, Spent())


def _token(board: BlackboardAggregate, event: BlackboardEvent) -> str | None:
    """The token the command presented: the log keeps only the claim's, so it is taken as given."""
    return board.signal(event.signal_id).claim_token


class AttemptOutOfTurn(RuleViolation):
    def __init__(self, signal_id: str, why: str) -> None:
        super().__init__(f"{signal_id}: an attempt's end no command records: {why}")


class NudgeOutOfTurn(RuleViolation):
    def __init__(self, signal_id: str, attempt: int, running: int) -> None:
        super().__init__(
            f"{signal_id}'s nudge is for attempt {attempt}, but attempt {running} runs: a nudge names the attempt "
            "under way"
        )


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
