"""One solve run as the CLI and the Python API start or resume it: the controller resolved and checked, the
specialists with who has a live worker, workers started for the run's length (`start_workers`), the process's
beat (so `solve --status` anywhere sees it driven), the loop driven by the application's Solver, the beat and
the workers stopped however it ends. Nothing is written before every check passed."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from blackboard.application.runners import Permissions
from blackboard.application.solve.solver import ResumeSolve, SolveOptions, SolveProblem, Specialist
from blackboard.domain.errors import InvalidInput
from blackboard.domain.solve.run import SolveRun


@dataclass(frozen=True)
class SolveSetup:
    """How to run the controller and whether to start workers, besides the problem itself."""

    controller: str | None = None  # an agent of the folder, or an agent .md file; None: the packaged one
    runner: str | None = None
    model: str | None = None
    workdir: str | None = None
    permissions: Permissions = field(default_factory=Permissions)
    board_env: Mapping[str, str] = field(default_factory=dict)  # settings.board_environment
    start_workers: bool = False
    keep_step: bool = False  # interrupted: leave the run and its open step for a resume, not stop it
    beat_every: float = 2.0  # seconds between the beats that say this process drives the run


@dataclass(frozen=True)
class SolveParts:
    """What a run takes from the container."""

    solver: Any  # Solver
    registry: Any  # AgentRegistry
    status: Any  # StatusQueries: who has a live worker
    processes: Any  # SolveProcesses
    clock: Any
    artifacts_dir: str


def run_solve(
    cmd: SolveProblem, setup: SolveSetup, parts: SolveParts, say: Callable[[str], None] = lambda _: None
) -> SolveRun:
    """Check, start, drive; returns the run solved, or raises (IterationsSpent, NoWorkerFits, ...) with the
    run as it ended in the exception's `run`."""
    from blackboard.infrastructure.solve.controller import controller_definition

    definition = controller_definition(setup.controller, parts.registry.definition)
    controller = _controller(definition, cmd.blackboard_id, setup, parts.artifacts_dir)
    parts.solver.check_priced(cmd.blackboard_id, controller)  # before anything is written
    specialists = _specialists(definition.name, cmd.blackboard_id, parts)
    run_id = f"solve-{uuid.uuid4().hex[:8]}"
    workdir = str(Path(setup.workdir).resolve()) if setup.workdir else None
    options = SolveOptions(
        controller_ref=_reference(setup.controller),
        start_workers=setup.start_workers,
        workdir=workdir,
        permission_mode=setup.permissions.mode,
        allowed_tools=setup.permissions.allowed_tools,
    )

    def begin(started: list[str], beat: Any) -> SolveProblem:
        beat.start()  # a new run: its row first, so it never looks orphaned
        parts.solver.start(cmd, run_id, controller, specialists, started, options, (beat.host, beat.pid))
        return cmd

    return _driven(cmd.blackboard_id, run_id, setup, parts, controller, specialists, say, begin)


def resume_solve(
    cmd: ResumeSolve, setup: SolveSetup, parts: SolveParts, say: Callable[[str], None] = lambda _: None
) -> SolveRun:
    """Take up a run whose process ended, with the controller and options it started with (`setup` gives
    only the board's settings, `keep_step` and the beat); RunEnded, RunHeld or UnknownRun before anything
    is started or written."""
    from blackboard.infrastructure.solve.controller import controller_definition

    run = parts.solver.resumable(cmd.blackboard_id, cmd.run_id)
    setup = replace(
        setup,
        controller=run.controller_ref,
        runner=run.runner,
        model=run.model,
        workdir=run.workdir,
        permissions=Permissions(run.permission_mode, run.allowed_tools),
        start_workers=run.start_workers if cmd.start_workers is None else cmd.start_workers,
    )
    if run.workdir is not None and not Path(run.workdir).is_dir():
        raise InvalidInput("--resume", f"the run's workdir {run.workdir} is no longer a folder")
    try:
        definition = controller_definition(run.controller_ref, parts.registry.definition)
    except InvalidInput as exc:
        raise InvalidInput("--resume", f"the run's controller cannot be found again: {exc.rule}") from None
    controller = _controller(definition, cmd.blackboard_id, setup, parts.artifacts_dir)
    parts.solver.check_priced(cmd.blackboard_id, controller)  # before anything is written
    specialists = _specialists(definition.name, cmd.blackboard_id, parts)

    def begin(started: list[str], beat: Any) -> SolveProblem:
        _, problem = parts.solver.resume(cmd, beat.host, beat.pid, started)
        beat.start()  # after the resume is recorded: of two resumes at once, the one the log admits holds it
        say(
            f"resumed {cmd.run_id}"
            + (f", waiting for its open step {s.signal_id}" if (s := run.open_step) else "")
        )
        return problem

    return _driven(cmd.blackboard_id, cmd.run_id, setup, parts, controller, specialists, say, begin)


