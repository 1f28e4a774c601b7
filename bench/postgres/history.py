"""(g) history: a PostgreSQL drain on an empty board beside the same drain on a board holding history.

`.venv/bin/python -m bench.postgres.history` (section (g)'s server; not among `make bench`'s sections).

Two templates, each holding one board and a backlog of BENCH_PG_SIGNALS signals posted through the
service (as section (g) posts them): **empty**, the backlog alone; **history**, the backlog posted
after BENCH_PG_HISTORY finished signals on the same board (95% COMPLETED, 5% FAILED, each posted,
claimed and ended; appended in bulk by bench/seeding.py's Seeder, folded by one catch-up). Both are
ANALYZEd before any worker runs. Then BENCH_PG_ROUNDS rounds, each draining a fresh clone of each
template with BENCH_PG_WORKERS `blackboard worker` processes (section (g)'s drain: spawn, poll,
figures), the two boards taking turns on who goes first; with BENCH_PG_BEFORE (a folder holding
another build's `blackboard` package) the build before drains clones of the same templates in the same
rounds.

Figures per drain: the steady signals/s (from the first completion the poll sees to the last), the
CPU per signal of the run database's own backends (read from /proc for the pids pg_stat_activity
lists for that database: other sessions on the same server are left out) and of every server
process, and the transactions per signal. Per round: history / empty. Medians and min-max over the
rounds. The poll counts the backlog's signals only (by the board's index, created after the history),
so it reads the same rows on both boards.
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.postgres.blackboard_drain import BOARD, BlackboardSystem, post
from bench.postgres.databases import Databases, analyze

SIZES = {
    "BENCH_PG_URL": "postgresql+psycopg://postgres@127.0.0.1:5432/test",
    "BENCH_PG_HISTORY": "100000",  # finished signals on the history board
    "BENCH_PG_SIGNALS": "2000",  # the backlog drained on each board
    "BENCH_PG_WORKERS": "4",  # worker processes per drain
    "BENCH_PG_ROUNDS": "5",  # rounds, each draining each board once
    "BENCH_PG_CONCURRENCY": "128",  # each worker's --concurrency
    "BENCH_PG_BEFORE": "",  # a folder holding another build's `blackboard` package, drained beside
    # how the benchmark polls, each drained in every round: board, the backlog's rows counted by the
    # board's index; table, the whole table counted (section (g)'s poll, the history's counts taken off),
    # which reads every row of the history at each poll (every 20 ms)
    "BENCH_PG_POLLS": "table,board",
}
CUTOFF = "2026-06-01"  # the history is seeded in January 2026; the backlog is posted now
# done: the backlog's COMPLETED signals; wrong: the backlog's ended otherwise (the board's index)
PROGRESS_SQL = (
    "SELECT count(*) FILTER (WHERE status = 'COMPLETED'), "
    "count(*) FILTER (WHERE status IN ('FAILED', 'EXPIRED', 'UNCLAIMED')) FROM blackboard_signals "
    f"WHERE blackboard_id = '{BOARD}' AND created_at > '{CUTOFF}'"
)


def seed_history(engine: Any, n: int) -> dict[str, Any]:
    """n finished signals on BOARD: posted, claimed, then 95% completed and 5% failed for good."""
    from bench.seeding import Seeder, fold

    seeder = Seeder(engine, BOARD, prefix=2)
    started = time.perf_counter()
    for i in range(n):
        failed = i % 20 == 19
        sid = seeder.post(max_attempts=1 if failed else None)
        seeder.claim(sid)
        if failed:
            seeder.fail(sid)
        else:
            seeder.complete(sid)
    seeder.flush()
    appended = time.perf_counter() - started
    folded = fold(engine)
    return {
        "signals": n,
        "events": seeder.events,
        "folded": folded,
        "seed_s": round(time.perf_counter() - started, 1),
        "append_s": round(appended, 1),
    }


class HistorySystem(BlackboardSystem):
    """blackboard's drain on one board, that board holding `history` finished signals before the backlog."""

    progress_sql = PROGRESS_SQL

    def __init__(
        self, history: int, worker_args: list[str], before: str | None = None, poll: str = "board"
    ) -> None:
        super().__init__("entrypoint", worker_args, 1, before)
        if poll == "table":
            failed = history // 20
            self.progress_sql = (
                f"SELECT count(*) FILTER (WHERE status = 'COMPLETED') - {history - failed}, "
                f"count(*) FILTER (WHERE status IN ('FAILED', 'EXPIRED', 'UNCLAIMED')) - {failed} "
                "FROM blackboard_signals"
            )
        self.history = history
        self.name = f"{'before-' if before else ''}{poll}_{'history' if history else 'empty'}"
        self.seeded: dict[str, Any] = {}

    def prepare(self, dbs: Databases, root: Path, n: int) -> str:
        from bench.common import wired
        from bench.fleet import POST_TIMEOUT_S, agents_dir

        name = dbs.create(f"hist_template_{self.history}")
        with wired(
            dbs.sqlalchemy_url(name), agents_dir=agents_dir(root, self.handler), post_timeout=POST_TIMEOUT_S
        ) as container:
            if self.history:
                self.seeded = seed_history(container.engine(), self.history)
            service = container.service()
            started = time.perf_counter()
            for i in range(n):
                service.post_signal(post(self.history + i, "backlog"))
            self.post_seconds = time.perf_counter() - started
        return name


