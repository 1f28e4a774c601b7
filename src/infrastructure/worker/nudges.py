"""The nudges of the runs a worker holds: a person's words (`blackboard nudge`), each handed to its run once.

The stop watch (worker/cancels.py) reads, at each move of the log, the rows of the signals running here; a row
that counts more nudges than were fetched for it has the signal's nudges read from the log (the store's
`nudges_of`), and those for the attempt its run works on, not yet handed over, wait for the run to ask
(`take`, from its control: WorkerControl.nudges). No query is made while no nudge comes.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping

from blackboard.application.ports import EventStore, SignalState
from blackboard.application.runners import Nudge
from blackboard.domain.events import AgentSignalNudged
from blackboard.domain.signals import AgentSignal, SignalStatus

logger = logging.getLogger("blackboard.worker")


class NudgeInbox:
    """`running`: the claims running here, by signal (their board, attempt and token)."""

    def __init__(self, store: EventStore, running: Callable[[], Mapping[str, AgentSignal]]) -> None:
        self._store, self._running = store, running
        self._counted: dict[str, int] = {}  # by signal: the count of nudges its row had when last fetched
        self._handed: dict[str, set[str]] = {}  # by signal: the event ids handed to (or waiting for) a run
        self._waiting: dict[str, list[tuple[str | None, Nudge]]] = {}  # by signal: (claim token, nudge)
        self._lock = threading.Lock()

    def seen(self, states: Iterable[SignalState]) -> None:
        """From the stop watch's thread: the rows as it read them; a signal counting a nudge more has its
        nudges fetched."""
        running = self._running()
        for state in states:
            claimed = running.get(state.signal_id)
            if (
                claimed is None
                or state.status is not SignalStatus.CLAIMED
                or state.claim_token != claimed.claim_token
                or state.nudges <= self._counted.get(state.signal_id, 0)
            ):
                continue
            self._fetch(claimed, state.nudges)

    def _fetch(self, claimed: AgentSignal, count: int) -> None:
        events = self._store.nudges_of(claimed.blackboard_id, claimed.signal_id)
        with self._lock:
            self._counted[claimed.signal_id] = count
            handed = self._handed.setdefault(claimed.signal_id, set())
            for event in events:
                if not isinstance(event, AgentSignalNudged) or event.event_id in handed:
                    continue
                handed.add(event.event_id)
                if event.attempt == claimed.attempt:  # an earlier attempt's run had its own
                    nudge = Nudge(event.nudged_by, event.text)
                    self._waiting.setdefault(claimed.signal_id, []).append((claimed.claim_token, nudge))
                    logger.info("%s: a nudge from %s for its run", claimed.signal_id, event.nudged_by)

    def take(self, signal_id: str, token: str | None) -> list[Nudge]:
        """The nudges waiting for the run of this claim (never one fetched for another claim of the
        signal), handed over once."""
        with self._lock:
            waiting = self._waiting.get(signal_id, [])
            taken = [nudge for held, nudge in waiting if held == token]
            if taken:
                self._waiting[signal_id] = [(held, nudge) for held, nudge in waiting if held != token]
        return taken

    def forget(self, signal_id: str) -> None:
        """Its run's outcome is recorded: what it knew of the signal goes (a retry claimed here fetches anew,
        keeping only its own attempt's)."""
        with self._lock:
            self._counted.pop(signal_id, None)
            self._handed.pop(signal_id, None)
            self._waiting.pop(signal_id, None)
