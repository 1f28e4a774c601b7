"""Stopping a run's whole process tree: its process group, any descendant that left the group, and (Linux)
any process that carries the run's marks in its environment after its parent ended (keeper/trees.py)."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Mapping

from blackboard.infrastructure.keeper.trees import STOP_GRACE, descendants, kill_run

__all__ = ["STOP_GRACE", "descendants", "kill_tree"]


def kill_tree(
    process: subprocess.Popen[str], grace: float = 0.0, marks: Mapping[str, str] | None = None
) -> None:
    """SIGKILL the process's group (it was started in a session of its own), every descendant that
    started one of its own, and every process carrying `marks` (the run's: keeper/marks.py), then reap the
    process: nothing of the run goes on. With `grace`, the group is sent SIGTERM first and has that many
    seconds to end by itself (a cancel: docs/control.md)."""
    below = descendants(process.pid)  # before anything ends: a child's end makes its own children orphans
    if grace > 0:
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=grace)
        except (ProcessLookupError, PermissionError):
            pass
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    for pid in below:  # those in the group are gone already; this reaches the ones that left it
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    if marks:  # and the ones whose parent ended meanwhile (a double fork), by what they carry
        kill_run(process.pid, process.pid, marks, settle=0.5)
    process.wait()
