"""Gates that call a person (docs/webhooks.md): which announcement a gate is owed, and when a delivery that
failed is tried again or given up.

Pure rules: the time comes in as `at`; the sending, the storing and the body are the infrastructure's.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from blackboard.domain.signal_kinds import SignalStatus
from blackboard.domain.signals import AgentSignal

GATE_OPENED = "gate.opened"
# how a gate that was announced open ended: the announcement that follows it
GATE_ENDINGS = {
    SignalStatus.COMPLETED: "gate.approved",
    SignalStatus.FAILED: "gate.rejected",
    SignalStatus.EXPIRED: "gate.timed_out",
    SignalStatus.CANCELLED: "gate.cancelled",
}
EVENTS = (GATE_OPENED, *GATE_ENDINGS.values())

# a delivery's statuses: still to be sent (or sent again), received (2xx), or no more tries
PENDING, DELIVERED, GIVEN_UP = "pending", "delivered", "given up"


def opens_now(signal: AgentSignal, at: datetime) -> bool:
    """A gate a person may decide now: open (nothing upstream to wait for) and its `--not-before` come."""
    return signal.is_open_gate and signal.waits_for_a_person(at)


def ending_of(signal: AgentSignal) -> str | None:
    """The announcement a gate that was announced open is owed once it ended; None while it waits (or for
    a signal that is no gate)."""
    return GATE_ENDINGS.get(signal.status) if signal.gate else None


def next_try(
    attempts: int, first_at: datetime, at: datetime, first_wait: timedelta, give_up_after: timedelta
) -> datetime | None:
    """After `attempts` failed tries (the last at `at`) of a delivery made at `first_at`: when to try again,
    waiting `first_wait` after the first failure and twice as long after each next one, the last try at
    `give_up_after` from `first_at`; None once that last try failed too (given up)."""
    deadline = first_at + give_up_after
    if at >= deadline:
        return None
    doubled = first_wait.total_seconds() * 2 ** min(max(attempts - 1, 0), 60)
    return min(at + timedelta(seconds=min(doubled, give_up_after.total_seconds())), deadline)
