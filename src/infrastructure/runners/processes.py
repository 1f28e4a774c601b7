"""Stopping a run's whole process tree: its process group, and any descendant that left the group."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

STOP_GRACE = 1.0  # seconds a stopped run has between SIGTERM and SIGKILL (contracts/control.md, "Cancel")


def descendants(pid: int) -> list[int]:
    """Every process below `pid`, found through /proc (Linux); none where /proc is not there."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = entry.read_text()
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may hold spaces and parentheses, so read after the last ')'
        fields = text[text.rfind(")") + 2 :].split()
        children.setdefault(int(fields[1]), []).append(int(entry.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def kill_tree(process: subprocess.Popen[str], grace: float = 0.0) -> None:
    """SIGKILL the process's group (it was started in a session of its own) and every descendant that
    started one of its own, then reap the process: nothing of the run goes on. With `grace`, the group
    is sent SIGTERM first and has that many seconds to end by itself (a cancel: contracts/control.md)."""
    below = descendants(process.pid)
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
    process.wait()
