"""A run's processes, and their end: its process group, its descendants, and every process carrying its marks.

A run's root process starts in a session of its own, so its process group holds what it starts; a descendant
that started a session of its own has left the group but is still found below the root through /proc, and one
whose parent ended meanwhile (a double fork) is found by the marks in its environment (`marks`). Linux reads
/proc; elsewhere (macOS) `ps` gives the tree and the groups, and the environments are not read.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")
SETTLE = 2.0  # seconds a kill keeps looking for what the run forked meanwhile, or what is still dying
STOP_GRACE = (
    1.0  # seconds a run's processes have between SIGTERM and SIGKILL (a stop; what a run left running)
)


@dataclass(frozen=True, slots=True)
class Process:
    pid: int
    parent: int
    group: int
    zombie: bool  # ended, waiting for its parent: nothing of it runs


def processes() -> dict[int, Process]:
    """Every process there is, by pid."""
    if not PROC.is_dir():
        return _from_ps()
    found = {}
    for entry in PROC.glob("[0-9]*/stat"):
        try:
            text = entry.read_text()
        except OSError:  # gone meanwhile
            continue
        # pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses, so read after the last ')'
        fields = text[text.rfind(")") + 2 :].split()
        pid = int(entry.parent.name)
        found[pid] = Process(pid, int(fields[1]), int(fields[2]), fields[0] in ("Z", "X"))
    return found


def _from_ps() -> dict[int, Process]:
    try:
        listed = subprocess.run(
            ["ps", "-A", "-o", "pid=,ppid=,pgid=,stat="], capture_output=True, text=True, timeout=10
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return {}
    found = {}
    for line in listed.splitlines():
        fields = line.split()
        if len(fields) >= 4 and fields[0].isdigit():
            pid = int(fields[0])
            found[pid] = Process(pid, int(fields[1]), int(fields[2]), fields[3].startswith("Z"))
    return found


def descendants(pid: int, table: Mapping[int, Process] | None = None) -> list[int]:
    """Every process below `pid`."""
    children: dict[int, list[int]] = {}
    for process in (processes() if table is None else table).values():
        children.setdefault(process.parent, []).append(process.pid)
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def carrying(marks: Mapping[str, str], pids: Iterable[int]) -> list[int]:
    """Those of `pids` whose environment holds every one of `marks` (Linux; none elsewhere)."""
    wanted = {f"{name}={value}".encode() for name, value in marks.items()}
    if not wanted or not PROC.is_dir():
        return []
    found = []
    for pid in pids:
        try:
            environment = set((PROC / str(pid) / "environ").read_bytes().split(b"\0"))
        except OSError:  # gone, or not ours to read
            continue
        if wanted <= environment:
            found.append(pid)
    return found


def members(root: int, group: int, marks: Mapping[str, str], table: Mapping[int, Process]) -> set[int]:
    """The run's live processes: its process group, the root's descendants, and what carries its marks."""
    ours = os.getpgrp()  # a root that shares the caller's group: the group is not the run's alone
    found = {p.pid for p in table.values() if p.group == group and group != ours}
    found.update(descendants(root, table))
    found.update(carrying(marks, table))
    found.discard(os.getpid())  # the caller is never its own run's (a keeper, a worker)
    return {pid for pid in found if pid in table and not table[pid].zombie}


def kill_run(root: int, group: int, marks: Mapping[str, str], settle: float = SETTLE) -> int:
    """SIGKILL every process of the run rooted at `root` (`group`: its process group), looking again until
    none is left (what it forked while dying included) or `settle` seconds passed; how many were killed."""
    killed: set[int] = set()
    until = time.monotonic() + settle
    while True:
        alive = members(root, group, marks, processes())
        for pid in alive:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                continue
            killed.add(pid)
        if not alive or time.monotonic() >= until:
            return len(killed)
        time.sleep(0.01)


def left_running(runs: Mapping[str, tuple[int, int, Mapping[str, str]]]) -> dict[str, set[int]]:
    """The live processes of each run (`root`, `group`, `marks` by its id), as `members` finds them, from one
    look at the process table and at each process's environment for all of them."""
    table = processes()
    environments: dict[int, set[bytes]] = {}
    if PROC.is_dir() and any(marks for _, _, marks in runs.values()):
        for pid in table:
            try:
                environments[pid] = set((PROC / str(pid) / "environ").read_bytes().split(b"\0"))
            except OSError:  # gone, or not ours to read
                continue
    ours, me = os.getpgrp(), os.getpid()
    found = {}
    for run_id, (root, group, marks) in runs.items():
        pids = {p.pid for p in table.values() if p.group == group and group != ours}
        pids.update(descendants(root, table))
        if wanted := {f"{name}={value}".encode() for name, value in marks.items()}:
            pids.update(pid for pid, environment in environments.items() if wanted <= environment)
        pids.discard(me)
        found[run_id] = {pid for pid in pids if pid in table and not table[pid].zombie}
    return found


def term(pids: Iterable[int]) -> set[int]:
    """SIGTERM each of `pids`; those it was sent to."""
    sent = set()
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            continue
        sent.add(pid)
    return sent


def kill_left(pids: Iterable[int]) -> int:
    """SIGKILL those of `pids` still alive (not zombies); how many."""
    table = processes()
    killed = 0
    for pid in pids:
        if pid in table and not table[pid].zombie:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                continue
            killed += 1
    return killed
