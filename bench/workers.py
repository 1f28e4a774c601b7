"""(f) `blackboard worker` as real processes on a SQLite file: draining a backlog, and waking up.

drain: k workers (1, 2, 4) of one no-op agent (`command: "true"`) are started on a fresh database
and left to go idle (each has logged "started"); then the backlog of BENCH_WORKER_SIGNALS POSTED
signals appears in ONE append (events decided by BlackboardAggregate, folded into the read model
in the same transaction, so every worker sees all of them at once). The drain time runs from that
commit until the read model shows every signal COMPLETED. Start-up (process start to "started")
is reported beside it, not inside it.

wake-up: with k idle workers (1, then 4), the benchmark posts signals one at a time through
BlackboardService, 100 to 200 ms apart; for each, the claim event's occurred_at minus the post
event's occurred_at, both read back from the event log (same machine clock).

Every worker is stopped (SIGTERM, then SIGKILL after a grace period) whatever happens, and asks
the kernel to SIGTERM it should the benchmark itself die. With BENCH_PROFILE=1 each worker runs
under cProfile and its stats land in bench-results/profile-worker-*.pstats.
"""

from __future__ import annotations

import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from sqlalchemy import Engine, func, select

from blackboard.application.commands import PostSignal
from blackboard.application.dispatcher import EventDispatcher
from blackboard.application.ports import Recorded
from blackboard.application.service import BlackboardService
from bench.common import Config, die_with_parent, percentile, progress, sqlite_engine, stop_processes, temp_dir
from blackboard.domain.blackboard import BlackboardAggregate
from blackboard.domain.signals import SignalPayload, SignalType
from blackboard.infrastructure.agents.registry import FrontmatterAgentRegistry
from blackboard.infrastructure.clock import RandomSignalIds, SystemClock
from blackboard.infrastructure.persistence.event_store import SqlAlchemyEventStore
from blackboard.infrastructure.persistence.read_model import SqlSignalReadModel
from blackboard.infrastructure.persistence.snapshots import SqlSnapshotStore
from blackboard.infrastructure.persistence.tables import SIGNALS

BLACKBOARD = str(Path(sys.executable).parent / "blackboard")
AGENT_NAME = "bench-noop"
AGENT_FILE = f"""---
name: {AGENT_NAME}
description: Does nothing and succeeds at once (the benchmark of `blackboard worker`).
capabilities: {{RESEARCH: 0.9}}
command: "true"
timeout: 60
---
A no-op agent: exit 0 with empty output completes the signal with no knowledge items.
"""
BOARD = "ps-workers"
POST_TIMEOUT_S = 86_400  # nothing may expire during the run
META = {"actor": "bench-backlog", "command": "PostSignal", "causation_id": "bench-backlog",
        "correlation_id": "bench-backlog"}

# name -> (full, small); each can be overridden by its own environment variable.
SIZES: dict[str, tuple[Any, Any]] = {
    "BENCH_WORKER_SIGNALS": (600, 150),  # drain: signals in the backlog (2000: about 4 minutes)
    "BENCH_WORKER_COUNTS": ("1,2,4", "1,2,4"),  # drain: worker processes per run
    "BENCH_WAKEUPS": (150, 40),  # wake-up: signals posted one at a time, per worker count
    "BENCH_WAKEUP_WORKERS": ("1,4", "1,4"),  # wake-up: idle workers
    "BENCH_WAKEUP_GAP_MS": ("100-200", "100-200"),  # wake-up: pause between two posts (uniform)
    "BENCH_WORKER_ARGS": ("", ""),  # extra `blackboard worker` flags, e.g. "--head-start 0" (default: none)
    "BENCH_WORKER_ENV": ("", ""),  # extra worker environment, e.g. "BLACKBOARD_POLL_INTERVAL=0.005"
}
IDLE_S = 2.0  # wake-up: seconds of doing nothing, to measure what idle workers cost
TARGET_RATIO = 0.8
TARGET_P99_MS = 50.0