def _stats(values: list[float]) -> dict[str, float]:
    return {
        "median": round(statistics.median(values), 3),
        "min": round(min(values), 3),
        "max": round(max(values), 3),
    }


def main() -> None:
    from bench.common import temp_dir
    from bench.postgres.systems import drain

    s = {name: os.environ.get(name, default) for name, default in SIZES.items()}
    history, n = int(s["BENCH_PG_HISTORY"]), int(s["BENCH_PG_SIGNALS"])
    k, rounds = int(s["BENCH_PG_WORKERS"]), int(s["BENCH_PG_ROUNDS"])
    args = ["--concurrency", s["BENCH_PG_CONCURRENCY"]]
    before = s["BENCH_PG_BEFORE"].strip() or None
    builds = [None, before] if before else [None]
    polls = [x.strip() for x in s["BENCH_PG_POLLS"].split(",") if x.strip()]
    variants = [(poll, build) for poll in polls for build in builds]
    out: dict[str, Any] = {"sizes": s, "started_at": datetime.now(UTC).isoformat(timespec="seconds")}
    out["load_average_at_start"] = os.getloadavg()
    dbs = Databases(s["BENCH_PG_URL"])
    try:
        with temp_dir("pg-history") as root:
            templates = {}
            for size in (0, history):
                system = HistorySystem(size, args)
                print(
                    f"preparing the {'history' if size else 'empty'} template ({size:,} finished + {n:,} posted)",
                    flush=True,
                )
                templates[size] = system.prepare(dbs, root, n)
                out.setdefault("analyze_s", {})[size] = analyze(dbs, templates[size])
                out.setdefault("seeded", {})[size] = system.seeded
                out.setdefault("post_s", {})[size] = round(system.post_seconds, 1)
            runs: list[dict[str, Any]] = []
            for r in range(rounds):
                order = (0, history) if r % 2 == 0 else (history, 0)
                for poll, build in variants if r % 2 == 0 else variants[::-1]:
                    for size in order:
                        system = HistorySystem(size, args, build, poll)
                        result = drain(system, dbs, root, templates[size], k, n, label=f"_r{r}")
                        result.pop("progress_every_second", None)
                        result["round"] = r
                        runs.append(result)
                        print(
                            f"round {r} {system.name}: {result['steady_per_s']}/s, server "
                            f"{result['db_cpu_ms_per_item_steady']} ms/signal (the workers' backends), "
                            f"{result['server_cpu_ms_per_item_steady']} (all), "
                            f"{result['transactions_per_item']} tx/signal, load {result['load_average_1min']}",
                            flush=True,
                        )
    finally:
        dbs.close()
    out["runs"] = runs
    out["summary"] = summary(runs, rounds, sorted({r["system"].rsplit("_", 1)[0] for r in runs}))
    out["load_average_at_end"] = os.getloadavg()
    path = Path(os.environ.get("BENCH_OUT", "bench-history.json"))
    path.write_text(json.dumps(out, indent=1, default=str))
    print(json.dumps(out["summary"], indent=1))
    print(f"written to {path}", file=sys.stderr)


def summary(runs: list[dict[str, Any]], rounds: int, variants: list[str]) -> dict[str, Any]:
    """Medians and min-max per system of signals/s and CPU per signal; per round, history / empty."""
    by: dict[str, list[dict[str, Any]]] = {}
    for run in runs:
        by.setdefault(run["system"], []).append(run)
    out: dict[str, Any] = {}
    for name, rs in by.items():
        out[name] = {
            key: _stats([r[key] for r in rs if r.get(key) is not None])
            for key in (
                "steady_per_s",
                "db_cpu_ms_per_item_steady",
                "server_cpu_ms_per_item_steady",
                "cpu_ms_per_item_steady",
                "transactions_per_item",
            )
        }
    for build in variants:
        rate = {(r["system"], r["round"]): r["steady_per_s"] for r in runs}
        cpu = {(r["system"], r["round"]): r["db_cpu_ms_per_item_steady"] for r in runs}
        ratios = [
            rate[(f"{build}_history", i)] / rate[(f"{build}_empty", i)]
            for i in range(rounds)
            if rate.get((f"{build}_history", i)) and rate.get((f"{build}_empty", i))
        ]
        cpus = [
            cpu[(f"{build}_history", i)] / cpu[(f"{build}_empty", i)]
            for i in range(rounds)
            if cpu.get((f"{build}_history", i)) and cpu.get((f"{build}_empty", i))
        ]
        if ratios:
            out[f"{build}: history / empty, signals/s"] = {
                **_stats(ratios),
                "rounds": [round(x, 3) for x in ratios],
            }
        if cpus:
            out[f"{build}: history / empty, the workers' server CPU per signal"] = _stats(cpus)
    return out


if __name__ == "__main__":
    main()
