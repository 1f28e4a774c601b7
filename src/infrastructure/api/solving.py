"""The Python API's `solve`: a controller agent drives a board until the problem is solved (as `blackboard
solve`; docs/agents.md, "The controller: solve"), and `solve_status`, a run as its events tell it."""

from __future__ import annotations

from collections.abc import Iterable

from blackboard.application.runners import Permissions
from blackboard.application.solving import SolveProblem
from blackboard.infrastructure import documents
from blackboard.infrastructure.api.base import Base, names, request
from blackboard.infrastructure.documents import SolveRun
from blackboard.infrastructure.settings import board_environment


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
    ) -> SolveRun:
        """`blackboard solve`: blocks until the controller answers (the run, `state` "solved") or raises:
        TimedOut when `max_iterations` (10) decisions gave no answer or a step outlasted `step_timeout`,
        InvalidInput (nothing written) for an empty problem, a bound below 1 or an unknown controller."""
        from blackboard.infrastructure.solve_run import SolveSetup, run_solve

        cmd = request(
            SolveProblem,
            blackboard_id=blackboard_id,
            problem=problem,
            max_iterations=max_iterations,
            posted_by=posted_by,
            step_timeout=step_timeout,
        )
        parts = self._parts
        setup = SolveSetup(
            controller=controller,
            runner=runner,
            model=model,
            workdir=workdir,
            permissions=Permissions(permission_mode, names(allowed_tools, "allowed_tools")),
            board_env=dict(board_environment(parts.config)),
            start_workers=start_workers,
        )
        run = run_solve(cmd, setup, parts.solver, parts.registry, parts.status, parts.config.artifacts_dir)
        return documents.solve_run(run)

    def solve_status(self, run_id: str, *, blackboard_id: str, at: int | None = None) -> SolveRun:
        """`blackboard solve --status RUN`: the run (its decisions, reasons, answer), as it was at log
        position `at` if given; NotFound for a run the board does not hold."""
        return documents.solve_run(self._parts.solver.run(blackboard_id, run_id, at))