def sizes(config: Config) -> dict[str, Any]:
    full = config.scale == "full"
    return {name: os.environ.get(name, str(pair[0] if full else pair[1])) for name, pair in SIZES.items()}


def _counts(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


# --------------------------------------------------------------------------------- processes
@dataclass(frozen=True)
class Extra:
    """What BENCH_WORKER_ARGS and BENCH_WORKER_ENV add to every worker (nothing by default)."""

    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, args: str, env: str) -> Extra:
        return cls(tuple(args.split()), dict(item.split("=", 1) for item in env.split()))


@dataclass
class WorkerProcess:
    process: subprocess.Popen[bytes]
    log_path: Path
    log: IO[bytes]
    spawned: float  # time.monotonic()
    started: float | None = None  # when its log first said "started"
    killed: bool = False

    def text(self) -> str:
        self.log.flush()
        return self.log_path.read_text(errors="replace")


class Fleet:
    """k `blackboard worker --agent bench-noop` processes on one database; stopped on exit, always."""

    def __init__(self, root: Path, db: Path, agents: Path, label: str, extra: Extra, profile_dir: Path | None) -> None:
        self.root, self.label, self.extra, self.profile_dir = root, label, extra, profile_dir
        inherited = {k: v for k, v in os.environ.items() if not k.startswith("BLACKBOARD_")}
        self.env = {**inherited, "BLACKBOARD_DB": f"sqlite:///{db}", "BLACKBOARD_AGENTS_DIR": str(agents),
                    "BLACKBOARD_POST_TIMEOUT": str(POST_TIMEOUT_S), "BLACKBOARD_JSON": "", **extra.env}
        self.workers: list[WorkerProcess] = []
        self.results: list[dict[str, Any]] = []  # what each logged, once stopped

    def start(self, k: int) -> None:
        for i in range(k):
            command = [BLACKBOARD, "worker", "--agent", AGENT_NAME, "--grace", "5", *self.extra.args]
            if self.profile_dir is not None:
                out = self.profile_dir / f"profile-worker-{self.label}-{i}.pstats"
                command = [sys.executable, "-m", "cProfile", "-o", str(out), *command]
            log_path = self.root / f"worker-{self.label}-{i}.log"
            log = log_path.open("wb")
            process = subprocess.Popen(command, env=self.env, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                       preexec_fn=die_with_parent)
            self.workers.append(WorkerProcess(process, log_path, log, time.monotonic()))

    def wait_started(self, timeout: float = 60.0) -> list[float]:
        """Seconds from each process's start to its "started" line."""
        deadline = time.monotonic() + timeout
        while True:
            for w in self.workers:
                if w.started is None and " started (token " in w.text():
                    w.started = time.monotonic()
                if w.process.poll() is not None:
                    raise RuntimeError(f"worker {w.process.pid} exited ({w.process.returncode}) before starting:\n"
                                       f"{w.text()[-3000:]}")
            if all(w.started is not None for w in self.workers):
                return [w.started - w.spawned for w in self.workers]  # type: ignore[operator]
            if time.monotonic() > deadline:
                raise TimeoutError(f"workers not started after {timeout:g}s")
            time.sleep(0.01)

    def check_alive(self) -> None:
        for w in self.workers:
            if w.process.poll() is not None:
                raise RuntimeError(f"worker {w.process.pid} exited ({w.process.returncode}) during the run:\n"
                                   f"{w.text()[-3000:]}")

    def stop(self) -> list[dict[str, Any]]:
        """SIGTERM every worker, SIGKILL whatever is left after the grace period; what each logged."""
        stop_processes(self.workers)
        results = []
        for w in self.workers:
            text = w.text()
            w.log.close()
            results.append({
                "pid": w.process.pid,
                "exit_code": w.process.returncode,
                "killed": w.killed,
                "claimed": text.count(" claimed sig-"),
                "completed": text.count(" completed sig-"),
                "failed": text.count(" failed sig-"),
                "tracebacks": text.count("Traceback"),
                "warnings": [line for line in text.splitlines() if "could not" in line or "went wrong" in line][:5],
            })
        self.results = results
        return results


