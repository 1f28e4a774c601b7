"""`blackboard solve`: a controller agent drives a board until the problem is solved (application/solving.py);
`solve --status [RUN]`: a run (or the board's runs) as its events tell it."""

from __future__ import annotations

import argparse
import sys
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

from blackboard.domain.errors import InvalidInput
from blackboard.infrastructure.cli.render import Output
from blackboard.infrastructure.container import Container
from blackboard.infrastructure.injection import Provide, inject
from blackboard.infrastructure.settings import BlackboardSettings

Lazy = Any


@inject
def solve(
    args: argparse.Namespace,
    config: BlackboardSettings = Provide[Container.config],
    solver: Lazy = Provide[Container.solver.provider],
    registry: Lazy = Provide[Container.agent_registry.provider],
    status: Lazy = Provide[Container.status.provider],
) -> Output:
    from blackboard.application.solving import SolveProblem, Specialist
    from blackboard.infrastructure import documents
    from blackboard.infrastructure.cli.runner_options import board_environment, run_options
    from blackboard.infrastructure.runners.controller import RunnerController, controller_definition
    from blackboard.infrastructure.worker.started import StartedWorkers

    if args.status is not None or args.problem is None:
        return _status(args, solver())
    if args.at is not None:
        raise InvalidInput("--at", "goes with --status: a run as it was at a log position")
    cmd = SolveProblem(
        blackboard_id=args.blackboard,
        problem=args.problem,
        max_iterations=args.max_iterations,
        posted_by=args.posted_by,
        step_timeout=args.step_timeout,
    )
    agents = registry()
    definition = controller_definition(args.controller, agents.definition)
    options = run_options(args, config)
    workdir = Path(options.workdir or ".").resolve()
    controller = RunnerController(
        definition,
        cmd.blackboard_id,
        options.runner,
        options.model,
        workdir,
        workdir / config.artifacts_dir / "transcripts",
        _permissions(options),
        dict(options.board_env),
    )
    if (missing := controller.missing()) is not None:
        raise InvalidInput("--runner", f"the controller {controller.name} cannot run: {missing}")
    live = {w.agent_id for w in status().live_workers() if w.serves(cmd.blackboard_id)}
    specialists = [
        Specialist(
            d.name,
            d.description,
            tuple((c.type, c.score) for c in sorted(d.profile.capabilities, key=lambda c: -c.score)),
            agents.can_run(d.name),
            d.name in live,
        )
        for d in agents.definitions()
        if d.name != definition.name
    ]
    if not specialists:
        raise InvalidInput(
            "--agents-dir", "holds no agent but the controller: the controller needs specialists to pick"
        )
    idle = [s for s in specialists if not s.live]
    run_id = f"solve-{uuid.uuid4().hex[:8]}"
    workers = StartedWorkers(
        dict(board_environment(config)),
        Path.cwd(),
        workdir / config.artifacts_dir / "solve" / run_id,
        ("--workdir", str(workdir)) if options.workdir else (),
    )
    if idle and not args.start_workers:
        _say(
            "no live worker for "
            + ", ".join(s.name for s in idle)
            + f": their signals wait for one (blackboard worker --agent NAME --board {cmd.blackboard_id}, "
            "or solve --start-workers)"
        )
    started: list[str] = []
    if args.start_workers:
        startable = [s.name for s in idle if s.runnable]
        if skipped := [s.name for s in idle if not s.runnable]:
            _say("not started (not runnable here): " + ", ".join(skipped))
        started = workers.start(startable, cmd.blackboard_id)
        if started:
            _say(f"started a worker for {', '.join(started)} (pids {', '.join(map(str, workers.pids))})")
    # the workers are starting: the controller may count on them (the run records who had none before)
    working = [replace(s, live=s.live or s.name in started) for s in specialists]
    the_solver = solver()
    the_solver.report = _report
    try:
        run = the_solver.start(cmd, run_id, controller, specialists, started)
        try:
            run = the_solver.drive(cmd, run_id, controller, working)
        except Exception as exc:
            exc.output = _shown(the_solver.run(cmd.blackboard_id, run_id), documents)  # type: ignore[attr-defined]
            raise
    finally:
        if started:
            workers.stop()
            _say(f"stopped the workers started for {run_id}")
    return _shown(run, documents)


def _status(args: argparse.Namespace, solver: Any) -> Output:
    from blackboard.infrastructure import documents

    if args.start_workers or args.controller is not None:
        raise InvalidInput("--status", "shows a run: it takes no PROBLEM, --controller nor --start-workers")
    if args.status:
        return _shown(solver.run(args.blackboard, args.status, args.at), documents)
    runs = solver.runs(args.blackboard, args.at)
    data = [documents.jsonable(documents.solve_run(r)) for r in runs]
    lines = [f"{r.run_id}  {r.state:<8} {r.iterations}/{r.max_iterations}  {_line(r.problem)}" for r in runs]
    return Output(data, "\n".join(lines) or f"no solve run on {args.blackboard}")


def _shown(run: Any, documents: Any) -> Output:
    data = documents.jsonable(documents.solve_run(run))
    head = (
        f"{run.run_id} on {run.blackboard_id}: {run.state}, {run.iterations} of at most {run.max_iterations} "
        f"iteration(s) (controller {run.controller}, runner {run.runner})"
    )
    lines = [head, f"problem ({run.problem_key}): {_line(run.problem)}"]
    for s in run.steps:
        if s.signal_id is None:
            lines.append(f"  {s.iteration}. refused decision: {s.error}")
        else:
            lines.append(
                f"  {s.iteration}. {s.signal_id} for {s.agent} ({s.capability}) {s.topic!r}: "
                f"{s.status or 'running'}{f' ({s.error})' if s.error else ''}; because {s.reason}"
            )
    if run.answer is not None:
        lines += [f"answer ({run.answer_key}):", run.answer]
    elif run.state == "stopped":
        lines.append(f"stopped: {run.reason}")
    return Output(data, "\n".join(lines))


def _report(event: Any) -> None:
    """Each decision as it is recorded, on stderr (stdout holds the result)."""
    kind = type(event).__name__
    if kind == "SolveStarted":
        _say(
            f"{event.run_id}: the problem is {event.problem_key}; controller {event.controller} ({event.runner})"
        )
    elif kind == "SolveStepPosted":
        _say(
            f"{event.iteration}. posted {event.signal_id} for {event.agent} ({event.capability}): {event.reason}"
        )
    elif kind == "SolveStepEnded":
        _say(f"{event.iteration}. {event.signal_id} {event.status}")
    elif kind == "SolveDecisionFailed":
        _say(f"{event.iteration}. refused decision: {event.error}")
    elif kind == "SolveSolved":
        _say(f"{event.iteration}. solved: {event.answer_key}")
    elif kind == "SolveStopped":
        _say(f"stopped: {event.reason}")


def _permissions(options: Any) -> Any:
    from blackboard.application.runners import Permissions

    return Permissions(options.permission_mode, options.allowed_tools)


def _line(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= 100 else flat[:99] + "…"


def _say(text: str) -> None:
    from blackboard.infrastructure.cli import terminal_safe

    print(f"blackboard: {terminal_safe(text)}", file=sys.stderr, flush=True)