def _driven(
    board: str,
    run_id: str,
    setup: SolveSetup,
    parts: SolveParts,
    controller: Any,
    specialists: list[Specialist],
    say: Callable[[str], None],
    begin: Callable[[list[str], Any], SolveProblem],
) -> SolveRun:
    from blackboard.infrastructure.solve.beat import SolveBeat
    from blackboard.infrastructure.worker.started import StartedWorkers

    workdir = Path(setup.workdir or ".").resolve()
    idle = [s for s in specialists if not s.live]
    workers = StartedWorkers(
        dict(setup.board_env),
        Path.cwd(),
        workdir / parts.artifacts_dir / "solve" / run_id,
        ("--workdir", str(workdir)) if setup.workdir else (),
    )
    if idle and not setup.start_workers:
        say(
            "no live worker for "
            + ", ".join(s.name for s in idle)
            + f": their signals wait for one (blackboard worker --agent NAME --board {board}, "
            "or solve --start-workers)"
        )
    beat = SolveBeat(parts.processes, parts.clock, board, run_id, setup.beat_every)
    solver = parts.solver
    started: list[str] = []
    try:
        if setup.start_workers:
            if skipped := [s.name for s in idle if not s.runnable]:
                say("not started (not runnable here): " + ", ".join(skipped))
            started = workers.start([s.name for s in idle if s.runnable], board)
            if started:
                say(f"started a worker for {', '.join(started)} (pids {', '.join(map(str, workers.pids))})")
        # the workers are starting: the controller may count on them (the run records who had none before)
        working = [replace(s, live=s.live or s.name in started) for s in specialists]
        cmd = begin(started, beat)
        solver.holding = beat.holding
        try:
            solver.drive(cmd, run_id, controller, working, setup.keep_step)
            return solver.run(board, run_id)  # as `solve --status` tells it
        except KeyboardInterrupt:
            if setup.keep_step:
                say(f"left {run_id} for a resume: blackboard solve --resume {run_id} --blackboard {board}")
            raise
        except Exception as exc:
            try:
                exc.run = solver.run(board, run_id)  # type: ignore[attr-defined]
            except Exception:  # noqa: BLE001 - the store may be what failed: the first error is the one to tell
                pass
            raise
    finally:
        controller.close()  # a decision still under way (an interrupt) ends with the run's process
        beat.stop()
        if workers.agents:
            workers.stop()
            say(f"stopped the workers started for {run_id}")


def _controller(definition: Any, board: str, setup: SolveSetup, artifacts_dir: str) -> Any:
    from blackboard.infrastructure.solve.controller import RunnerController

    workdir = Path(setup.workdir or ".").resolve()
    controller = RunnerController(
        definition,
        board,
        setup.runner,
        setup.model,
        workdir,
        workdir / artifacts_dir / "transcripts",
        setup.permissions,
        dict(setup.board_env),
    )
    if (missing := controller.missing()) is not None:
        raise InvalidInput("--runner", f"the controller {controller.name} cannot run: {missing}")
    return controller


def _specialists(controller: str, board: str, parts: SolveParts) -> list[Specialist]:
    """Every agent of the folder but the controller, with whether a worker of it is live on the board."""
    registry = parts.registry
    live = {w.agent_id for w in parts.status.live_workers() if w.serves(board)}
    specialists = [
        Specialist(
            d.name,
            d.description,
            tuple((c.type, c.score) for c in sorted(d.profile.capabilities, key=lambda c: -c.score)),
            registry.can_run(d.name),
            d.name in live,
        )
        for d in registry.definitions()
        if d.name != controller
    ]
    if not specialists:
        raise InvalidInput(
            "--agents-dir", "holds no agent but the controller: the controller needs specialists to pick"
        )
    return specialists


def _reference(controller: str | None) -> str | None:
    """`--controller` as a resume finds it again: a path to an agent file made absolute; a name as given."""
    if controller is None:
        return None
    path = Path(controller)
    return str(path.resolve()) if path.suffix == ".md" and path.is_file() else controller