@contextmanager
def fleet(root: Path, db: Path, agents: Path, label: str, k: int, extra: Extra, profile_dir: Path | None
          ) -> Iterator[Fleet]:
    """Started on entry; on exit, however it is left, every process is stopped and reaped."""
    running = Fleet(root, db, agents, label, extra, profile_dir)
    try:
        running.start(k)
        yield running
    finally:
        running.stop()


# ------------------------------------------------------------------------------------ helpers
def _agents_dir(root: Path) -> Path:
    agents = root / "agents"
    agents.mkdir(exist_ok=True)
    (agents / f"{AGENT_NAME}.md").write_text(AGENT_FILE)
    return agents


def _status_counts(engine: Engine) -> dict[str, int]:
    with engine.connect() as conn:
        return dict(conn.execute(select(SIGNALS.c.status, func.count()).group_by(SIGNALS.c.status)).all())


def _post_backlog(store: SqlAlchemyEventStore, n: int) -> tuple[datetime, float]:
    """n POSTED signals in one append (and one read-model fold); the commit's wall and monotonic time."""
    board = BlackboardAggregate(BOARD)
    ids, used = RandomSignalIds(), set()
    now = datetime.now(UTC)
    for i in range(n):
        sid = ids.new_signal_id()
        while sid in used:
            sid = ids.new_signal_id()
        used.add(sid)
        board.post_signal(
            signal_id=sid, signal_type=SignalType.RESEARCH, posted_by="bench",
            payload=SignalPayload(ps_id=BOARD, entry_id=f"e-{i}", topic=f"backlog {i}", prompt="nothing to do"),
            at=now,
        )
    events = board.collect_events()
    store.append(BOARD, 0, events, META)
    return datetime.now(UTC), time.monotonic()


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


def _dist_ms(samples: Sequence[float]) -> dict[str, float]:
    if not samples:
        return {"n": 0}
    return {
        "n": len(samples),
        "p50_ms": _ms(statistics.median(samples)),
        "p90_ms": _ms(percentile(samples, 90)),
        "p99_ms": _ms(percentile(samples, 99)),
        "max_ms": _ms(max(samples)),
        "min_ms": _ms(min(samples)),
    }


