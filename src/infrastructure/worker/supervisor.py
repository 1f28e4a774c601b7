"""Entrypoint calls on lanes, watched by one supervisor thread: their timeouts, the grace period, their renewals."""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import Executor
from dataclasses import dataclass

from blackboard.domain.signals import AgentSignal
from blackboard.infrastructure.agents.handler import (
    ABANDONED,
    CANCELLED,
    POLL,
    HandlerOutcome,
    call_entrypoint_here,
    timeout_of,
)
from blackboard.infrastructure.agents.lanes import start_call
from blackboard.infrastructure.agents.parsing import AgentDefinition
from blackboard.infrastructure.keeper.identity import running
from blackboard.infrastructure.worker.handling import Handling, said

logger = logging.getLogger("blackboard.worker")  # the whole worker logs under one name, which users filter on


@dataclass(slots=True)
class _Flight:
    """An entrypoint call on a lane. Whoever ends it first (the lane with the function's outcome,
    or the supervisor with a reason to stop) hands the outcome to the recorder; the other is ignored."""

    agent: AgentDefinition
    claimed: AgentSignal
    started: float
    deadline: float
    next_tick: float
    ended: bool = False
    renewing: bool = False  # a renewal is under way in the pool


class Supervisor:
    """A Python entrypoint runs on a lane (agents/lanes.py) that hands its outcome over itself, while
    this one thread keeps the timeouts and the grace period of every call and has the pool renew their
    claims, so no thread per signal sits waiting. `cancel` set: the grace period is over."""

    def __init__(
        self, handling: Handling, pool: Executor, cancel: threading.Event, renew_every: float
    ) -> None:
        self._handling = handling
        self._pool = pool
        self._cancel = cancel
        self._renew_every = renew_every
        self._flights: dict[str, _Flight] = {}  # calls running on lanes, by signal
        self._flights_lock = threading.Lock()
        self._thread: threading.Thread | None = None  # started with the first call
        self._drained = threading.Event()  # every claim recorded after a stop: the thread may end

    def start(self, agent: AgentDefinition, claimed: AgentSignal) -> None:
        """Call the agent's entrypoint on a lane. Only the claim loop's thread starts calls."""
        now = time.monotonic()
        flight = _Flight(agent, claimed, now, now + timeout_of(agent), now + self._renew_every)
        with self._flights_lock:
            self._flights[claimed.signal_id] = flight
        if self._thread is None:
            self._thread = threading.Thread(target=self._supervise, name="supervisor", daemon=True)
            self._thread.start()
        start_call(self._call_on_lane, flight)

    def close(self) -> None:
        """Once the worker has drained: end the thread."""
        self._drained.set()
        if self._thread is not None:
            self._thread.join()

    def _call_on_lane(self, flight: _Flight) -> None:
        """On a lane: build the document, call the entrypoint, hand the outcome over. Never raises:
        a flight that never landed would hold its slot until its timeout."""
        try:
            try:
                document = self._handling.document(flight.claimed)
            except Exception as exc:
                logger.exception("handling %s went wrong", flight.claimed.signal_id)
                outcome = HandlerOutcome(False, error=f"the worker could not run the handler: {said(exc)}")
            else:
                with running(self._handling.run_of(flight.agent, flight.claimed)):  # Blackboard() in it
                    outcome = call_entrypoint_here(flight.agent, document)  # a fresh document: no copy needed
        except BaseException as exc:  # noqa: BLE001 - e.g. an exception whose str() raises
            outcome = HandlerOutcome(False, error=f"the worker could not run the handler: {said(exc)}")
        self._land(flight, outcome)

    def _land(self, flight: _Flight, outcome: HandlerOutcome) -> None:
        """The first outcome of a flight goes to the recorder (the function's, or the reason it was stopped)."""
        with self._flights_lock:
            if flight.ended:
                return
            flight.ended = True
            del self._flights[flight.claimed.signal_id]
        self._handling.hand_over(flight.agent, flight.claimed, outcome, flight.started)

    def _supervise(self) -> None:
        """Give up on the calls past their timeout or, once the grace period is over, on all of them;
        have the pool renew the claims of long ones. Renewals run off this thread, so a slow one delays
        no timeout. Until the worker has drained."""
        while not self._drained.wait(POLL):
            with self._flights_lock:
                flights = [f for f in self._flights.values() if not f.ended]
            now = time.monotonic()
            for flight in flights:
                try:
                    if self._cancel.is_set():
                        self._land(flight, HandlerOutcome(False, error=CANCELLED + ABANDONED))
                    elif (stopped := self._handling.stopped(flight.claimed.signal_id)) is not None:
                        self._land(flight, HandlerOutcome(False, error=stopped + ABANDONED))
                    elif now >= flight.deadline:
                        timed_out = f"timed out after {timeout_of(flight.agent):g}s"
                        self._land(flight, HandlerOutcome(False, error=timed_out + ABANDONED))
                    elif now >= flight.next_tick and not flight.renewing:
                        flight.next_tick, flight.renewing = now + self._renew_every, True
                        self._pool.submit(self._renew_flight, flight)
                except Exception:
                    logger.exception("could not supervise the call on %s", flight.claimed.signal_id)

    def _renew_flight(self, flight: _Flight) -> None:
        """In the pool: renew one call's claim; a lost claim stops the call (the work is someone else's)."""
        try:
            if not flight.ended:
                self._handling.renew(flight.agent, flight.claimed)
        except Exception as exc:  # noqa: BLE001 - the reason becomes the failure
            self._land(flight, HandlerOutcome(False, error=f"stopped: {exc}" + ABANDONED))
        finally:
            flight.renewing = False
