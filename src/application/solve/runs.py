"""The read side of `solve`, and its one write: a board's runs folded from their streams (`orphaned` when one
is running by its events but no live process drives it, by the SolveProcesses rows), whether a run may be
resumed, and recording a run's next event."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from blackboard.application.ports import Clock
from blackboard.application.solve.ports import RunEnded, RunHeld, SolveLog, SolveProcesses, UnknownRun
from blackboard.domain.events import SolveEvent
from blackboard.domain.presence import SolveProcess
from blackboard.domain.solve.run import SolveRun, fold, with_process


class SolveRuns:
    def __init__(self, log: SolveLog, clock: Clock, processes: SolveProcesses | None = None) -> None:
        self._log, self._clock, self._processes = log, clock, processes
        self.report: Callable[[SolveEvent], None] | None = None  # told of each event once it is recorded

    def runs(self, blackboard_id: str, upto: int | None = None) -> list[SolveRun]:
        """The board's runs, oldest first (those started by `upto`, as they were then); now, a running run
        whose process is gone is `orphaned`."""
        found = []
        for run_id in self._log.runs(blackboard_id):
            if records := self._log.history(blackboard_id, run_id, upto):
                found.append(fold(run_id, blackboard_id, [r.event for r in records]))  # type: ignore[misc]
        if upto is not None or self._processes is None:
            return found
        processes = self._processes.of(blackboard_id, [r.run_id for r in found])
        now = self._clock.now()
        return [with_process(r, processes.get(r.run_id), now) for r in found]

    def run(self, blackboard_id: str, run_id: str, upto: int | None = None) -> SolveRun:
        """The run as its events tell it (as it was at `upto`, if given); now, `orphaned` when it is running
        but its process is gone."""
        run = self._folded(blackboard_id, run_id, upto)
        if upto is not None or self._processes is None:
            return run
        return with_process(run, self._process(blackboard_id, run_id), self._clock.now())

    def _folded(self, blackboard_id: str, run_id: str, upto: int | None = None) -> SolveRun:
        records = self._log.history(blackboard_id, run_id, upto)
        if not records:
            raise UnknownRun(run_id, blackboard_id)
        return fold(run_id, blackboard_id, [r.event for r in records])  # type: ignore[misc]

    def _process(self, blackboard_id: str, run_id: str) -> SolveProcess | None:
        if self._processes is None:
            return None
        return self._processes.of(blackboard_id, [run_id]).get(run_id)

    def resumable(self, blackboard_id: str, run_id: str) -> SolveRun:
        """The run, if a resume may take it up: it is running by its events (RunEnded if not) and no live
        process drives it (RunHeld); UnknownRun for a run the board does not hold."""
        run = self._folded(blackboard_id, run_id)
        if run.state != "running":
            raise RunEnded(run)
        process = self._process(blackboard_id, run_id)
        if process is not None and process.is_live(self._clock.now()):
            raise RunHeld(run, process)
        return run

    def _record(self, run: SolveRun, kind: type[SolveEvent], actor: str, **fields: Any) -> SolveRun:
        event = kind(
            blackboard_id=run.blackboard_id,
            run_id=run.run_id,
            version=run.version + 1,
            occurred_at=self._clock.now(),
            actor=actor,
            **fields,
        )
        self._log.append([event], {"actor": actor, "solve_run": run.run_id})
        if self.report is not None:
            self.report(event)
        return fold(run.run_id, run.blackboard_id, [*run.events, event])
