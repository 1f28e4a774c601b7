"""The keeper process: it reads what its worker tells it and kills a run's processes when the worker is gone or
the run's claim lapsed.

What the worker writes, one JSON object a line:
  {"run": ID, "pid": P, "group": G, "marks": {...}, "renewed": T, "wall": W, "timeout": S}
                                                  a run's root process started; its lease (`lease.Lease`)
  {"run": ID, "renewed": T, "wall": W}            its claim was renewed at T (time.monotonic(); W: time.time())
  {"ended": ID}                     it ended (by itself or stopped): end what it left running (`Ending`), forget it
It kills every run it holds once the pipe ends (the worker ended, SIGKILL included: the kernel closes its end)
or the parent-death signal says the worker is gone (Linux; elsewhere it looks at its parent every POLL seconds),
then exits; and a run whose claim lapses by its own clock (`lease.Lease`) at once. A run that ended leaves
nothing behind either: whatever of it is still alive then (a background process, one that started a session of
its own, one whose parent ended: `trees.members`) gets SIGTERM, and SIGKILL STOP_GRACE seconds later if it is
still there (at once, if the worker ends meanwhile). The runs that end within LOOK_EVERY seconds of each other
are looked for in one pass through /proc (every process's environment read once: ~6 ms for a hundred
processes), so a worker ending a hundred runs a second costs its keeper a few looks a second, not a hundred.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from blackboard.infrastructure.keeper.lease import Lease
from blackboard.infrastructure.keeper.trees import STOP_GRACE, kill_left, kill_run, left_running, term

POLL = 0.5  # seconds between looks at the parent where no parent-death signal is to be had (macOS)
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
LOOK_EVERY = 0.2  # seconds: the runs that ended within them are looked for together


@dataclass(frozen=True, slots=True)
class Held:
    pid: int
    group: int
    marks: Mapping[str, str]
    lease: Lease


@dataclass
class Ending:
    """The runs that ended and have not been looked for yet (the first LOOK_EVERY seconds ago at most), and
    what they left running: told to end (SIGTERM), by the run, with the moment it is killed if still there."""

    # by run and root process: a signal's run may end twice before a look (a retry claimed by the same worker)
    ended: dict[tuple[str, int], Held] = field(default_factory=dict)
    look_at: float | None = None
    left: dict[tuple[str, int], tuple[set[int], float]] = field(default_factory=dict)

    def add(self, run_id: str, held: Held) -> None:
        self.ended[(run_id, held.pid)] = held
        if self.look_at is None:
            self.look_at = time.monotonic() + LOOK_EVERY

    def next(self) -> float | None:
        """When something is due: a look, or a kill."""
        moments = [kill_at for _, kill_at in self.left.values()]
        moments += [self.look_at] if self.look_at is not None else []
        return min(moments, default=None)

    def go_on(self, now: float, held: Mapping[str, Held]) -> None:
        """The look and the kills now due. A run held again meanwhile (its signal's retry, claimed by the same
        worker) carries a token of its own in its marks, so the ended run's marks find only what it left."""
        if self.look_at is not None and now >= self.look_at:
            found = left_running({key: (h.pid, h.group, h.marks) for key, h in self.ended.items()})
            for key, pids in found.items():
                if sent := term(pids):
                    self.left[key] = (sent, now + STOP_GRACE)
            self.ended.clear()
            self.look_at = None
        for key, (pids, kill_at) in list(self.left.items()):
            if now >= kill_at:
                del self.left[key]
                _kill_left(key[0], pids, f"{STOP_GRACE:g}s after SIGTERM")

    def close(self) -> None:
        """The worker ended: what its ended runs left dies now."""
        for (run_id, _), held in self.ended.items():
            if killed := kill_run(held.pid, held.group, held.marks, settle=0.0):
                _said(f"{run_id} ended; killed {killed} process(es) it left running, as its worker ended")
        for (run_id, _), (pids, _) in self.left.items():
            _kill_left(run_id, pids, "as its worker ended")


