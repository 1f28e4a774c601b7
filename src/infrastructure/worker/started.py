"""Workers started for the length of a solve run (`solve --start-workers`): real `blackboard worker`
subprocesses, one per specialist that had no live worker, on the same store and agents folders, serving
the run's board; stopped when the run ends (SIGTERM, the worker's own graceful stop, then the whole
process tree killed if it is still there after the grace)."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from blackboard.infrastructure.agents.spec import path_slug
from blackboard.infrastructure.runners.processes import kill_tree

logger = logging.getLogger("blackboard.solve")

MAIN = "import sys; from blackboard.infrastructure.cli import main; sys.exit(main())"
STOP_GRACE = 15.0  # seconds a started worker has to stop on its own before its tree is killed


class StartedWorkers:
    def __init__(self, env: Mapping[str, str], cwd: Path, logs: Path, extra_args: Sequence[str] = ()) -> None:
        self._env = {
            **os.environ,
            **env,
        }  # the board's settings as variables (settings.board_environment)
        self._cwd, self._logs, self._extra = cwd, logs, tuple(extra_args)
        self._started: list[tuple[str, subprocess.Popen[bytes]]] = []

    @property
    def agents(self) -> list[str]:
        return [name for name, _ in self._started]

    @property
    def pids(self) -> list[int]:
        return [p.pid for _, p in self._started]

    def start(self, agents: Sequence[str], blackboard_id: str) -> list[str]:
        """Start one worker per agent, serving only this board; their output goes to `logs/<agent>.log` (the
        name's path slug: `Good List` -> `good-list-<hash>.log`)."""
        self._logs.mkdir(parents=True, exist_ok=True)
        for agent in agents:
            argv = [
                sys.executable,
                "-c",
                MAIN,
                "worker",
                "--agent",
                agent,
                "--board",
                blackboard_id,
                *self._extra,
            ]
            with open(self._logs / f"{path_slug(agent)}.log", "ab") as log:
                process = subprocess.Popen(
                    argv,
                    cwd=self._cwd,
                    env=self._env,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,  # its own group: stopping it reaches whatever it started
                )
            self._started.append((agent, process))
            logger.info("started a worker of %s (pid %d)", agent, process.pid)
        return list(agents)

    def stop(self, grace: float = STOP_GRACE) -> None:
        """Ask each to stop (SIGTERM), wait up to `grace` for all, then kill what is left, tree and all."""
        for _, process in self._started:
            if process.poll() is None:
                try:
                    os.killpg(process.pid, signal.SIGTERM)
                except (ProcessLookupError, PermissionError):
                    pass
        until = time.monotonic() + grace
        for agent, process in self._started:
            try:
                process.wait(timeout=max(0.0, until - time.monotonic()))
            except subprocess.TimeoutExpired:
                logger.warning(
                    "the worker of %s (pid %d) did not stop in %gs: killed", agent, process.pid, grace
                )
            kill_tree(process)  # also reaches anything it started that outlived it
        self._started.clear()
