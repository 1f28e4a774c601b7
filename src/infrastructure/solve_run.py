"""One solve run as the CLI and the Python API start it: the controller resolved and checked, the specialists
with who has a live worker, workers started for the run's length (`start_workers`), the loop driven by the
application's Solver, the workers stopped however it ends. Nothing is written before every check passed."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from blackboard.application.runners import Permissions
from blackboard.application.solving import SolveProblem, Specialist
from blackboard.domain.errors import InvalidInput
from blackboard.domain.solving import SolveRun


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


def run_solve(
    cmd: SolveProblem,
    setup: SolveSetup,
    solver: Any,
    registry: Any,
    status: Any,
    artifacts_dir: str,
    say: Callable[[str], None] = lambda _: None,
) -> SolveRun:
    """Check, start, drive; returns the run solved, or raises (IterationsSpent, WaitTimedOut, ...) with the
    run as it ended in the exception's `run`."""
    from blackboard.infrastructure.runners.controller import RunnerController, controller_definition
    from blackboard.infrastructure.worker.started import StartedWorkers

    definition = controller_definition(setup.controller, registry.definition)
    workdir = Path(setup.workdir or ".").resolve()
    controller = RunnerController(
        definition,
        cmd.blackboard_id,
        setup.runner,
        setup.model,
        workdir,
        workdir / artifacts_dir / "transcripts",
        setup.permissions,
        dict(setup.board_env),
    )
    if (missing := controller.missing()) is not None:
        raise InvalidInput("--runner", f"the controller {controller.name} cannot run: {missing}")
    live = {w.agent_id for w in status.live_workers() if w.serves(cmd.blackboard_id)}
    specialists = [
        Specialist(
            d.name,
            d.description,
            tuple((c.type, c.score) for c in sorted(d.profile.capabilities, key=lambda c: -c.score)),
            registry.can_run(d.name),
            d.name in live,
        )
        for d in registry.definitions()
        if d.name != definition.name
    ]
    if not specialists:
        raise InvalidInput(
            "--agents-dir", "holds no agent but the controller: the controller needs specialists to pick"
        )
    idle = [s for s in specialists if not s.live]
    run_id = f"solve-{uuid.uuid4().hex[:8]}"
    workers = StartedWorkers(
        dict(setup.board_env),
        Path.cwd(),
        workdir / artifacts_dir / "solve" / run_id,
        ("--workdir", str(workdir)) if setup.workdir else (),
    )
    if idle and not setup.start_workers:
        say(
            "no live worker for "
            + ", ".join(s.name for s in idle)
            + f": their signals wait for one (blackboard worker --agent NAME --board {cmd.blackboard_id}, "
            "or solve --start-workers)"
        )
    started: list[str] = []
    try:
        if setup.start_workers:
            if skipped := [s.name for s in idle if not s.runnable]:
                say("not started (not runnable here): " + ", ".join(skipped))
            started = workers.start([s.name for s in idle if s.runnable], cmd.blackboard_id)
            if started:
                say(f"started a worker for {', '.join(started)} (pids {', '.join(map(str, workers.pids))})")
        # the workers are starting: the controller may count on them (the run records who had none before)
        working = [replace(s, live=s.live or s.name in started) for s in specialists]
        solver.start(cmd, run_id, controller, specialists, started)
        try:
            return solver.drive(cmd, run_id, controller, working)
        except Exception as exc:
            try:
                exc.run = solver.run(cmd.blackboard_id, run_id)  # type: ignore[attr-defined]
            except Exception:  # noqa: BLE001 - the store may be what failed: the first error is the one to tell
                pass
            raise
    finally:
        if workers.agents:
            workers.stop()
            say(f"stopped the workers started for {run_id}")
