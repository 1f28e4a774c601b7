"""The raw LISTEN/NOTIFY claim, the wake-up's peer in section (wake): no framework, psycopg alone.

A plain jobs table. The claimer (`python -m bench.postgres.raw_claim`, one process, one autocommit
connection) LISTENs on a channel and, once at start and on each notification, claims until nothing
is left, one job a statement:

    UPDATE raw_jobs SET claimed_at = clock_timestamp()
    WHERE id = (SELECT id FROM raw_jobs WHERE claimed_at IS NULL ORDER BY id
                FOR UPDATE SKIP LOCKED LIMIT 1) RETURNING id

The poster inserts a job (its `posted_at` the poster's clock just before, as blackboard's post event
carries the time the poster decided) and NOTIFYs in one transaction. post -> claim is `claimed_at -
posted_at` read from the rows afterwards: the same machine clock, as blackboard's wake-up reads its
post and claim events' `occurred_at`. The same number of posts and the same gaps (the same seed).

The claimer process imports this module: standard library and psycopg only at the top.
"""

from __future__ import annotations

import os
import random
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.fleet import STARTED
from bench.postgres.systems import DSN_ENV

if TYPE_CHECKING:
    from bench.postgres.databases import Databases

CHANNEL = "raw_jobs"
SCHEMA = (
    "CREATE TABLE raw_jobs (id bigserial PRIMARY KEY, posted_at timestamptz NOT NULL, "
    "claimed_at timestamptz, payload text NOT NULL)",
    "CREATE INDEX raw_jobs_open ON raw_jobs (id) WHERE claimed_at IS NULL",
)
CLAIM = (
    "UPDATE raw_jobs SET claimed_at = clock_timestamp() WHERE id = (SELECT id FROM raw_jobs "
    "WHERE claimed_at IS NULL ORDER BY id FOR UPDATE SKIP LOCKED LIMIT 1) RETURNING id"
)
DONE = "SELECT count(*) FROM raw_jobs WHERE claimed_at IS NOT NULL"


def claimer(dsn: str) -> None:
    """LISTEN, claim everything once, then on each notification claim until nothing is left; forever
    (SIGTERM ends it). Notifications that arrive during a claim wait in psycopg's backlog."""
    import psycopg

    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f"LISTEN {CHANNEL}")
        print(f"raw claimer{STARTED}{CHANNEL})", flush=True)  # what the fleet waits for
        while True:
            while conn.execute(CLAIM).fetchone() is not None:
                pass
            for _ in conn.notifies(stop_after=1):
                break


def prepare(dbs: Databases, label: str = "") -> str:
    """A fresh database holding the empty jobs table."""
    import psycopg

    name = dbs.create(f"raw_wake{label}")
    with psycopg.connect(dbs.libpq_url(name), autocommit=True) as conn:
        for statement in SCHEMA:
            conn.execute(statement)
    return name


def wakeup(
    dbs: Databases,
    root: Path,
    n: int,
    gap: tuple[float, float],
    seed: int,
    settle_s: float = 0.5,
    label: str = "",
) -> dict[str, Any]:
    """One claimer on a fresh table; n jobs posted one at a time, `gap` apart (uniform, `seed`)."""
    import sys

    import psycopg

    from bench.fleet import base_env, fleet
    from bench.stats import dist_ms

    db = prepare(dbs, label)
    url = dbs.libpq_url(db)
    rng = random.Random(seed)
    load = os.getloadavg()[0]
    post_calls: list[float] = []
    with (
        psycopg.connect(url, autocommit=True) as poster,
        fleet(root, "raw-claim", {**base_env(), DSN_ENV: url}) as running,
    ):
        running.start([sys.executable, "-m", "bench.postgres.raw_claim"], 1)
        startup = running.wait_started()
        time.sleep(settle_s)
        cpu0, t0 = running.cpu_seconds(), time.monotonic()
        for i in range(n):
            started = time.perf_counter()
            with poster.transaction():
                poster.execute(
                    "INSERT INTO raw_jobs (posted_at, payload) VALUES (%s, %s)",
                    (datetime.now(UTC), f"wake-up {i}"),
                )
                poster.execute(f"NOTIFY {CHANNEL}")
            post_calls.append(time.perf_counter() - started)
            time.sleep(rng.uniform(*gap))
            if i % 20 == 0:
                running.check_alive()
        deadline = time.monotonic() + 60
        while True:
            (done,) = poster.execute(DONE).fetchone()  # type: ignore[misc]
            if done >= n:
                break
            running.check_alive()
            if time.monotonic() > deadline:
                raise TimeoutError(f"raw claim: {done}/{n} claimed after 60 s")
            time.sleep(0.02)
        wall, cpu = time.monotonic() - t0, running.cpu_seconds() - cpu0
        rows = poster.execute("SELECT claimed_at - posted_at FROM raw_jobs ORDER BY id").fetchall()
    return {
        "variant": "raw",
        "workers": 1,
        "signals": n,
        "gap_ms": [gap[0] * 1000, gap[1] * 1000],
        "claims": len(rows),
        "post_to_claim": dist_ms([r[0].total_seconds() for r in rows]),
        "post_call": dist_ms(post_calls),
        "startup_s": round(startup[0], 3),
        "cpu_percent_per_worker": round(100 * cpu / wall, 1),
        "load_average_1min": [round(load, 2), round(os.getloadavg()[0], 2)],
        "processes": running.results,
    }


if __name__ == "__main__":
    claimer(os.environ[DSN_ENV])
