"""`blackboard solve`: a controller agent drives a board until the problem is solved (application/solving.py);
`solve --status [RUN]`: a run (or the board's runs) as its events tell it."""

from __future__ import annotations

import argparse
import sys
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
    from blackboard.application.runners import Permissions
    from blackboard.application.solving import SolveProblem
    from blackboard.infrastructure import documents
    from blackboard.infrastructure.cli.runner_options import run_options
    from blackboard.infrastructure.solve_run import SolveSetup, run_solve

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
    options = run_options(args, config)
    setup = SolveSetup(
        controller=args.controller,
        runner=options.runner,
        model=options.model,
        workdir=options.workdir,
        permissions=Permissions(options.permission_mode, options.allowed_tools),
        board_env=dict(options.board_env),
        start_workers=args.start_workers,
    )
    the_solver = solver()
    the_solver.report = _report
    try:
        run = run_solve(cmd, setup, the_solver, registry(), status(), config.artifacts_dir, _say)
    except Exception as exc:
        if (ended := getattr(exc, "run", None)) is not None:
            exc.output = _shown(ended, documents)  # type: ignore[attr-defined] - printed with the error
        raise
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


def _line(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= 100 else flat[:99] + "…"


def _say(text: str) -> None:
    from blackboard.infrastructure.cli import terminal_safe

    print(f"blackboard: {terminal_safe(text)}", file=sys.stderr, flush=True)