def main(argv: list[str]) -> int:
    worker = int(argv[0])
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGUSR1, lambda *_: None)  # the parent-death signal: wakes the select below
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is the worker's to handle, never ours
    dying = _ask_for_parent_death(signal.SIGUSR1)
    runs: dict[str, Held] = {}
    ending = Ending()
    pending = b""
    stdin = sys.stdin.fileno()
    while True:
        # the parent is looked at after the parent-death request: a worker gone before it counts too
        gone = os.getppid() != worker
        timeout = 1.0 if gone else _until_next(runs, ending)  # gone: what it said before it went, then EOF
        if not dying and not gone:
            timeout = POLL if timeout is None else min(timeout, POLL)
        ready, _, _ = select.select([stdin, wake_read], [], [], timeout)
        if wake_read in ready:
            os.read(wake_read, 512)
        chunk = os.read(stdin, 65536) if stdin in ready else b""
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            _told(runs, line, ending)
        if (stdin in ready and not chunk) or (gone and not ready):
            break  # the worker's end of the pipe closed (it ended), or it is gone and says nothing more
        now = time.monotonic()
        for run_id, held in list(runs.items()):
            if held.lease.lapsed(now):
                del runs[run_id]
                _kill(run_id, held, held.lease.reason())
        ending.go_on(now, runs)
    for run_id, held in runs.items():
        _kill(run_id, held, "stopped: its worker ended")
    ending.close()
    return 0


def _told(runs: dict[str, Held], line: bytes, ending: Ending) -> None:
    try:
        said: dict[str, Any] = json.loads(line)
        if "ended" in said:
            if (held := runs.pop(str(said["ended"]), None)) is not None:
                ending.add(str(said["ended"]), held)
        elif "pid" in said:
            lease = Lease(float(said["renewed"]), float(said["timeout"]), float(said["wall"]))
            runs[str(said["run"])] = Held(int(said["pid"]), int(said["group"]), dict(said["marks"]), lease)
        elif (held := runs.get(str(said["run"]))) is not None:
            renewed = replace(held.lease, renewed=float(said["renewed"]), wall=float(said["wall"]))
            runs[str(said["run"])] = replace(held, lease=renewed)
    except (ValueError, KeyError, TypeError) as exc:  # the worker's mistake: said, never the keeper's end
        print(f"blackboard keeper: ignored a line it could not read ({exc}): {_shown(line)}", file=sys.stderr)


def _shown(line: bytes) -> str:
    """A line as the keeper may print it: never a run's marks (its claim's token is the claim's proof), so a
    line that is not a JSON object is described, not shown."""
    try:
        said = json.loads(line)
    except ValueError:
        said = None
    if not isinstance(said, dict):
        return f"({len(line)} bytes, not a JSON object)"
    if "marks" in said:
        said["marks"] = "(hidden)"
    return repr(json.dumps(said)[:200])


def _until_next(runs: Mapping[str, Held], ending: Ending) -> float | None:
    """Seconds until the next lapse of a claim, or the next look or kill for ended runs; None: nothing due."""
    moments = [held.lease.lapses_at for held in runs.values()]
    moments += [due] if (due := ending.next()) is not None else []
    if not moments:
        return None
    return max(0.0, min(moments) - time.monotonic())


def _kill(run_id: str, held: Held, why: str) -> None:
    killed = kill_run(held.pid, held.group, held.marks)
    print(f"blackboard keeper: {run_id} {why}; killed {killed} process(es)", file=sys.stderr, flush=True)


def _kill_left(run_id: str, pids: set[int], when: str) -> None:
    if killed := kill_left(pids):
        _said(f"{run_id} ended; killed {killed} process(es) it left running, {when}")


def _said(text: str) -> None:
    print(f"blackboard keeper: {text}", file=sys.stderr, flush=True)


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