def _cpu(running: Fleet) -> float:
    """CPU seconds used so far by the workers and the handlers they have reaped (/proc/PID/stat)."""
    total = 0
    for w in running.workers:
        with suppress(OSError):
            fields = Path(f"/proc/{w.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += sum(int(x) for x in fields[11:15])  # utime stime cutime cstime
    return total / os.sysconf("SC_CLK_TCK")


def _by_type(records: Sequence[Recorded], kind: str) -> list[Recorded]:
    return [r for r in records if r.event.event_type == kind]


# -------------------------------------------------------------------------------------- drain
def drain(root: Path, agents: Path, k: int, n: int, extra: Extra, profile_dir: Path | None) -> dict[str, Any]:
    db = root / f"drain-{k}.db"
    engine = sqlite_engine(db, "FULL")
    store = SqlAlchemyEventStore(engine)
    load = os.getloadavg()[0]
    with fleet(root, db, agents, f"drain{k}", k, extra, profile_dir) as running:
        startup = running.wait_started()
        time.sleep(0.3)  # past their first round: idle, waiting for the log to move
        cpu0 = _cpu(running)
        committed_wall, committed = _post_backlog(store, n)
        deadline = committed + 600
        while True:
            counts = _status_counts(engine)
            if counts.get("COMPLETED", 0) >= n:
                seen = time.monotonic()
                cpu = _cpu(running) - cpu0
                break
            if counts.get("FAILED", 0) or counts.get("EXPIRED", 0) or counts.get("UNCLAIMED", 0):
                raise RuntimeError(f"signals ended otherwise than COMPLETED: {counts}")
            running.check_alive()
            if time.monotonic() > deadline:
                raise TimeoutError(f"drain with {k} worker(s) not done after 600 s: {counts}")
            time.sleep(0.02)
    records = store.read_all()
    engine.dispose()
    claims, completions = _by_type(records, "AgentSignalClaimed"), _by_type(records, "AgentSignalCompleted")
    last_done = max(r.event.occurred_at for r in completions)
    first_claim = min(r.event.occurred_at for r in claims)
    seconds = seen - committed
    per_token: dict[str, int] = {}
    for r in claims:
        per_token[r.event.token] = per_token.get(r.event.token, 0) + 1
    return {
        "workers": k,
        "signals": n,
        "drain_s": round(seconds, 3),
        "signals_per_s": round(n / seconds, 1),
        "drain_s_from_log": round((last_done - committed_wall).total_seconds(), 3),
        "first_claim_after_commit_ms": _ms((first_claim - committed_wall).total_seconds()),
        "startup_s": {"max": round(max(startup), 3), "median": round(statistics.median(startup), 3)},
        "claims_per_worker": sorted(per_token.values(), reverse=True),
        "claims": len(claims),
        "completions": len(completions),
        "exactly_once": len(claims) == len(completions) == n == len({r.event.signal_id for r in claims}),
        "cpu_s_all_workers": round(cpu, 2),
        "cpu_ms_per_signal": round(cpu * 1000 / n, 2),
        "steps": _steps(records),
        "load_average_1min": [round(load, 2), round(os.getloadavg()[0], 2)],
        "processes": running.results,
    }


def _steps(records: Sequence[Recorded]) -> dict[str, Any]:
    """Where a worker's time goes, from the log: claim -> completion (the handler and the recording
    of its outcome) and completion -> its next claim (the loop: wake, query, claim), per worker."""
    handle, between = step_times(records)
    return {"claim_to_completed": _dist_ms(handle), "completed_to_next_claim": _dist_ms(between)}


def step_times(records: Sequence[Recorded]) -> tuple[list[float], list[float]]:
    """Seconds from each claim to its completion, and from each completion to the same worker's
    (token's) next claim, in log order."""
    claims = _by_type(records, "AgentSignalClaimed")
    claimed_at = {r.event.signal_id: r.event.occurred_at for r in claims}
    token_of = {r.event.signal_id: r.event.token for r in claims}
    handle, between = [], []
    last_done: dict[str, datetime] = {}
    for r in records:
        e = r.event
        if e.event_type == "AgentSignalClaimed" and e.token in last_done:
            between.append((e.occurred_at - last_done[e.token]).total_seconds())
        elif e.event_type == "AgentSignalCompleted" and e.signal_id in claimed_at:
            handle.append((e.occurred_at - claimed_at[e.signal_id]).total_seconds())
            last_done[token_of[e.signal_id]] = e.occurred_at
    return handle, between


# ------------------------------------------------------------------------------------ wake-up
def wakeup(root: Path, agents: Path, k: int, n: int, gap: tuple[float, float], extra: Extra,
           profile_dir: Path | None) -> dict[str, Any]:
    db = root / f"wakeup-{k}.db"
    engine = sqlite_engine(db, "FULL")
    store = SqlAlchemyEventStore(engine)
    service = BlackboardService(store, SqlSignalReadModel(engine), FrontmatterAgentRegistry(agents),
                                EventDispatcher(), SystemClock(), RandomSignalIds(), snapshots=SqlSnapshotStore(engine))
    rng = random.Random(k)
    posted: list[str] = []
    load = os.getloadavg()[0]
    with fleet(root, db, agents, f"wakeup{k}", k, extra, profile_dir) as running:
        startup = running.wait_started()
        time.sleep(0.3)
        idle0 = _cpu(running)
        time.sleep(IDLE_S)
        idle = _cpu(running) - idle0
        cpu0, t0 = _cpu(running), time.monotonic()
        for i in range(n):
            posted.append(service.post_signal(PostSignal(
                signal_type="RESEARCH", ps_id=BOARD, entry_id=f"e-{i}", topic=f"wake-up {i}", prompt="nothing to do",
            )).signal_id)
            time.sleep(rng.uniform(*gap))
            if i % 20 == 0:
                running.check_alive()
        deadline = time.monotonic() + 60
        while _status_counts(engine).get("COMPLETED", 0) < n:
            running.check_alive()
            if time.monotonic() > deadline:
                raise TimeoutError(f"wake-up with {k} worker(s): not all {n} completed: {_status_counts(engine)}")
            time.sleep(0.02)
        wall, cpu = time.monotonic() - t0, _cpu(running) - cpu0
    records = store.read_all()
    engine.dispose()
    posts = {r.event.signal_id: r for r in _by_type(records, "AgentSignalPosted")}
    claims = {r.event.signal_id: r for r in _by_type(records, "AgentSignalClaimed")}
    latency, to_append, after_append = [], [], []
    for sid in posted:
        p, c = posts[sid], claims[sid]
        latency.append((c.event.occurred_at - p.event.occurred_at).total_seconds())
        to_append.append((p.recorded_at - p.event.occurred_at).total_seconds())
        after_append.append((c.event.occurred_at - p.recorded_at).total_seconds())
    return {
        "workers": k,
        "signals": n,
        "gap_ms": [gap[0] * 1000, gap[1] * 1000],
        "claims": len(claims),  # one per signal, however many workers raced for it
        "post_to_claim": _dist_ms(latency),
        "post_decided_to_append_start": _dist_ms(to_append),
        "post_append_start_to_claim": _dist_ms(after_append),
        "startup_s": {"max": round(max(startup), 3), "median": round(statistics.median(startup), 3)},
        "cpu_percent_per_worker": round(100 * cpu / wall / k, 1),
        "idle_cpu_percent_per_worker": round(100 * idle / IDLE_S / k, 1),
        "load_average_1min": [round(load, 2), round(os.getloadavg()[0], 2)],
        "processes": running.results,
    }


# ---------------------------------------------------------------------------------------- run
def run(config: Config) -> dict[str, Any]:
    s = sizes(config)
    n, wakeups = int(s["BENCH_WORKER_SIGNALS"]), int(s["BENCH_WAKEUPS"])
    low, _, high = s["BENCH_WAKEUP_GAP_MS"].partition("-")
    gap = (float(low) / 1000, float(high or low) / 1000)
    extra = Extra.parse(s["BENCH_WORKER_ARGS"], s["BENCH_WORKER_ENV"])
    profile_dir = None
    if os.environ.get("BENCH_PROFILE"):
        profile_dir = config.out.parent.resolve()
        profile_dir.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {"sizes": s, "load_average_at_start": os.getloadavg(), "drain": {}, "wakeup": {}}
    with temp_dir("workers") as root:
        agents = _agents_dir(root)
        for k in _counts(s["BENCH_WORKER_COUNTS"]):
            progress(f"(f) drain: {k} worker(s), {n:,} signals posted in one append")
            result["drain"][str(k)] = drain(root, agents, k, n, extra, profile_dir)
            progress(f"(f)   {result['drain'][str(k)]['signals_per_s']} signals/s")
        for k in _counts(s["BENCH_WAKEUP_WORKERS"]):
            progress(f"(f) wake-up: {k} idle worker(s), {wakeups} signals posted one at a time")
            result["wakeup"][str(k)] = wakeup(root, agents, k, wakeups, gap, extra, profile_dir)
    rates = {k: d["signals_per_s"] for k, d in result["drain"].items()}
    if "1" in rates and "4" in rates:
        result["ratio_4_over_1"] = round(rates["4"] / rates["1"], 3)
    result["load_average_at_end"] = os.getloadavg()
    return result
