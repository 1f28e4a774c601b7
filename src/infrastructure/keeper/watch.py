"""The keeper process: it reads what its worker tells it and kills a run's processes when the worker is gone or
the run's claim lapsed.

What the worker writes, one JSON object a line:
  {"run": ID, "pid": P, "group": G, "marks": {...}, "renewed": T, "wall": W, "timeout": S}
                                                  a run's root process started; its lease (`lease.Lease`)
  {"run": ID, "renewed": T, "wall": W}            its claim was renewed at T (time.monotonic(); W: time.time())
  {"ended": ID}                             it ended (by itself or stopped): end what it left running, forget it
It kills every run it holds once the pipe ends (the worker ended, SIGKILL included: the kernel closes its end)
or the parent-death signal says the worker is gone (Linux; elsewhere it looks at its parent every POLL seconds),
then exits; and a run whose claim lapses by its own clock (`lease.Lease`) at once. A run that ended leaves
nothing behind either: whatever of it is still alive then (a background process, one that started a session of
its own, one whose parent ended: `trees.members`) gets SIGTERM, and SIGKILL STOP_GRACE seconds later if it is
still there (at once, if the worker ends meanwhile).
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from blackboard.infrastructure.keeper.lease import Lease
from blackboard.infrastructure.keeper.trees import STOP_GRACE, kill_left, kill_run, term_run

POLL = 0.5  # seconds between looks at the parent where no parent-death signal is to be had (macOS)
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


@dataclass(frozen=True, slots=True)
class Held:
    pid: int
    group: int
    marks: Mapping[str, str]
    lease: Lease


def main(argv: list[str]) -> int:
    worker = int(argv[0])
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGUSR1, lambda *_: None)  # the parent-death signal: wakes the select below
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is the worker's to handle, never ours
    dying = _ask_for_parent_death(signal.SIGUSR1)
    runs: dict[str, Held] = {}
    left: dict[
        str, tuple[set[int], float]
    ] = {}  # what ended runs left running, told to end, and when to kill it
    pending = b""
    stdin = sys.stdin.fileno()
    while True:
        # the parent is looked at after the parent-death request: a worker gone before it counts too
        gone = os.getppid() != worker
        timeout = 1.0 if gone else _until_next(runs, left)  # gone: what it said before it went, then EOF
        if not dying and not gone:
            timeout = POLL if timeout is None else min(timeout, POLL)
        ready, _, _ = select.select([stdin, wake_read], [], [], timeout)
        if wake_read in ready:
            os.read(wake_read, 512)
        chunk = os.read(stdin, 65536) if stdin in ready else b""
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            _told(runs, line, left)
        if (stdin in ready and not chunk) or (gone and not ready):
            break  # the worker's end of the pipe closed (it ended), or it is gone and says nothing more
        now = time.monotonic()
        for run_id, held in list(runs.items()):
            if held.lease.lapsed(now):
                del runs[run_id]
                _kill(run_id, held, held.lease.reason())
        for run_id, (pids, kill_at) in list(left.items()):
            if now >= kill_at:
                del left[run_id]
                _kill_left(run_id, pids)
    for run_id, held in runs.items():
        _kill(run_id, held, "stopped: its worker ended")
    for run_id, (pids, _) in left.items():
        _kill_left(run_id, pids)
    return 0


def _told(runs: dict[str, Held], line: bytes, left: dict[str, tuple[set[int], float]]) -> None:
    try:
        said: dict[str, Any] = json.loads(line)
        if "ended" in said:
            if (held := runs.pop(str(said["ended"]), None)) is not None and (
                pids := term_run(held.pid, held.group, held.marks)
            ):
                left[str(said["ended"])] = (pids, time.monotonic() + STOP_GRACE)
        elif "pid" in said:
            lease = Lease(float(said["renewed"]), float(said["timeout"]), float(said["wall"]))
            runs[str(said["run"])] = Held(int(said["pid"]), int(said["group"]), dict(said["marks"]), lease)
        elif (held := runs.get(str(said["run"]))) is not None:
            renewed = replace(held.lease, renewed=float(said["renewed"]), wall=float(said["wall"]))
            runs[str(said["run"])] = replace(held, lease=renewed)
    except (ValueError, KeyError, TypeError) as exc:  # the worker's mistake: said, never the keeper's end
        print(f"blackboard keeper: ignored a line it could not read ({exc}): {line[:200]!r}", file=sys.stderr)


def _until_next(runs: Mapping[str, Held], left: Mapping[str, tuple[set[int], float]]) -> float | None:
    """Seconds until the next lapse of a claim, or the next kill of what an ended run left; None: nothing due."""
    moments = [held.lease.lapses_at for held in runs.values()] + [kill_at for _, kill_at in left.values()]
    if not moments:
        return None
    return max(0.0, min(moments) - time.monotonic())


def _kill(run_id: str, held: Held, why: str) -> None:
    killed = kill_run(held.pid, held.group, held.marks)
    print(f"blackboard keeper: {run_id} {why}; killed {killed} process(es)", file=sys.stderr, flush=True)


def _kill_left(run_id: str, pids: set[int]) -> None:
    if killed := kill_left(pids):
        print(
            f"blackboard keeper: {run_id} ended; killed {killed} process(es) it left running, {STOP_GRACE:g}s "
            "after SIGTERM",
            file=sys.stderr,
            flush=True,
        )


def _ask_for_parent_death(signum: int) -> bool:
    """Have the kernel send `signum` when the worker ends (Linux's PR_SET_PDEATHSIG); whether it will."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, int(signum), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False
