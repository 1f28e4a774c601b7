"""The stop watch: hears that a signal this worker runs was cancelled (or otherwise ended by another hand)
and has its handler or runner stopped, wherever the cancel was made.

It wakes when the log moves, as the claim loop does: a notification on PostgreSQL (LISTEN/NOTIFY), the
notifier's look at the log's end on SQLite; only then does it read the rows of the signals running here.
A run asks `reason(signal_id)` as often as it looks at its own timeout, which costs no query. A look reads
the status, claim token and cancel reason of every signal running here in one statement, however many run.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping

from blackboard.application.ports import EventStore, LogNotifier, SignalState, StoreUnavailable
from blackboard.application.queries import BlackboardQueries
from blackboard.domain.signals import SignalStatus

logger = logging.getLogger("blackboard.worker")  # the whole worker logs under one name, which users filter on

WAKE_EVERY = 0.25  # seconds: at most this long between looks at whether it is closing or something runs
MIN_GAP = 0.1  # seconds between two reads of the running rows: a busy log moves all the time


class StopWatch:
    """From `start` to `close`, on a thread of its own: the reasons to stop runs of this worker's claims."""

    def __init__(
        self,
        queries: BlackboardQueries,
        store: EventStore,
        notifier: LogNotifier,
        claims: Callable[[], Mapping[str, str | None]],
        seen: Callable[[list[SignalState]], None] = lambda states: None,
    ) -> None:
        """`claims`: the token of each claim running here, by signal (a claim's own: each is compared
        with its own signal's, so a claim taken over is told from one this worker holds). `seen`: told of
        the rows each look read (the nudge inbox, worker/nudges.py, finds a run's nudges there)."""
        self._queries, self._store, self._notifier = queries, store, notifier
        self._claims = claims
        self._seen = seen
        # why a claim's run must stop, by signal, with the token of the claim it was found for: a new claim
        # of the same signal here (a retry claimed again at once) has a token of its own and runs on
        self._reasons: dict[str, tuple[str | None, str]] = {}
        self._started = threading.Event()  # a run started: there is something to watch
        self._closing = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="stop-watch", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def started(self) -> None:
        """A run started (from the claim loop): watch it from now on."""
        self._started.set()

    def close(self) -> None:
        self._closing.set()
        self._started.set()
        self._thread.join()

    def reason(self, signal_id: str) -> str | None:
        """Why the run of this signal must stop (it was cancelled meanwhile), or None: for the claim that
        runs it now only, never a reason found for an earlier claim of the same signal."""
        found = self._reasons.get(signal_id)
        if found is None or self._claims().get(signal_id) != found[0]:
            return None
        return found[1]

    def forget(self, signal_id: str) -> None:
        self._reasons.pop(signal_id, None)

    def _watch(self) -> None:
        position: int | None = None
        while not self._closing.is_set():
            running = {
                sid: token
                for sid, token in self._claims().items()
                if sid not in self._reasons or self._reasons[sid][0] != token
            }
            if not running:
                self._started.wait(WAKE_EVERY)
                self._started.clear()
                position = None  # the next run is read at once
                continue
            try:
                now = self._notifier.seen()
                if now is None:
                    now = self._store.last_position()
                if position is None or now > position:  # the log moved: read the running rows again
                    position = now
                    self._check(running, position)
                    self._closing.wait(MIN_GAP)  # at most ten reads a second, however busy the log
                self._notifier.wait(position, WAKE_EVERY)
            except StoreUnavailable as down:  # the claim loop rides it out; so does this
                logger.warning("could not look for cancels (%s); retrying", down)
                self._closing.wait(1.0)
            except Exception:  # a watch must never end: a cancel would go unheard
                logger.exception("could not look for cancels")
                self._closing.wait(1.0)

    def _check(self, running: Mapping[str, str | None], seen: int | None = None) -> None:
        """One read for every signal running here (their status, claim token and cancel reason), however
        many: the rows are caught up when folded short of `seen`, the log position that woke the watch."""
        states = self._queries.signal_states(list(running), seen)  # a row missing (a rebuild): it comes back
        self._seen(states)
        for now in states:
            if now.status is SignalStatus.CANCELLED:
                why = f"stopped: the signal was cancelled ({now.error or 'no reason given'})"
            elif now.status is SignalStatus.CLAIMED and now.claim_token != running.get(now.signal_id):
                if self._claims().get(now.signal_id) != running.get(now.signal_id):
                    continue  # claimed anew here since the look began (a retry): that run is its own
                why = "stopped: the claim is held by another worker now"
            else:  # still ours, or ended by its own run (its outcome recorded before its slot is freed)
                continue
            self._reasons[now.signal_id] = (running.get(now.signal_id), why)
            logger.info("%s: %s; stopping its run", now.signal_id, why)
