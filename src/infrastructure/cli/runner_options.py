"""`blackboard worker`'s (and `solve`'s) runner flags: which runner, the model, the workdir, how far a headless run's
permissions are widened; and the settings a run's board session needs (docs/agents.md, "Runners")."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from blackboard.domain.errors import InvalidInput
<<<<<<< HEAD

if TYPE_CHECKING:  # the parser imports this module: the settings (and what they import) wait for `worker`
    from blackboard.infrastructure.settings import BlackboardSettings
=======
from blackboard.infrastructure.settings import BlackboardSettings, board_environment
>>>>>>> h-solve

RUNNERS = ("claude-code", "anthropic", "openai")  # as runners.catalog names them (a test keeps them in step)
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
<<<<<<< HEAD


def board_environment(config: BlackboardSettings) -> tuple[tuple[str, str], ...]:
    """The worker's settings as the variables that give them, so a run's `blackboard mcp` opens the same
    store and agents with the same timeouts, however the worker was given them (flags or variables), and
    wherever the run works: relative paths are made absolute."""
    from blackboard.infrastructure.settings import KNOBS

    skipped = {"json"}  # how a command prints: not the board's
    values = {
        name: _text(getattr(config, name)) for name, knob in KNOBS.items() if knob.env and name not in skipped
    }
    values["agents_dir"] = os.pathsep.join(
        str(Path(folder).resolve()) for folder in config.agents_dir.split(os.pathsep) if folder
    )
    if config.db.startswith("sqlite:///") and not config.db.startswith("sqlite:////"):
        path, _, query = config.db.removeprefix("sqlite:///").partition("?")
        if path and path != ":memory:":
            values["db"] = f"sqlite:///{Path(path).resolve()}" + (f"?{query}" if query else "")
    return tuple((str(KNOBS[name].env), value) for name, value in values.items())


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)
=======
>>>>>>> h-solve
