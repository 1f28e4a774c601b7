"""(l) Reading a long log from the command line: the peak memory of `events --all` in its three formats
(each streams, a page of the log at a time) beside the former `events` (every event in a list, then one
`json.dumps`), and the wall time of `status`; every figure from a fresh process on the same store.

The store: about BENCH_LOG_EVENTS events (posts, claims and completions on 4 boards, `seed_mix`),
folded into the read model before anything is measured.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from statistics import median
from typing import Any

from bench.common import Config, Timer, progress, temp_dir, wired
from bench.seeding import fold, seed_mix

TARGET_PEAK_MB = 100  # events --all --jsonl
TARGET_STATUS_S = 2.0
BLACKBOARD = str(Path(sys.executable).parent / "blackboard")
# Runs a command with its output thrown away; prints its peak RSS (KiB, Linux), wall and CPU seconds.
MEASURE = """
import resource, subprocess, sys, time
started = time.perf_counter()
done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
wall = time.perf_counter() - started
if done.returncode:
    sys.exit(done.stderr.decode())
used = resource.getrusage(resource.RUSAGE_CHILDREN)
print(used.ru_maxrss, wall, used.ru_utime + used.ru_stime)
"""


def measured(command: list[str]) -> dict[str, float]:
    """The command's peak memory, wall and CPU time, in a process of its own (RUSAGE_CHILDREN holds only it)."""
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, *command], capture_output=True, text=True, check=True
    )
    peak_kib, wall, cpu = done.stdout.split()
    return {
        "peak_mb": round(int(peak_kib) / 1024, 1),
        "wall_s": round(float(wall), 2),
        "cpu_s": round(float(cpu), 2),
    }


def run(config: Config) -> dict[str, Any]:
    total = config["BENCH_LOG_EVENTS"]
    with temp_dir("log") as d:
        url = f"sqlite:///{d / 'blackboard.db'}"
        with wired(url, synchronous="NORMAL") as container:
            engine = container.engine()
            progress(f"(l) seeding about {total:,} events on 4 boards, then folding them")
            with Timer() as t_seed:
                counts = seed_mix(engine, total)
                fold(engine)
        db = ["--db", url]
        cases = {
            "events --all --jsonl": [BLACKBOARD, *db, "events", "--all", "--jsonl"],
            "--json events --all (a streamed array)": [BLACKBOARD, *db, "--json", "events", "--all"],
            "events --all (text)": [BLACKBOARD, *db, "events", "--all"],
            "former events --json (a list, then json.dumps)": [
                sys.executable,
                "-m",
                "bench.events_former",
                url,
            ],
        }
        found = {}
        for name, command in cases.items():
            progress(f"(l) {name}")
            found[name] = measured(command)
        status = [measured([BLACKBOARD, *db, "--json", "status"]) for _ in range(config["BENCH_STATUS_REPS"])]
        check = json.loads(
            subprocess.run(
                [BLACKBOARD, *db, "--json", "status"], capture_output=True, text=True, check=True
            ).stdout
        )
    jsonl = found["events --all --jsonl"]["peak_mb"]
    status_s = median(s["wall_s"] for s in status)
    return {
        "events": sum(counts.values()),
        "seed_s": round(t_seed.seconds, 1),
        "cases": found,
        "status_wall_s": [s["wall_s"] for s in status],
        "status_median_s": status_s,
        "status_cpu_median_s": median(s["cpu_s"] for s in status),
        "version_wall_s": measured([BLACKBOARD, "--version"])["wall_s"],  # start-up alone, for the load
        "status_peak_mb": max(s["peak_mb"] for s in status),
        "status_signals": sum(b["signals_total"] for b in check),
        "former_over_jsonl_peak": round(
            found["former events --json (a list, then json.dumps)"]["peak_mb"] / jsonl, 1
        ),
        "pass_peak": jsonl <= TARGET_PEAK_MB,
        "pass_status": status_s <= TARGET_STATUS_S,
    }
