"""`blackboard worker`'s (and `solve`'s) runner flags: which runner, the model, the workdir, how far a headless run's
permissions are widened; and the settings a run's board session needs (docs/agents.md, "Runners")."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from blackboard.domain.errors import InvalidInput
from blackboard.infrastructure.runners.catalog import RUNNERS

if TYPE_CHECKING:  # the parser imports this module: the settings (and what they import) wait for `worker`
    from blackboard.infrastructure.composition.settings import BlackboardSettings

PERMISSION_MODES = ("acceptEdits", "auto", "bypassPermissions", "manual", "dontAsk", "plan")  # Claude Code's


def add_runner_flags(worker: Any) -> None:
    worker.add_argument(
        "--runner",
        choices=RUNNERS,
        metavar="RUNNER",
        help="run the agent with this runner, whatever its file says: " + ", ".join(RUNNERS),
    )
    worker.add_argument(
        "--model",
        metavar="MODEL",
        help="the model for an agent file whose model is absent or inherit (env BLACKBOARD_MODEL)",
    )
    worker.add_argument(
        "--workdir", metavar="DIR", help="where a runner's runs work (default: the current directory)"
    )
    worker.add_argument(
        "--permission-mode",
        choices=PERMISSION_MODES,
        metavar="MODE",
        help="widen what a headless claude-code run may do (Claude Code's permission modes: "
        + ", ".join(PERMISSION_MODES)
        + "; default dontAsk: the file's tools and the board's, nothing else)",
    )
    worker.add_argument(
        "--allow-tool",
        action="append",
        default=[],
        metavar="TOOL",
        dest="allowed_tools",
        help="pre-approve this tool for a claude-code run besides the file's (e.g. 'Bash(git *)'; repeatable)",
    )


def run_options(args: argparse.Namespace, config: BlackboardSettings) -> Any:
    """The RunOptions of these flags, checked (a missing workdir is bad input, exit 2)."""
    from blackboard.infrastructure.composition.settings import board_environment
    from blackboard.infrastructure.worker.options import RunOptions

    workdir = args.workdir
    if workdir is not None and not Path(workdir).is_dir():
        raise InvalidInput("--workdir", f"must be an existing folder, got {workdir!r}")
    model = args.model or os.environ.get("BLACKBOARD_MODEL") or None
    return RunOptions(
        runner=args.runner,
        model=model,
        workdir=workdir,
        permission_mode=args.permission_mode,
        allowed_tools=tuple(args.allowed_tools),
        board_env=board_environment(config),
    )
