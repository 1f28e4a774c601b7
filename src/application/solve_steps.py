"""How `solve` waits for a step's signal to end: until it ends (COMPLETED, FAILED, EXPIRED, UNCLAIMED or
CANCELLED: the step ends at once with it), or until it has had no live worker that fits it for the run's
step timeout, counted only while it is POSTED and no live worker would claim it (the presence rows and the
claim's own scoring: `BlackboardQueries.fitting_worker`). A worker that is live, or a claim under way,
stops the count; the board's post timeout plays no part (it may be off).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from blackboard.application.commands import GetSignalById
from blackboard.application.errors import WaitTimedOut
from blackboard.application.ports import Clock
from blackboard.application.solve_ports import NoWorkerFits, RunTakenOver
from blackboard.domain.signals import AgentSignal, SignalStatus
from blackboard.domain.solving import SolveRun

LOOK_EVERY = 1.0  # seconds between two looks at the step's signal and the live workers


class StepWatch:
    def __init__(self, watcher: Any, queries: Any, clock: Clock) -> None:
        self._watcher, self._queries, self._clock = watcher, queries, clock  # Watcher, BlackboardQueries

    def until_ended(
        self, run: SolveRun, step_timeout: float, holding: Callable[[], bool] | None = None
    ) -> AgentSignal:
        """The open step's signal once it ended; NoWorkerFits once it had no live fitting worker for
        `step_timeout` seconds; RunTakenOver when `holding` says another process took the run up."""
        step = run.open_step
        if step is None or step.signal_id is None:
            raise ValueError(f"solve run {run.run_id} has no open step to wait for")
        unattended_since: datetime | None = None
        while True:
            signal = self._queries.get_signal(GetSignalById(signal_id=step.signal_id))
            if signal.status.is_final:
                return signal
            if holding is not None and not holding():
                raise RunTakenOver(run.run_id, run.blackboard_id)
            now = self._clock.now()
            if signal.status is SignalStatus.POSTED and self._queries.fitting_worker(signal) is None:
                unattended_since = unattended_since or now
                if (now - unattended_since).total_seconds() >= step_timeout:
                    raise NoWorkerFits(run, step, step_timeout)
                left = step_timeout - (now - unattended_since).total_seconds()
            else:
                unattended_since, left = None, LOOK_EVERY
            try:
                return self._watcher.wait_for_signal(step.signal_id, max(0.05, min(LOOK_EVERY, left)))
            except WaitTimedOut:
                continue
