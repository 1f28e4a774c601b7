"""Blocking until something happens on a board, by following the event log from a position.

The position is taken before the current state is read, so an event that lands in between is
still found in the log: no wake-up is lost, whichever process made the change.
"""

from __future__ import annotations

import time

from blackboard.application.commands import GetSignalById, WatchSignals
from blackboard.application.errors import StoreUnavailable, WaitTimedOut
from blackboard.application.ports import EventStore, LogNotifier, Recorded
from blackboard.application.queries import BlackboardQueries
from blackboard.domain.events import BlackboardEvent, EntryConflictResolved, EntryWritten
from blackboard.domain.signals import AgentSignal

FINAL_EVENTS = frozenset(
    {
        "AgentSignalCompleted",
        "AgentSignalFailed",
        "AgentSignalExpired",
        "AgentSignalUnclaimed",
        "AgentSignalCancelled",
        "AgentSignalApproved",  # a gate a person decided
        "AgentSignalRejected",
    }
)


class Watcher:
    def __init__(self, store: EventStore, queries: BlackboardQueries, notifier: LogNotifier) -> None:
        self._store = store
        self._queries = queries
        self._notifier = notifier

    def wait_for_signal(self, signal_id: str, timeout: float | None = None) -> AgentSignal:
        """The signal once it is COMPLETED, FAILED, EXPIRED, UNCLAIMED or CANCELLED (at once if it already is)."""
        position = self._store.last_position()
        signal = self._queries.get_signal(GetSignalById(signal_id=signal_id))
        deadline = _deadline(timeout)
        while not signal.status.is_final:
            self._wait_past(position, deadline, f"{signal_id} to finish", timeout)
            while records := self._store.read_all(after=position, limit=1000):
                position = records[-1].position
                if any(
                    r.event.signal_id == signal_id and r.event.event_type in FINAL_EVENTS for r in records
                ):
                    signal = self._queries.get_signal(GetSignalById(signal_id=signal_id))
        return signal

    def watch(self, query: WatchSignals, timeout: float | None = None) -> tuple[AgentSignal, int]:
        """The first signal of the given types (and board) completing after `query.since`, and the
        position to pass as `since` to see the next one: its completion's, so a second completion
        read in the same page is found by the next call, not skipped."""
        deadline = _deadline(timeout)
        kinds = "/".join(query.signal_types)
        while True:
            found = self._queries.watch(query)
            if found.signals:
                return found.signals[0], found.completed_at[0]
            query = query.model_copy(update={"since": found.position})
            self._wait_past(found.position, deadline, f"a {kinds} signal to complete", timeout)

    def watch_topic(
        self, blackboard_id: str, topic: str, since: int, timeout: float | None = None
    ) -> list[Recorded]:
        """The accepted entry versions published to `topic` on the board after log position `since`,
        in log order, as soon as there is at least one (each record's position is the `since` that
        sees the ones after it). Only the log is read, from `since` on: a write committed while
        this waits is found in it however the wake-up came."""
        deadline = _deadline(timeout)
        position = since
        while True:
            found: list[Recorded] = []
            while records := self._store.read_all(after=position, limit=1000):
                position = records[-1].position
                found += [r for r in records if published(r.event, blackboard_id, topic)]
            if found:
                return found
            self._wait_past(position, deadline, f"an entry on topic {topic}", timeout)

    def _wait_past(self, position: int, deadline: float | None, what: str, timeout: float | None) -> None:
        """Until the log moves past `position`; a database outage meanwhile is waited out."""
        while True:
            try:
                if self._store.last_position() > position:
                    return
            except StoreUnavailable:
                pass  # a restart or a network cut: keep waiting, the log is read again after it
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                raise WaitTimedOut(what, timeout or 0)
            self._notifier.wait(position, 1.0 if remaining is None else min(remaining, 1.0))


def published(event: BlackboardEvent, blackboard_id: str, topic: str) -> bool:
    """A version of an entry the board accepted (a write or a resolution, not a candidate left in
    conflict), published to `topic`."""
    return (
        isinstance(event, EntryWritten | EntryConflictResolved)
        and event.blackboard_id == blackboard_id
        and topic in event.topics
    )


def _deadline(timeout: float | None) -> float | None:
    return None if timeout is None else time.monotonic() + timeout
