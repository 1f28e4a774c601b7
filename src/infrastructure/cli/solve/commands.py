"""`blackboard solve`: a controller agent drives a board until the problem is solved (application/solve/solver.py);
`solve --resume RUN`: a run whose process ended, taken up from its events; `solve --status [RUN]`: a run (or
the board's runs) as its events tell it, `orphaned` when it is running and its process is gone."""

from __future__ import annotations

import argparse
import contextlib
import signal
import sys
from collections.abc import Iterator
from typing import Any

from dependency_injector.wiring import Provide, inject

from blackboard.domain.errors import InvalidInput
from blackboard.infrastructure.cli.render import Output
from blackboard.infrastructure.composition.container import Container
from blackboard.infrastructure.composition.settings import BlackboardSettings

Lazy = Any


@inject
def solve(
    args: argparse.Namespace,
    config: BlackboardSettings = Provide[Container.config],
    solver: Lazy = Provide[Container.solver.provider],
    registry: Lazy = Provide[Container.agent_registry.provider],
    status: Lazy = Provide[Container.status.provider],
    processes: Lazy = Provide[Container.solve_processes.provider],
    clock: Lazy = Provide[Container.clock.provider],
) -> Output:
    from blackboard.application.runners import Permissions
    from blackboard.application.solve.solver import ResumeSolve, SolveProblem
    from blackboard.infrastructure import documents
    from blackboard.infrastructure.cli.runner_options import run_options
    from blackboard.infrastructure.solve.run import SolveParts, SolveSetup, resume_solve, run_solve

    if args.resume is None and (args.status is not None or args.problem is None):
        return _status(args, solver())
    if args.at is not None:
        raise InvalidInput("--at", "goes with --status: a run as it was at a log position")
    if args.resume is not None:
        _resume_alone(args)
        cmd: Any = ResumeSolve(
            blackboard_id=args.blackboard,
            run_id=args.resume,
            resumed_by=args.posted_by or "solve",
            max_iterations=args.max_iterations,
            step_timeout=args.step_timeout,
            start_workers=True if args.start_workers else None,
        )
        options = None
    else:
        given = {
            "max_iterations": args.max_iterations,
            "posted_by": args.posted_by,
            "step_timeout": args.step_timeout,
            "synthesis": args.synthesis,
        }
        cmd = SolveProblem(
            blackboard_id=args.blackboard,
            problem=args.problem,
            **{name: value for name, value in given.items() if value is not None},  # else the defaults
        )
        options = run_options(args, config)
    setup = SolveSetup(
        controller=args.controller,
        runner=options.runner if options else None,
        model=options.model if options else None,
        workdir=options.workdir if options else None,
        permissions=Permissions(options.permission_mode, options.allowed_tools) if options else Permissions(),
        board_env=dict(options.board_env) if options else _board_env(config),
        start_workers=args.start_workers,
        keep_step=args.keep_step,
        beat_every=config.beat_interval,
    )
    the_solver = solver()
    the_solver.report = _report
    parts = SolveParts(the_solver, registry(), status(), processes(), clock(), config.artifacts_dir)
    try:
        with _interruptible():
            if args.resume is not None:
                run = resume_solve(cmd, setup, parts, _say)
            else:
                run = run_solve(cmd, setup, parts, _say)
    except Exception as exc:
        if (ended := getattr(exc, "run", None)) is not None:
            exc.output = _shown(ended, documents)  # type: ignore[attr-defined] - printed with the error
        raise
    return _shown(run, documents)


NEW_RUN_ONLY = (
    ("problem", "PROBLEM"),
    ("controller", "--controller"),
    ("runner", "--runner"),
    ("model", "--model"),
    ("workdir", "--workdir"),
    ("permission_mode", "--permission-mode"),
    ("allowed_tools", "--allow-tool"),
    ("synthesis", "--no-synthesis"),
)


def _resume_alone(args: argparse.Namespace) -> None:
    """--resume continues a run as it was started: what would make it another run is refused (exit 2)."""
    if args.status is not None:
        raise InvalidInput("--resume", "takes a run up; --status shows one: give one of the two")
    for dest, flag in NEW_RUN_ONLY:
        if getattr(args, dest, None) not in (None, []):
            raise InvalidInput(
                flag,
                "goes with a new run: --resume continues the run with the problem, controller, runner "
                "and synthesis options it started with (--max-iterations, --step-timeout, --start-workers, --keep-step "
                "and --posted-by may be given)",
            )


def _board_env(config: BlackboardSettings) -> dict[str, str]:
    from blackboard.infrastructure.composition.settings import board_environment

    return dict(board_environment(config))


@contextlib.contextmanager
def _interruptible() -> Iterator[None]:
    """SIGTERM as Ctrl-C: the run stops (or, with --keep-step, is left for a resume) and its workers stop,
    exit 130. Once one arrived, another is told to wait instead of cutting that short."""
    handled = (signal.SIGINT, signal.SIGTERM)
    previous = {s: signal.getsignal(s) for s in handled}

    def stopping(signum: int, _frame: object) -> None:
        _say("stopping: the run records its stop and stops its workers (a few seconds)")

    def interrupted(signum: int, _frame: object) -> None:
        for s in handled:
            signal.signal(s, stopping)
        raise KeyboardInterrupt

    for s in handled:
        signal.signal(s, interrupted)
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def _status(args: argparse.Namespace, solver: Any) -> Output:
    from blackboard.infrastructure import documents

    if args.start_workers or args.controller is not None or args.keep_step or args.synthesis is not None:
        raise InvalidInput(
            "--status",
            "shows a run: it takes no PROBLEM, --controller, --start-workers, --keep-step nor --no-synthesis",
        )
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
    if run.answer is not None and run.synthesized:
        lines += [f"best answer at the iteration limit ({run.answer_key}):", run.answer]
    elif run.answer is not None:
        lines += [f"answer ({run.answer_key}):", run.answer]
    if run.state in ("stopped", "orphaned"):
        lines.append(f"{run.state}: {run.reason}")
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
    elif kind == "SolveSynthesized":
        best = event.answer_key or f"none ({event.error})"
        _say(f"the iterations are spent; the controller's best answer from what is known: {best}")
    elif kind == "SolveStopped":
        _say(f"stopped: {event.reason}")
    elif kind == "SolveResumed":
        _say(f"{event.run_id}: resumed by {event.actor} on {event.host}:{event.pid}")


def _line(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= 100 else flat[:99] + "…"


def _say(text: str) -> None:
    from blackboard.infrastructure.cli import terminal_safe

    print(f"blackboard: {terminal_safe(text)}", file=sys.stderr, flush=True)
