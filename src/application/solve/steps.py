"""How `solve` waits for a step's signal to end: until it ends (COMPLETED, FAILED, EXPIRED, UNCLAIMED or
CANCELLED: the step ends at once with it), or until it has had no live worker that fits it for the run's
step timeout, counted only while it is POSTED and no live worker would claim it (the presence rows and the
claim's own scoring: `BlackboardQueries.fitting_worker`). A worker that is live, or a claim under way,
stops the count; the board's post timeout plays no part (it may be off). A POSTED step its board's budget
holds back for good (`held`: the budget reached, or a reservation that cannot fit while nothing else is
reserved, as `next` and `show` say it) ends the wait at once (StepHeldByBudget): no worker will ever claim it
until someone raises the budget, so the run stops rather than wait with no end.

A COMPLETED step ends once its knowledge items have landed as entries too (`<signal>/knowledge/<n>`, written
by whichever process completed it, right after the completion's commit): the controller is asked again only
then, so it never decides on a board its last step has not finished writing to. That wait is bounded
(`LANDING_WAIT`): items whose process died before they landed leave the run to go on without them (their text
is in the step's result, which the controller reads too).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from typing import Any

from blackboard.application.commands import GetSignalById
from blackboard.application.errors import WaitTimedOut
from blackboard.application.knowledge.commands import ListEntries
from blackboard.application.knowledge.service import result_key
from blackboard.application.ports import Clock
from blackboard.application.solve.ports import NoWorkerFits, RunTakenOver, StepHeldByBudget
from blackboard.domain.signals import AgentSignal, SignalStatus
from blackboard.domain.solve.run import SolveRun

logger = logging.getLogger(__name__)
LOOK_EVERY = 1.0  # seconds between two looks at the step's signal and the live workers
LANDING_WAIT = 60.0  # seconds a completed step's knowledge items may take to land (a landing retries ~40 s)


class StepWatch:
    def __init__(self, watcher: Any, queries: Any, clock: Clock, entries: Any) -> None:
        self._watcher, self._queries, self._clock = watcher, queries, clock  # Watcher, BlackboardQueries
        self._entries = entries  # KnowledgeQueries

    def until_ended(
        self,
        run: SolveRun,
        step_timeout: float,
        holding: Callable[[], bool] | None = None,
        held: Callable[[AgentSignal], str | None] | None = None,
    ) -> AgentSignal:
        """The open step's signal once it ended (and, COMPLETED, its knowledge items landed); NoWorkerFits
        once it had no live fitting worker for `step_timeout` seconds; RunTakenOver when `holding` says
        another process took the run up; StepHeldByBudget when `held` says why its board's budget holds it
        back until the budget is raised."""
        step = run.open_step
        if step is None or step.signal_id is None:
            raise ValueError(f"solve run {run.run_id} has no open step to wait for")
        unattended_since: datetime | None = None
        while True:
            signal = self._queries.get_signal(GetSignalById(signal_id=step.signal_id))
            if signal.status.is_final:
                return self._landed(signal)
            if holding is not None and not holding():
                raise RunTakenOver(run.run_id, run.blackboard_id)
            if signal.status is SignalStatus.POSTED and held is not None and (why := held(signal)):
                raise StepHeldByBudget(run, step, why)
            now = self._clock.now()
            if signal.status is SignalStatus.POSTED and self._queries.fitting_worker(signal) is None:
                unattended_since = unattended_since or now
                if (now - unattended_since).total_seconds() >= step_timeout:
                    raise NoWorkerFits(run, step, step_timeout)
                left = step_timeout - (now - unattended_since).total_seconds()
            else:
                unattended_since, left = None, LOOK_EVERY
            try:
                ended = self._watcher.wait_for_signal(step.signal_id, max(0.05, min(LOOK_EVERY, left)))
            except WaitTimedOut:
                continue
            return self._landed(ended)

    def _landed(self, signal: AgentSignal) -> AgentSignal:
        """The signal, once each of its knowledge items is an entry of its board (at most LANDING_WAIT)."""
        items = signal.result.knowledge_items if signal.result is not None else ()
        if signal.status is not SignalStatus.COMPLETED or not items:
            return signal
        keys = {result_key(signal.signal_id, n) for n in range(1, len(items) + 1)}
        query = ListEntries(blackboard_id=signal.blackboard_id, prefix=f"{signal.signal_id}/knowledge/")
        try:
            self._watcher.wait_until(
                lambda: keys <= {e.key for e in self._entries.entries(query)},
                f"the knowledge items of {signal.signal_id} to land",
                LANDING_WAIT,
            )
        except WaitTimedOut as late:
            logger.warning("%s; the run goes on without them (its result holds their text)", late)
        return signal
