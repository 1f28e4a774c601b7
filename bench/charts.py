"""(charts) The web view's Spend and flow series (`GET /api/charts`, application/flow_charts.py) on a board of
10,000 signals worked over the last day (posted, claimed, most completed with a priced run's usage, some failed,
a few left open), as the endpoint computes them warm in process: now, for each window the panel offers (the read
model's `timeline`, `usage_totals` and `budgets`, then one pass in Python), and at a log position halfway (the board
replayed from the log, as `/api/board?at=`). On a SQLite file and on a PostgreSQL database of its own.

Run: `python -m bench.charts` (BENCH_CHART_SIGNALS, default 10,000; BENCH_PG_URL, the server's database to make
a database of its own beside: default postgresql+psycopg://postgres@127.0.0.1:5432/test)."""

from __future__ import annotations

import os
import statistics
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from bench.common import bench_container, progress, say, table, temp_dir
from bench.seeding import Seeder, fold
from blackboard.application.flow_charts import FlowChartQueries
from blackboard.domain.signals import SignalUsage

BOARD = "ps-charts"
WINDOWS = (15, 60, 360, 1440)
REPS = 7
USAGE = SignalUsage(runner="anthropic", model="m", input_tokens=2000, output_tokens=300, cost_usd=0.0105)


def seed(url: str, signals: int) -> int:
    """`signals` signals over the last 23 hours, in rounds of 10: 8 completed by a run that cost, 1 failed for
    good, 1 left POSTED. Returns the log's last position."""
    container = bench_container(url, post_timeout=86_400 * 2)
    engine = container.engine()
    events = signals * 28 // 10  # 3 a completed or failed signal, 1 an open one
    start = datetime.now(UTC) - timedelta(hours=23)
    seeder = Seeder(engine, BOARD, 1, start=start, step=timedelta(hours=23) / events)
    while seeder.posted < signals:
        for k in range(10):
            sid = seeder.post(max_attempts=1)
            if k == 9:
                continue
            seeder.claim(sid)
            if k == 8:
                seeder.fail(sid)
            else:
                seeder.complete(sid, USAGE)
    seeder.flush()
    fold(engine)
    position = container.event_store().last_position()
    engine.dispose()
    return position


def timed(queries: FlowChartQueries, window: int, at: int | None) -> tuple[float, float, Any]:
    """Median and max seconds of REPS calls, and the last answer."""
    seconds, found = [], None
    for _ in range(REPS):
        began = time.perf_counter()
        found = queries.charts(BOARD, window, at)
        seconds.append(time.perf_counter() - began)
    return statistics.median(seconds), max(seconds), found


def measure(url: str, signals: int) -> list[list[Any]]:
    last = seed(url, signals)
    container = bench_container(url)
    try:
        queries = FlowChartQueries(
            container.event_store(), container.read_model(), container.queries(), container.clock()
        )
        rows = []
        for window in WINDOWS:
            median, worst, found = timed(queries, window, None)
            ended = sum(sum(c) for c in found.finished.values())
            rows.append(
                [
                    f"now, {window} min",
                    len(found.buckets),
                    ended,
                    f"{median * 1000:.1f}",
                    f"{worst * 1000:.1f}",
                ]
            )
        median, worst, found = timed(queries, 1440, last // 2)
        ended = sum(sum(c) for c in found.finished.values())
        rows.append(
            [
                f"at position {last // 2:,}, 1440 min",
                len(found.buckets),
                ended,
                f"{median * 1000:.0f}",
                f"{worst * 1000:.0f}",
            ]
        )
        return rows
    finally:
        container.engine().dispose()


def main() -> None:
    signals = int(os.environ.get("BENCH_CHART_SIGNALS", "10000"))
    server = os.environ.get("BENCH_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
    headers = ["series", "buckets", "signals ended in the window", "median ms", "max ms"]
    with temp_dir("charts") as folder:
        progress(f"charts: seeding {signals:,} signals on SQLite")
        say(
            table(
                f"(charts) /api/charts on SQLite, {signals:,} signals",
                headers,
                measure(f"sqlite:///{folder / 'b.db'}", signals),
            )
        )
    own = make_url(server).set(database="bench_charts")
    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text("DROP DATABASE IF EXISTS bench_charts"))
        conn.execute(text("CREATE DATABASE bench_charts"))
    try:
        progress(f"charts: seeding {signals:,} signals on PostgreSQL")
        rows = measure(own.render_as_string(hide_password=False), signals)
        say(table(f"(charts) /api/charts on PostgreSQL, {signals:,} signals", headers, rows))
    finally:
        with admin.connect() as conn:
            conn.execute(text("DROP DATABASE IF EXISTS bench_charts"))
        admin.dispose()


if __name__ == "__main__":
    main()
