"""The Python API's `solve`: a controller agent drives a board until the problem is solved (as `blackboard
solve`; docs/agents.md, "The controller: solve"), `resume_solve`, which takes up a run whose process ended
(`solve --resume`), and `solve_status`, a run as its events tell it."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from blackboard.application.runners import Permissions
from blackboard.application.solve.solver import ResumeSolve, SolveProblem
from blackboard.infrastructure import documents
from blackboard.infrastructure.api.base import Base, names, request
from blackboard.infrastructure.composition.settings import board_environment
from blackboard.infrastructure.documents import SolveRun

if TYPE_CHECKING:  # imported with a run: reading a run's status needs none of it
    from blackboard.infrastructure.solve.run import SolveParts


class SolveCalls(Base):
    def solve(
        self,
        problem: str,
        *,
        blackboard_id: str,
        controller: str | None = None,
        max_iterations: int | None = None,
        start_workers: bool = False,
        step_timeout: float | None = None,
        posted_by: str | None = None,
        runner: str | None = None,
        model: str | None = None,
        workdir: str | None = None,
        permission_mode: str | None = None,
        allowed_tools: Iterable[str] = (),
        keep_step: bool = False,
        synthesis: bool = True,
    ) -> SolveRun:
        """`blackboard solve`: blocks until the controller answers (the run, `state` "solved") or raises:
        TimedOut when `max_iterations` (10) decisions gave no answer (IterationsSpent: its `run` is the run
        as it stopped, with the controller's best answer from what is known in `answer`, `synthesized`
        true, unless `synthesis` is False) or a step had no live worker that fits it for `step_timeout`
        seconds (300), InvalidInput (nothing written) for an empty problem, a bound below 1 or an unknown
        controller. A KeyboardInterrupt stops the run and cancels its open step, or, with `keep_step`,
        leaves both for `resume_solve`."""
        from blackboard.infrastructure.solve.run import SolveSetup, run_solve

        cmd = request(
            SolveProblem,
            blackboard_id=blackboard_id,
            problem=problem,
            max_iterations=max_iterations,
            posted_by=posted_by,
            step_timeout=step_timeout,
            synthesis=synthesis,
        )
        setup = SolveSetup(
            controller=controller,
            runner=runner,
            model=model,
            workdir=workdir,
            permissions=Permissions(permission_mode, names(allowed_tools, "allowed_tools")),
            board_env=dict(board_environment(self._parts.config)),
            start_workers=start_workers,
            keep_step=keep_step,
            beat_every=self._parts.config.beat_interval,
        )
        return _ended(run_solve, cmd, setup, self._solve_parts())

    def resume_solve(
        self,
        run_id: str,
        *,
        blackboard_id: str,
        max_iterations: int | None = None,
        step_timeout: float | None = None,
        start_workers: bool | None = None,
        resumed_by: str | None = None,
        keep_step: bool = False,
    ) -> SolveRun:
        """`blackboard solve --resume RUN`: takes up a run whose process ended, from its stream (the
        iterations spent, its open step, the controller and options it started with; a bound given here
        replaces the run's own), and blocks as `solve` does. Refused (Refused) for a run solved or stopped,
        or one a live process still drives; NotFound for a run the board does not hold."""
        from blackboard.infrastructure.solve.run import SolveSetup, resume_solve

        cmd = request(
            ResumeSolve,
            blackboard_id=blackboard_id,
            run_id=run_id,
            max_iterations=max_iterations,
            step_timeout=step_timeout,
            start_workers=start_workers,
            resumed_by=resumed_by,
        )
        setup = SolveSetup(
            board_env=dict(board_environment(self._parts.config)),
            keep_step=keep_step,
            beat_every=self._parts.config.beat_interval,
        )
        return _ended(resume_solve, cmd, setup, self._solve_parts())

    def solve_status(self, run_id: str, *, blackboard_id: str, at: int | None = None) -> SolveRun:
        """`blackboard solve --status RUN`: the run (its decisions, reasons, answer; `orphaned` when it is
        running but its process is gone), as it was at log position `at` if given; NotFound for a run the
        board does not hold."""
        return documents.solve_run(self._parts.solver.run(blackboard_id, run_id, at))

    def _solve_parts(self) -> SolveParts:
        from blackboard.infrastructure.solve.run import SolveParts

        parts = self._parts
        return SolveParts(
            parts.solver,
            parts.registry,
            parts.status,
            parts.solve_processes,
            parts.clock,
            parts.config.artifacts_dir,
        )


def _ended(drive: Callable[..., Any], cmd: Any, setup: Any, parts: Any) -> SolveRun:
    """The run `drive` returns, as the API's model; an error that ended it carries it the same way (`run`)."""
    try:
        return documents.solve_run(drive(cmd, setup, parts))
    except Exception as exc:
        if (ended := getattr(exc, "run", None)) is not None and not isinstance(ended, SolveRun):
            exc.run = documents.solve_run(ended)  # type: ignore[attr-defined]
        raise
