"""Blocking until something happens on a board, by following the event log from a position.

The position is taken before the current state is read, so an event that lands in between is
still found in the log: no wake-up is lost, whichever process made the change.

A wait on a signal also wakes at the signal's deadline, which it computes by the board's one rule
(`BlackboardQueries.deadlines`: domain `deadline`, the live workers read when it comes), and has the
board decide there and then (`BlackboardService.enforce_deadline`, as any command that finds a signal
late): so it ends EXPIRED when the signal does, whether a sweeper runs or not. A signal that waits for
upstreams (`after`) has no deadline of its own until they end: the wait takes the earliest deadline of the
open upstreams it waits for (and theirs, up the chain), and has the board decide each there, so an upstream
that expires ends the awaited signal's wait as the board's cascade decides it. Which events may change the
awaited signal (`may_change`) is one rule, for the blocking wait and the async API's alike.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Collection, Iterator
from typing import TYPE_CHECKING

from blackboard.application.callers import Caller
from blackboard.application.commands import EnforceDeadline, GetSignalById, WatchSignals
from blackboard.application.errors import StoreUnavailable, WaitTimedOut
from blackboard.application.output import Cursor, OutputLine, RunOutputStore
from blackboard.application.ports import Clock, EventStore, LogNotifier, Recorded
from blackboard.application.queries import BlackboardQueries
from blackboard.domain.errors import NotFound
from blackboard.domain.events import BlackboardEvent, EntryConflictResolved, EntryWritten
from blackboard.domain.signals import AgentSignal

if TYPE_CHECKING:
    from blackboard.application.service import BlackboardService

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


# seconds before a deadline the board did not act on is looked at again (a worker that fits beat meanwhile)
RECHECK = 1.0
MAX_CHAIN = 1000  # upstreams a wait looks at for their deadlines, at most
OUTPUT_POLL = 0.25  # seconds between a follow's looks at a run's output (it moves no log: it is not events)


class Watcher:
    def __init__(
        self,
        store: EventStore,
        queries: BlackboardQueries,
        notifier: LogNotifier,
        service: Callable[[], BlackboardService] | None = None,
        clock: Clock | None = None,
        output: Callable[[], RunOutputStore] | None = None,
    ) -> None:
        """`service` (built when a deadline first comes) records an expiry a wait reaches, by `clock`'s time;
        without them a wait ends only with what the log brings. `output` (built when a follow first reads)
        holds the runs' output a follow reads; without it a follow sees only the outcome."""
        self._output = output
        self._store = store
        self._queries = queries
        self._notifier = notifier
        self._service = service
        self._clock = clock

    def acting(self, caller: Caller) -> Watcher:
        """This watcher for one caller (an MCP session's): a caller confined to a board waits on no other."""
        clone = copy.copy(self)
        clone._queries = self._queries.acting(caller)
        return clone

    def position(self, blackboard_id: str) -> int:
        """The log's last position, where a follower of one of the board's topics starts (`watch_topic`)."""
        self._queries.reach(blackboard_id)
        return self._store.last_position()

    def wait_for_signal(self, signal_id: str, timeout: float | None = None) -> AgentSignal:
        """The signal once it is COMPLETED, FAILED, EXPIRED, UNCLAIMED or CANCELLED (at once if it already is).
        At its deadline (a post timeout, a lapsed claim, a gate's timeout) the board decides, and the wait
        goes on with what it decided: EXPIRED ends it; a lapsed claim with attempts left is POSTED again,
        and the wait waits for the final outcome. WaitTimedOut once `timeout` seconds have passed first."""
        position = self._store.last_position()
        signal = self._queries.get_signal(GetSignalById(signal_id=signal_id))
        until = _deadline(timeout)
        while not signal.status.is_final:
            chain = self._open_chain(signal)
            due_in, due = self._due_in(chain)
            if due_in is not None and due_in <= 0:
                for late in due:  # the awaited signal's own, or an upstream's it waits for
                    self._enforce(late)
                signal = self._queries.get_signal(GetSignalById(signal_id=signal_id))
                if signal.status.is_final:
                    break
                chain = self._open_chain(signal)
                due_in, _ = self._due_in(chain)
                if due_in is not None and due_in <= 0:  # the board saw it otherwise (a worker that fits beat)
                    due_in = RECHECK
            if not self._wait_past(position, until, f"{signal_id} to finish", timeout, due_in):
                continue  # its deadline came: the board decides
            watched = _watched(chain)
            while records := self._store.read_all(after=position, limit=1000):
                position = records[-1].position
                if any(may_change(r.event, watched) for r in records):
                    signal = self._queries.get_signal(GetSignalById(signal_id=signal_id))
        return signal

    def follow(
        self, signal_id: str, after: Cursor | None = None, timeout: float | None = None
    ) -> Iterator[OutputLine | AgentSignal]:
        """The run's output lines after `after` (default: from the first) as they come, then the signal once
        it ends, as `wait_for_signal` ends it (its deadline acted on the same way): a worker writes a run's
        lines before its outcome, so the outcome comes after every line of the run. WaitTimedOut once
        `timeout` seconds have passed with the signal still open."""
        return (item for item in self.following(signal_id, after, timeout) if item is not None)

    def following(
        self, signal_id: str, after: Cursor | None = None, timeout: float | None = None
    ) -> Iterator[OutputLine | AgentSignal | None]:
        """`follow`, with a None each time it has caught up and is about to wait (a page of it ends there:
        the MCP tool's, the web view's). An unknown signal, or one out of the caller's reach, is refused here,
        before the first item."""
        position = self._store.last_position()
        signal = self._queries.get_signal(GetSignalById(signal_id=signal_id))
        return self._following(signal, position, after or Cursor(), _deadline(timeout), timeout)

    def _following(
        self, signal: AgentSignal, position: int, cursor: Cursor, until: float | None, timeout: float | None
    ) -> Iterator[OutputLine | AgentSignal | None]:
        signal_id = signal.signal_id
        while True:
            ended = signal.status.is_final  # read before the lines: every line of an ended run is kept by now
            while lines := self._lines_after(signal_id, cursor):
                yield from lines
                cursor = lines[-1].cursor
            if ended:
                yield signal
                return
            yield None
            chain = self._open_chain(signal)
            due_in, due = self._due_in(chain)
            if due_in is not None and due_in <= 0:
                for late in due:
                    self._enforce(late)
                signal = self._queries.get_signal(GetSignalById(signal_id=signal_id))
                continue
            wake = OUTPUT_POLL if due_in is None else min(OUTPUT_POLL, due_in)
            if not self._wait_past(position, until, f"{signal_id} to finish", timeout, wake):
                continue  # a look at its output (or its deadline came)
            watched = _watched(chain)
            while records := self._store.read_all(after=position, limit=1000):
                position = records[-1].position
                if any(may_change(r.event, watched) for r in records):
                    signal = self._queries.get_signal(GetSignalById(signal_id=signal_id))

    def _lines_after(self, signal_id: str, cursor: Cursor) -> list[OutputLine]:
        if self._output is None:
            return []
        return self._output().after(signal_id, cursor)

    def awaited_chain(self, signal_id: str) -> frozenset[str]:
        """The ids a wait on the signal watches (`may_change`): its own and those of the open upstreams it
        waits for, up the chain, whose claims, renewals and ends move its deadline or end it."""
        signal = self._queries.get_signal(GetSignalById(signal_id=signal_id))
        return _watched(self._open_chain(signal))

    def _due_in(self, chain: list[AgentSignal]) -> tuple[float | None, list[AgentSignal]]:
        """Seconds until the earliest deadline the wait must act on, as the board would see it now (<= 0: it
        has come), and the signals whose deadline has come: the awaited signal's own (the chain's first), or,
        while it waits for upstreams, theirs (the rest: _open_chain). None when there is none, or this
        watcher cannot act on one."""
        if self._service is None or self._clock is None:
            return None, []
        now = self._clock.now()
        dues = self._queries.deadlines(chain, now)
        if not dues:
            return None, []
        late = [s for s in chain if s.signal_id in dues and dues[s.signal_id] <= now]
        return (min(dues.values()) - now).total_seconds(), late

    def _open_chain(self, signal: AgentSignal) -> list[AgentSignal]:
        """The signal and the open upstreams it waits for, and theirs, up the chain (each once)."""
        chain, seen, todo = [signal], {signal.signal_id}, list(signal.waiting_for)
        while todo and len(seen) < MAX_CHAIN:
            upstream_id = todo.pop()
            if upstream_id in seen:
                continue
            seen.add(upstream_id)
            try:
                upstream = self._queries.get_signal(GetSignalById(signal_id=upstream_id))
            except NotFound:
                continue
            if not upstream.status.is_final:
                chain.append(upstream)
                todo.extend(upstream.waiting_for)
        return chain

    def _enforce(self, signal: AgentSignal) -> AgentSignal:
        """The board records the expiry if the signal is past its deadline (nothing otherwise); the signal
        as it stands after. A database outage meanwhile: the signal as it was, looked at again later."""
        assert self._service is not None
        try:
            return self._service().enforce_deadline(
                EnforceDeadline(signal_id=signal.signal_id, blackboard_id=signal.blackboard_id)
            )
        except StoreUnavailable:
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
        self._queries.reach(blackboard_id)
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

    def wait_until(self, holds: Callable[[], bool], what: str, timeout: float) -> None:
        """Until `holds()` (a read of the board) is true, asked again each time the log moves: the position
        is taken before each read, so a write committed in between still wakes it. WaitTimedOut, saying
        `what`, once `timeout` seconds have passed first."""
        deadline = _deadline(timeout)
        while True:
            position = self._store.last_position()
            if holds():
                return
            self._wait_past(position, deadline, what, timeout)

    def _wait_past(
        self,
        position: int,
        deadline: float | None,
        what: str,
        timeout: float | None,
        wake_in: float | None = None,
    ) -> bool:
        """Until the log moves past `position` (True), or `wake_in` seconds pass first (False: the awaited
        signal's deadline came); a database outage meanwhile is waited out. WaitTimedOut at `deadline`,
        saying when the signal's deadline comes (`recheck_in`)."""
        wake = None if wake_in is None else time.monotonic() + wake_in
        while True:
            try:
                if self._store.last_position() > position:
                    return True
            except StoreUnavailable:
                pass  # a restart or a network cut: keep waiting, the log is read again after it
            now = time.monotonic()
            remaining = None if deadline is None else deadline - now
            if remaining is not None and remaining <= 0:
                raise WaitTimedOut(what, timeout or 0, None if wake is None else max(0.0, wake - now))
            if wake is not None and now >= wake:
                return False
            slices = [1.0, *(t for t in (remaining, None if wake is None else wake - now) if t is not None)]
            self._notifier.wait(position, min(slices))


def _watched(chain: list[AgentSignal]) -> frozenset[str]:
    """The ids of an awaited signal's open chain (_open_chain), and the upstreams its first waits for (one
    that ended meanwhile still ends or frees it)."""
    return frozenset(s.signal_id for s in chain) | chain[0].waiting_for


def may_change(event: BlackboardEvent, chain: Collection[str]) -> bool:
    """Whether the event may change an awaited signal's status or deadline, `chain` its own id and those of
    the open upstreams up its chain (Watcher.awaited_chain): any event of one of them (a claim or a renewal
    moves its deadline, which the awaited signal waits behind; an end makes it claimable, or ends it)."""
    return getattr(event, "signal_id", None) in chain


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
