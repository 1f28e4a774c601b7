"""How one event changes the signals it touches: shared by the aggregate and every read model."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import singledispatch

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
from blackboard.domain.signals import AgentSignal, FailedAttempt, SignalStatus, Stall

Lookup = Callable[[str], AgentSignal]
Dependants = Callable[[str], Iterable[str]]


def evolve(event: BlackboardEvent, lookup: Lookup, dependants: Dependants) -> list[AgentSignal]:
    """The signals `event` changes, in their new state. `lookup` gives a signal's state before it."""
    # the event's own class in the registry: one dict lookup, where singledispatch's call goes through
    # its cache of classes, a WeakKeyDictionary in Python (a rebuild calls this for every event)
    rule = _RULES.get(type(event)) or _evolve.dispatch(type(event))
    return rule(event, lookup, dependants)


@singledispatch
def _evolve(event: BlackboardEvent, lookup: Lookup, dependants: Dependants) -> list[AgentSignal]:
    raise TypeError(f"no evolution for {type(event).__name__}")


_RULES = _evolve.registry


@_evolve.register
def _(event: AgentSignalPosted, lookup: Lookup, dependants: Dependants) -> list[AgentSignal]:
    waiting = frozenset(d for d in event.after if lookup(d).status is not SignalStatus.COMPLETED)
    return [
        AgentSignal(
            signal_id=event.signal_id,
            blackboard_id=event.blackboard_id,
            signal_type=event.signal_type,
            payload=event.payload,
            target_capabilities=event.target_capabilities,
            posted_by=event.posted_by,
            created_at=event.occurred_at,
            after=event.after,
            waiting_for=waiting,
            claimable_since=None
            if waiting
            else max(event.occurred_at, event.not_before or event.occurred_at),
            dedupe_key=event.dedupe_key,
            retry_of=event.retry_of,
            read_keys=event.read_keys,
            write_keys=event.write_keys,
            budget_usd=event.budget_usd,
            priority=event.priority,
            not_before=event.not_before,
            max_attempts=event.max_attempts,
            gate=event.gate,
            timeout_s=event.timeout_s,
            flow_id=event.flow_id,
            step_id=event.step_id,
        )
    ]


@_evolve.register
def _(event: AgentSignalClaimed, lookup: Lookup, dependants: Dependants) -> list[AgentSignal]:
    return [
        lookup(event.signal_id).claimed(
            event.claimed_by,
            event.occurred_at,
            event.token,
            event.concurrency_key,
            event.reserved,
            event.runner,
        )
    ]


@_evolve.register
def _(event: AgentSignalClaimRenewed, lookup: Lookup, dependants: Dependants) -> list[AgentSignal]:
    return [lookup(event.signal_id).renewed(event.occurred_at)]


@_evolve.register
def _(event: AgentSignalCompleted, lookup: Lookup, dependants: Dependants) -> list[AgentSignal]:
    done = lookup(event.signal_id).completed(event.result, event.occurred_at, event.usage)
    return [done, *_released(event, lookup, dependants)]


@_evolve.register
def _(event: AgentSignalFailed, lookup: Lookup, dependants: Dependants) -> list[AgentSignal]:
    return [lookup(event.signal_id).failed(event.error, event.occurred_at, event.usage)]


@_evolve.register
def _(event: AgentSignalAttemptFailed, lookup: Lookup, dependants: Dependants) -> list[AgentSignal]:
    failed = FailedAttempt(
        attempt=event.attempt,
        claimed_by=event.claimed_by,
        error=event.reason,
        ended_at=event.occurred_at,
        retry_at=event.retry_at,
        max_attempts=event.max_attempts,
        expired=event.expired,
        resumed_from=event.usage.resumed_from if event.usage is not None else None,
    )
    return [lookup(event.signal_id).retried(failed, event.usage)]


@_evolve.register
def _(event: AgentSignalRunCharged, lookup: Lookup, dependants: Dependants) -> list[AgentSignal]:
    return [lookup(event.signal_id).charged(event.usage, event.attempt)]


@_evolve.register
def _(event: AgentSignalStalled, lookup: Lookup, dependants: Dependants) -> list[AgentSignal]:
    stall = Stall(
        attempt=event.attempt, actor=event.actor, seconds_idle=event.seconds_idle, at=event.occurred_at
    )
    return [lookup(event.signal_id).stalled(stall)]


@_evolve.register
def _(event: AgentSignalExpired, lookup: Lookup, dependants: Dependants) -> list[AgentSignal]:
    return [lookup(event.signal_id).expired(event.reason, event.occurred_at)]


@_evolve.register
def _(event: AgentSignalUnclaimed, lookup: Lookup, dependants: Dependants) -> list[AgentSignal]:
    return [lookup(event.signal_id).unclaimed(event.reason, event.occurred_at)]


@_evolve.register
def _(event: AgentSignalCancelled, lookup: Lookup, dependants: Dependants) -> list[AgentSignal]:
    return [lookup(event.signal_id).cancelled(event.why, event.occurred_at, event.cancelled_by, event.reason)]


@_evolve.register
def _(event: AgentSignalApproved, lookup: Lookup, dependants: Dependants) -> list[AgentSignal]:
    done = lookup(event.signal_id).approved(event.approved_by, event.note, event.occurred_at)
    return [done, *_released(event, lookup, dependants)]


@_evolve.register
def _(event: AgentSignalRejected, lookup: Lookup, dependants: Dependants) -> list[AgentSignal]:
    return [lookup(event.signal_id).rejected(event.rejected_by, event.reason, event.occurred_at)]


@_evolve.register
def _(event: AgentSignalNudged, lookup: Lookup, dependants: Dependants) -> list[AgentSignal]:
    return [lookup(event.signal_id).nudged()]


@_evolve.register
def _(event: BoardBudgetSet, lookup: Lookup, dependants: Dependants) -> list[AgentSignal]:
    return []  # the board's budget changes no signal (the read model keeps it in a table of its own)


def _released(event: BlackboardEvent, lookup: Lookup, dependants: Dependants) -> list[AgentSignal]:
    """What waits on a signal that just COMPLETED (by its claimer, or a gate by a person), one upstream less."""
    return [
        lookup(d).upstream_completed(event.signal_id, event.occurred_at) for d in dependants(event.signal_id)
    ]
