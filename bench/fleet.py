"""Worker processes of a run, for sections (f) and (g): spawned, watched, always stopped.

A `Fleet` is a set of worker processes on one database: `blackboard worker` processes, or a job
queue's (section g's peers). Each logs to its own file; `stop` sends SIGTERM, SIGKILL after a grace
period, and reaps every one of them; each asks the kernel to SIGTERM it should the benchmark itself
die first. `fleet()` is the context manager that guarantees the stop.

The bench agent, `bench-noop`, is the same for both sections: capabilities {RESEARCH: 0.9}, a no-op
handler that is either a `command` (`true`, a process per signal; section f) or an `entrypoint` (a
Python function in the worker that returns None; section g), timeout 60 s.

Standard library only at the top: the job-queue workers of section (g) import modules that import this.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

BIN = Path(sys.executable).parent
REPO = Path(__file__).resolve().parent.parent  # the workers import bench.* from here
STOP_GRACE_S = 10.0  # after SIGTERM, before SIGKILL
POST_TIMEOUT_S = 86_400  # nothing may expire during a run

AGENT_NAME = "bench-noop"
AGENT_FILE = """---
name: {name}
description: Does nothing and succeeds at once (the benchmarks of `blackboard worker`).
capabilities: {{RESEARCH: 0.9}}
{handler}
timeout: 60
---
A no-op agent: its handler does nothing, which completes the signal with no knowledge items.
"""
HANDLERS = {  # the agent file's handler line, by kind
    "command": 'command: "true"',  # a process per signal (`sh -c true`)
    # a Python function in the worker, like the job queues' tasks
    "entrypoint": "entrypoint: bench_noop_handler:handle",
}
HANDLER_MODULE = "def handle(document):\n    return None\n"
STARTED = " started ("  # what a blackboard worker logs once it runs ("worker NAME started (AGENT/ID, ...")


# ------------------------------------------------------------------------------ the bench agent
def agents_dir(root: Path, handler: str) -> Path:
    """`root/agents-<handler>/` holding bench-noop.md (and the entrypoint's module); made once."""
    if handler not in HANDLERS:
        raise SystemExit(f"the bench agent's handler must be one of {', '.join(HANDLERS)}, not {handler!r}")
    agents = root / f"agents-{handler}"
    if not agents.exists():
        agents.mkdir()
        (agents / f"{AGENT_NAME}.md").write_text(
            AGENT_FILE.format(name=AGENT_NAME, handler=HANDLERS[handler])
        )
        (agents / "bench_noop_handler.py").write_text(HANDLER_MODULE)
    return agents


def worker_command(args: Sequence[str] = ()) -> list[str]:
    """`blackboard worker --agent bench-noop --grace 5`, its defaults otherwise, plus `args`."""
    return [str(BIN / "blackboard"), "worker", "--agent", AGENT_NAME, "--grace", "5", *args]


def base_env() -> dict[str, str]:
    """The benchmark's environment without anything that would point a worker elsewhere, bench/ importable."""
    drop = ("BLACKBOARD_", "PGQUEUER_", "PROCRASTINATE_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop) and not k.startswith("PG")}
    env["PYTHONPATH"] = os.pathsep.join(x for x in (str(REPO), os.environ.get("PYTHONPATH", "")) if x)
    return env


def worker_env(db_url: str, agents: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """What a blackboard worker of a run gets: its database, the bench agent, no expiry, text logs."""
    return {
        **base_env(),
        "BLACKBOARD_DB": db_url,
        "BLACKBOARD_AGENTS_DIR": str(agents),
        "BLACKBOARD_POST_TIMEOUT": str(POST_TIMEOUT_S),
        "BLACKBOARD_JSON": "",
        **(extra or {}),
    }


# -------------------------------------------------------------------------------------- processes
def die_with_parent() -> None:
    """In the child before exec: the kernel sends SIGTERM if the benchmark process dies first."""
    import ctypes

    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


@dataclass
class Proc:
    process: subprocess.Popen[bytes]
    log_path: Path
    log: IO[bytes]
    spawned: float  # time.monotonic()
    started: float | None = None  # when its log first said STARTED
    killed: bool = False

    def text(self) -> str:
        self.log.flush()
        return self.log_path.read_text(errors="replace")


@dataclass
class Fleet:
    """Worker processes of one run, all with the same environment; `stop` ends and reaps every one."""

    root: Path  # where the logs go
    label: str
    env: dict[str, str]
    profile_dir: Path | None = None  # BENCH_PROFILE: Python workers run under cProfile, stats kept here
    procs: list[Proc] = field(default_factory=list)
    results: list[dict[str, Any]] = field(default_factory=list)  # what each process left, once stopped

    def spawn(self, command: Sequence[str]) -> Proc:
        i = len(self.procs)
        command = list(command)
        if (
            self.profile_dir is not None and command[0] != sys.executable
        ):  # a console script: its file under cProfile
            out = self.profile_dir / f"profile-worker-{self.label}-{i}.pstats"
            command = [sys.executable, "-m", "cProfile", "-o", str(out), *command]
        log_path = self.root / f"{self.label}-{i}.log"
        log = log_path.open("wb")
        process = subprocess.Popen(
            command,
            env=self.env,
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            preexec_fn=die_with_parent,
        )
        proc = Proc(process, log_path, log, time.monotonic())
        self.procs.append(proc)
        return proc

    def start(self, command: Sequence[str], k: int) -> None:
        for _ in range(k):
            self.spawn(command)

    def wait_started(self, timeout: float = 60.0) -> list[float]:
        """For blackboard workers: seconds from each process's spawn to its "started" line."""
        deadline = time.monotonic() + timeout
        while True:
            for p in self.procs:
                if p.started is None and STARTED in p.text():
                    p.started = time.monotonic()
                if p.process.poll() is not None:
                    raise RuntimeError(
                        f"{self.label}: worker {p.process.pid} exited ({p.process.returncode}) "
                        f"before starting:\n{p.text()[-3000:]}"
                    )
            if all(p.started is not None for p in self.procs):
                return [p.started - p.spawned for p in self.procs]  # type: ignore[operator]
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.label}: workers not started after {timeout:g}s")
            time.sleep(0.01)

    def check_alive(self) -> None:
        for p in self.procs:
            if p.process.poll() is not None:
                raise RuntimeError(
                    f"{self.label}: worker {p.process.pid} exited ({p.process.returncode}) during the "
                    f"run:\n{p.text()[-3000:]}"
                )

    def cpu_seconds(self) -> float:
        """CPU used so far by the workers and the children they reaped (/proc/PID/stat)."""
        total = 0
        for p in self.procs:
            with contextlib.suppress(OSError):
                fields = Path(f"/proc/{p.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
                total += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
        return total / os.sysconf("SC_CLK_TCK")

    def stop(self) -> list[dict[str, Any]]:
        """SIGTERM every worker, SIGKILL whatever is left after STOP_GRACE_S, reap all; what each logged."""
        for p in self.procs:
            if p.process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    p.process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_S
        for p in self.procs:
            try:
                p.process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.process.kill()
                p.process.wait(timeout=10)
                p.killed = True
        results = []
        for p in self.procs:
            text = p.text()
            p.log.close()
            results.append(
                {
                    "pid": p.process.pid,
                    "exit_code": p.process.returncode,
                    "killed": p.killed,
                    "claimed": text.count(
                        " claimed sig-"
                    ),  # blackboard workers' log lines; 0 for the job queues
                    "completed": text.count(" completed sig-"),
                    "failed": text.count(" failed sig-"),
                    "tracebacks": text.count("Traceback"),
                    "warnings": [
                        line for line in text.splitlines() if "could not" in line or "went wrong" in line
                    ][:5],
                }
            )
        self.results = results
        return results


@contextlib.contextmanager
def fleet(root: Path, label: str, env: dict[str, str], profile_dir: Path | None = None) -> Iterator[Fleet]:
    """An empty fleet; on exit, however it is left, every process spawned in it is stopped and reaped."""
    running = Fleet(root, label, env, profile_dir)
    try:
        yield running
    finally:
        running.stop()
