"""The worker's side of its keeper: start it, tell it of each run, renewal and end, start another if it died."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from typing import IO, Any

from blackboard.infrastructure.keeper.lease import Lease

logger = logging.getLogger("blackboard.worker")  # the whole worker logs under one name, which users filter on

CHECK_EVERY = 1.0  # seconds between looks at whether the keeper still runs, when nothing is said to it


class Keeper:
    """One keeper process for this worker. Every method is safe from any thread and never raises: a keeper
    that cannot be reached is started again, with every run it should hold told again."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._pipe: IO[bytes] | None = None
        self._runs: dict[str, dict[str, Any]] = {}  # what it must hold: each run's latest registration
        self._checked = 0.0

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def start(self) -> None:
        with self._lock:
            self._start()

    def hold(self, run_id: str, pid: int, marks: Mapping[str, str], lease: Lease) -> None:
        """A run's root process started (in a session of its own): kill its tree if this worker ends or the
        lease lapses first."""
        said = {"run": run_id, "pid": pid, "group": _group(pid), "marks": dict(marks)}
        said.update(renewed=lease.renewed, wall=lease.wall, timeout=lease.timeout)
        with self._lock:
            self._runs[run_id] = said
            self._say(said)

    def renewed(self, run_id: str, lease: Lease) -> None:
        with self._lock:
            if (said := self._runs.get(run_id)) is not None:
                said.update(renewed=lease.renewed, wall=lease.wall)
                self._say({"run": run_id, "renewed": lease.renewed, "wall": lease.wall})

    def ended(self, run_id: str) -> None:
        with self._lock:
            if self._runs.pop(run_id, None) is not None:
                self._say({"ended": run_id})

    def check(self) -> None:
        """Start another keeper if this one ended (at most once every CHECK_EVERY seconds)."""
        now = time.monotonic()
        if now - self._checked < CHECK_EVERY:
            return
        self._checked = now
        with self._lock:
            if self._process is not None and self._process.poll() is not None:
                self._restart()

    def close(self) -> None:
        """The worker is done: its keeper ends too (its pipe closes), after killing any run still told of."""
        with self._lock:
            if self._pipe is not None:
                try:
                    self._pipe.close()
                except OSError:
                    pass
            if self._process is not None:
                try:
                    self._process.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    logger.warning("the keeper (pid %d) did not end with its worker", self._process.pid)
            self._process = self._pipe = None

    def _start(self) -> None:
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "blackboard.infrastructure.keeper", str(os.getpid())],
                stdin=subprocess.PIPE,  # the write end is ours alone: not inheritable, so no run holds it open
                stdout=subprocess.DEVNULL,
                start_new_session=True,  # a Ctrl-C or a signal to the worker's group does not reach it
            )
        except OSError as exc:  # the worker still stops its runs itself (their leases, its grace)
            logger.error(
                "could not start the keeper (%s): runs end with this worker only if it ends cleanly", exc
            )
            self._process = self._pipe = None
            return
        self._pipe = self._process.stdin

    def _restart(self) -> None:
        ended = self._process
        logger.warning(
            "the keeper (pid %s) ended (%s); starting another, which holds the %d run(s) running",
            ended.pid if ended else None,
            ended.returncode if ended else None,
            len(self._runs),
        )
        if self._pipe is not None:
            try:
                self._pipe.close()
            except OSError:
                pass
        self._start()
        for said in self._runs.values():
            self._write(said)

    def _say(self, said: Mapping[str, Any]) -> None:
        if self._process is None:
            return  # not started (a worker being built, or closed): nothing to keep
        if self._process.poll() is not None or not self._write(said):
            self._restart()

    def _write(self, said: Mapping[str, Any]) -> bool:
        assert self._pipe is not None
        try:
            self._pipe.write(json.dumps(said).encode() + b"\n")
            self._pipe.flush()
            return True
        except (BrokenPipeError, OSError, ValueError):
            return False


def _group(pid: int) -> int:
    try:
        return os.getpgid(pid)
    except ProcessLookupError:
        return pid  # ended already: its group was its own (a run starts a session of its own)
