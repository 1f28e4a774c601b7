"""The grammar of `blackboard solve`: a controller agent drives a board until the problem is solved."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from blackboard.infrastructure.cli.runner_options import add_runner_flags


def add_solve_command(commands: Any, _command: Callable[..., argparse.ArgumentParser], whole: Any) -> None:
    solve = _command(
        commands,
        "solve",
        "post a problem and let a controller agent drive the board: each iteration it posts the next "
        "signal for the specialist it picks (and waits for it), or gives the final answer as an entry",
        'blackboard solve "Why do builds fail on Fridays?" --blackboard ps-7 --start-workers',
        "solve",
    )
    solve.add_argument("problem", nargs="?", metavar="PROBLEM", help="the problem, any length")
    solve.add_argument("--blackboard", required=True, metavar="ID", help="the board the run works on")
    solve.add_argument(
        "--controller",
        metavar="AGENT",
        help="the controller: an agent of the agents folder, or an agent .md file "
        "(default: the packaged controller.md)",
    )
    solve.add_argument(
        "--max-iterations",
        type=whole,
        metavar="N",
        help="at most N decisions; reached without an answer: the controller is asked once for its best "
        "answer from what is known (the entry solve/RUN/answer, labelled synthesis), exit 5 (default 10)",
    )
    solve.add_argument(
        "--no-synthesis",
        dest="synthesis",
        action="store_false",
        default=None,
        help="at --max-iterations, stop without asking the controller for its best answer",
    )
    solve.add_argument(
        "--start-workers",
        action="store_true",
        help="start a worker for each runnable specialist with no live worker, for the run's length",
    )
    solve.add_argument(
        "--step-timeout",
        type=float,
        metavar="SECONDS",
        help="how long a step may have no live worker that fits it before the run stops and cancels it "
        "(exit 5; default 300)",
    )
    solve.add_argument(
        "--keep-step",
        action="store_true",
        help="on Ctrl-C or SIGTERM, leave the run and its open step for --resume (default: cancel the step "
        "and stop the run)",
    )
    solve.add_argument(
        "--posted-by",
        metavar="NAME",
        help="who starts the run, or with --resume who resumes it (default solve)",
    )
    solve.add_argument(
        "--resume",
        metavar="RUN",
        help="take up a running run whose process ended (killed, or interrupted with --keep-step), from its "
        "events: with the controller and options it started with",
    )
    solve.add_argument(
        "--status",
        nargs="?",
        const="",
        metavar="RUN",
        help="show the run (its decisions, its answer; orphaned: running, its process gone) instead of "
        "starting one; no RUN: the board's runs",
    )
    solve.add_argument(
        "--at", type=whole, metavar="POSITION", help="with --status: as the run was at this log position"
    )
    add_runner_flags(solve)  # the controller's runner, model, workdir and permissions
