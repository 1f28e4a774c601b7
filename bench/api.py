"""(m) in-process API post vs CLI post: a post through the Python API against `blackboard post` (a fresh
process per call), on SQLite files, taking turns so the machine's load touches every row alike.

Each round times `BENCH_API_POSTS / BENCH_API_CLI_POSTS` posts through a long-lived `Blackboard` at
synchronous=FULL (the default, judged), as many at NORMAL (no fsync per commit: what the API itself
costs), then one `blackboard post` at FULL. An agent able to take the signals is registered, so each
post is the ordinary one (POSTED, not UNCLAIMED). The API's first post (its first use of the engine)
is not counted. CPU: this process's for the API's posts, the child's for the CLI's.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import summary_ms, table, temp_dir, verdict

TARGET_MS = 5.0  # issue "Reach": a post through the Python API, median
AGENT = "---\nname: bench-researcher\ncapabilities: {RESEARCH: 0.9}\n---\nResearches.\n"


def run(api_posts: int, cli_posts: int) -> dict[str, Any]:
    from blackboard import Blackboard

    blackboard = str(Path(sys.executable).parent / "blackboard")
    rounds = max(1, cli_posts)
    per_round = max(1, api_posts // rounds)
    with temp_dir("api") as where:
        agents = where / "agents"
        agents.mkdir()
        (agents / "bench-researcher.md").write_text(AGENT, encoding="utf-8")
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("BLACKBOARD_")},
            "BLACKBOARD_DB": f"sqlite:///{where / 'cli.db'}",
            "BLACKBOARD_AGENTS_DIR": str(agents),
        }
        wall: dict[str, list[float]] = {"FULL": [], "NORMAL": [], "CLI": []}
        cpu: dict[str, float] = dict.fromkeys(wall, 0.0)
        with (
            Blackboard(f"sqlite:///{where / 'full.db'}", agents_dir=agents) as full,
            Blackboard(
                f"sqlite:///{where / 'normal.db'}", agents_dir=agents, sqlite_synchronous="NORMAL"
            ) as normal,
        ):
            for api in (full, normal):
                api.post("RESEARCH", "ps-bench", "e-0", "warm-up")
            subprocess.run(
                [blackboard, "db", "upgrade"], env=env, cwd=where, capture_output=True, timeout=60, check=True
            )
            for n in range(rounds):
                for mode, api in (("FULL", full), ("NORMAL", normal)):
                    for i in range(per_round):
                        started, used = time.perf_counter(), time.process_time()
                        api.post("RESEARCH", "ps-bench", f"e-{n * per_round + i + 1}", "in process")
                        wall[mode].append(time.perf_counter() - started)
                        cpu[mode] += time.process_time() - used
                if cli_posts:
                    wall["CLI"].append(_cli_post(blackboard, env, where, n, cpu))
    return _report(wall, cpu)


def _cli_post(blackboard: str, env: dict[str, str], where: Path, n: int, cpu: dict[str, float]) -> float:
    argv = [
        blackboard,
        "post",
        "--type",
        "RESEARCH",
        "--ps-id",
        "ps-bench",
        "--entry-id",
        f"e-{n + 1}",
        "--topic",
        "a process",
    ]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(argv, env=env, cwd=where, capture_output=True, timeout=120, check=True)
    took = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu["CLI"] += (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return took


def _report(wall: dict[str, list[float]], cpu: dict[str, float]) -> dict[str, Any]:
    found = {
        mode: {**summary_ms(s), "cpu_ms": round(cpu[mode] / len(s) * 1000, 3)}
        for mode, s in wall.items()
        if s
    }
    api = found["FULL"]
    ok = api["median_ms"] <= TARGET_MS
    ratio = round(found["CLI"]["median_ms"] / api["median_ms"], 1) if "CLI" in found else None
    labels = {
        "FULL": "Blackboard.post, synchronous=FULL",
        "NORMAL": "Blackboard.post, synchronous=NORMAL",
        "CLI": "blackboard post (a process per call), FULL",
    }
    rows = [
        [labels[m], f["n"], f["median_ms"], f["p95_ms"], f["min_ms"], f["cpu_ms"]] for m, f in found.items()
    ]
    rows.append(
        [f"API median at FULL (target <= {TARGET_MS:g} ms)", "", api["median_ms"], "", "", verdict(ok)]
    )
    print(
        table(
            "(m) in-process API post vs CLI post, SQLite files, taking turns (ms)",
            ["interface", "posts", "median", "p95", "min", "cpu/post"],
            rows,
            f"    a CLI post costs {ratio}x an API post (wall, medians): a process start, imports and an engine "
            "per call;\n"
            "    at FULL a post's wall time is mostly its commit's fsync, which a loaded disk stretches"
            if ratio
            else None,
        )
    )
    return {
        **{m.lower(): f for m, f in found.items()},
        "cli_over_api": ratio,
        "target_ms": TARGET_MS,
        "pass": ok,
    }


if __name__ == "__main__":
    run(int(os.environ.get("BENCH_API_POSTS", "300")), int(os.environ.get("BENCH_API_CLI_POSTS", "15")))
