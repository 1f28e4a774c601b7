"""What a system of section (g) is, and one drain of any system on a clone of its template.

A system makes a template database holding its schema and a backlog of n items, names the command
of one worker process and its environment, and answers one progress query (items done, items gone
wrong). `drain` clones the template, spawns k workers in a fleet (bench/fleet.py), polls with the
loop of bench/drain.py from the spawn on, and derives the figures compared across systems: total,
start-up, the steady rate, the workers' and the server's CPU per item, transactions per item.

Standard library only at the top: the job-queue workers import the peer modules, which import this.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.drain import watch
from bench.fleet import REPO, base_env, fleet

if TYPE_CHECKING:
    from bench.postgres.databases import Databases

DSN_ENV = "BENCH_PG_JOBS_DSN"  # how the job-queue workers find their database (libpq URL)
DRAIN_TIMEOUT_S = 900


class System:
    """How one system is set up, started, and asked how far it got."""

    name = ""
    unit = "jobs"
    progress_sql = ""  # one row: (done, went wrong); may use {n}, the backlog's size

    def prepare(self, dbs: Databases, root: Path, n: int) -> str:
        """A template database holding the schema and a backlog of n items; its name."""
        raise NotImplementedError

    def command(self) -> list[str]:
        raise NotImplementedError

    def env(self, dbs: Databases, db: str, root: Path) -> dict[str, str]:
        return {**base_env(), DSN_ENV: dbs.libpq_url(db)}

    def analyse(self, dbs: Databases, db: str, n: int) -> dict[str, Any]:
        """What the run left in its database, for the JSON."""
        return {}

    def setup_note(self) -> str:
        return ""


def run_cli(args: Sequence[str], env: dict[str, str]) -> None:
    done = subprocess.run(list(args), env=env, cwd=REPO, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise RuntimeError(
            f"{' '.join(args)} exited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
        )


def drain(
    system: System, dbs: Databases, root: Path, template: str, k: int, n: int, label: str = ""
) -> dict[str, Any]:
    """k workers of `system` on a fresh clone of `template` (n items), from spawn until all are done;
    `label`: added to the clone's name (a system drained more than once)."""
    import psycopg

    from bench.postgres.server import backends_cpu_seconds, database_stats, server_cpu_seconds

    db = dbs.create(f"{system.name.replace('-', '_')[:20]}_{k}w{label}", template=template)
    sql = system.progress_sql.format(n=n)
    load = os.getloadavg()[0]
    with (
        psycopg.connect(dbs.libpq_url(db), autocommit=True) as poll,
        fleet(root, f"{system.name}-{k}w", system.env(dbs, db, root)) as running,
    ):

        def probe() -> tuple[int, int]:
            done, wrong = poll.execute(sql).fetchone()  # type: ignore[misc]
            return int(done), int(wrong)

        spawned = time.monotonic()
        running.start(system.command(), k)
        timeline = watch(
            running,
            probe,
            n,
            spawned,
            timeout=DRAIN_TIMEOUT_S,
            label=f"{system.name} with {k} worker(s)",
            meters={
                "cpu": running.cpu_seconds,
                "server": server_cpu_seconds,
                "database": lambda: backends_cpu_seconds(poll, db),
            },
        )
    db_stats = database_stats(dbs, db, polls=timeline.polls)
    steady_s = timeline.end - timeline.first
    steady_n = n - timeline.done_at_first
    cpu, server, database = timeline.used("cpu"), timeline.used("server"), timeline.used("database")
    result = {
        "system": system.name,
        "workers": k,
        "items": n,
        "total_s": round(timeline.seconds, 3),
        "overall_per_s": round(n / timeline.seconds, 1),
        "startup_s": round(timeline.first - spawned, 3),
        "done_at_first_sight": timeline.done_at_first,
        "steady_s": round(steady_s, 3),
        "steady_per_s": round(steady_n / steady_s, 1) if steady_s > 0 else None,
        "cpu_s_workers": round(timeline.at_end["cpu"] or 0.0, 2),
        "cpu_ms_per_item_steady": round(cpu * 1000 / steady_n, 3) if steady_n and cpu is not None else None,
        "server_cpu_ms_per_item_steady": round(server * 1000 / steady_n, 3)
        if steady_n and server is not None
        else None,
        # the workers' backends only (the benchmark's poll and other sessions on the server left out)
        "db_cpu_ms_per_item_steady": round(database * 1000 / steady_n, 3)
        if steady_n and database is not None
        else None,
        "load_average_1min": [round(load, 2), round(os.getloadavg()[0], 2)],
        "processes": running.results,
        "progress_every_second": timeline.per_second(),
        "database_stats": db_stats,
        "transactions_per_item": round(db_stats["transactions_by_workers"] / n, 2),
    }
    result.update(system.analyse(dbs, db, n))
    return result
