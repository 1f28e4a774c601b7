"""(f) `blackboard worker` as real processes on a SQLite file: draining a backlog, and waking up.

drain: k workers (1, 2, 4) of the bench agent (`command: "true"`, concurrency 1 by default) are
started on a fresh database and left to go idle (each has logged "started"); then the backlog of
BENCH_WORKER_SIGNALS POSTED signals appears in ONE transaction of the unit of work (bench/seeding.py
`backlog`: events decided by BlackboardAggregate, appended and folded into the read model together,
so every worker sees all of them at once). The drain time runs from that commit until the read model shows every signal
COMPLETED. Start-up (process start to "started") is reported beside it, not inside it.

wake-up: with k idle workers (1, then 4), bench/wakeup.py posts signals one at a time, 100 to 200 ms
apart.

The fleet, the poll loop and the wake-up are the harness section (g) uses too (bench/fleet.py,
bench/drain.py, bench/wakeup.py); what differs here: SQLite, the `command` handler, the worker's
default concurrency, no peers. With BENCH_PROFILE=1 each worker runs under cProfile and its stats
land in bench-results/profile-worker-*.pstats.
"""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path
from typing import Any

from bench.common import Config, counts, gap_s, progress, temp_dir, wired
from bench.drain import blackboard_progress, by_type, log_figures, watch
from bench.fleet import POST_TIMEOUT_S, agents_dir, fleet, worker_command, worker_env
from bench.seeding import backlog
from bench.stats import ms
from bench.wakeup import wakeup

BOARD = "ps-workers"
HANDLER = "command"

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
SETTLE_S = 0.3  # after "started": past the workers' first round
TARGET_RATIO = 0.8
TARGET_P99_MS = 50.0


def sizes(config: Config) -> dict[str, Any]:
    full = config.scale == "full"
    return {name: os.environ.get(name, str(pair[0] if full else pair[1])) for name, pair in SIZES.items()}


def _wired(root: Path, url: str) -> Any:
    """The application on the run's database, as the workers see it (the bench agent's folder, no expiry)."""
    return wired(url, agents_dir=agents_dir(root, HANDLER), post_timeout=POST_TIMEOUT_S)


# -------------------------------------------------------------------------------------- drain
def drain(
    root: Path, k: int, n: int, args: list[str], env: dict[str, str], profile_dir: Path | None
) -> dict[str, Any]:
    url = f"sqlite:///{root / f'drain-{k}.db'}"
    load = os.getloadavg()[0]
    with _wired(root, url) as container:
        engine = container.engine()
        with fleet(
            root, f"drain{k}", worker_env(url, agents_dir(root, HANDLER), env), profile_dir
        ) as running:
            running.start(worker_command(args), k)
            startup = running.wait_started()
            time.sleep(SETTLE_S)  # idle, waiting for the log to move
            cpu0 = running.cpu_seconds()
            committed_wall, committed = backlog(container.unit_of_work(), BOARD, n)
            timeline = watch(
                running,
                blackboard_progress(engine),
                n,
                committed,
                label=f"drain with {k} worker(s)",
                meters={"cpu": running.cpu_seconds},
            )
        records = container.event_store().read_all()
    cpu = timeline.used("cpu", since=cpu0) or 0.0
    seconds = timeline.seconds
    last_done = max(r.event.occurred_at for r in by_type(records, "AgentSignalCompleted"))
    first_claim = min(r.event.occurred_at for r in by_type(records, "AgentSignalClaimed"))
    return {
        "workers": k,
        "signals": n,
        "drain_s": round(seconds, 3),
        "signals_per_s": round(n / seconds, 1),
        "drain_s_from_log": round((last_done - committed_wall).total_seconds(), 3),
        "first_claim_after_commit_ms": ms((first_claim - committed_wall).total_seconds()),
        "startup_s": {"max": round(max(startup), 3), "median": round(statistics.median(startup), 3)},
        **log_figures(records, n),
        "cpu_s_all_workers": round(cpu, 2),
        "cpu_ms_per_signal": round(cpu * 1000 / n, 2),
        "load_average_1min": [round(load, 2), round(os.getloadavg()[0], 2)],
        "processes": running.results,
    }


# ---------------------------------------------------------------------------------------- run
def run(config: Config) -> dict[str, Any]:
    s = sizes(config)
    n, wakeups = int(s["BENCH_WORKER_SIGNALS"]), int(s["BENCH_WAKEUPS"])
    gap = gap_s(s["BENCH_WAKEUP_GAP_MS"])
    args = s["BENCH_WORKER_ARGS"].split()
    env = dict(item.split("=", 1) for item in s["BENCH_WORKER_ENV"].split())
    profile_dir = None
    if os.environ.get("BENCH_PROFILE"):
        profile_dir = config.out.parent.resolve()
        profile_dir.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {"sizes": s, "load_average_at_start": os.getloadavg(), "drain": {}, "wakeup": {}}
    with temp_dir("workers") as root:
        for k in counts(s["BENCH_WORKER_COUNTS"]):
            progress(f"(f) drain: {k} worker(s), {n:,} signals posted in one append")
            result["drain"][str(k)] = drain(root, k, n, args, env, profile_dir)
            progress(f"(f)   {result['drain'][str(k)]['signals_per_s']} signals/s")
        for k in counts(s["BENCH_WAKEUP_WORKERS"]):
            progress(f"(f) wake-up: {k} idle worker(s), {wakeups} signals posted one at a time")
            url = f"sqlite:///{root / f'wakeup-{k}.db'}"
            with (
                _wired(root, url) as container,
                fleet(
                    root, f"wakeup{k}", worker_env(url, agents_dir(root, HANDLER), env), profile_dir
                ) as running,
            ):
                w = wakeup(
                    running,
                    container,
                    blackboard_progress(container.engine()),
                    command=worker_command(args),
                    k=k,
                    n=wakeups,
                    board=BOARD,
                    gap=gap,
                    seed=k,
                    settle_s=SETTLE_S,
                    idle_s=IDLE_S,
                )
            result["wakeup"][str(k)] = {**w, "processes": running.results}
    rates = {k: d["signals_per_s"] for k, d in result["drain"].items()}
    if "1" in rates and "4" in rates:
        result["ratio_4_over_1"] = round(rates["4"] / rates["1"], 3)
    result["load_average_at_end"] = os.getloadavg()
    return result
