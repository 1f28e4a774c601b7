"""(v) LangGraph's store on the board: `BlackboardStore` put (a new item, and over an item) and get on a
board of 10 items against one of BENCH_STORE_ITEMS (100,000), on SQLite and PostgreSQL, beside LangGraph's
own `InMemoryStore` and (with langgraph-checkpoint-postgres, the bench extra) its `PostgresStore`, with the
same items, in the same run. The board's items are seeded in bulk (their events appended, then folded with
one catch-up, then ANALYZE on PostgreSQL); the other stores' through their own batches. Each figure is the
median of BENCH_STORE_REPS calls, warm (each item timed was read once before), in process."""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.common import Config, bench_container, progress, temp_dir
from blackboard.domain.events import EntryWritten
from blackboard.infrastructure.langgraph.store import entry_key
from blackboard.infrastructure.persistence.codec import event_row
from blackboard.infrastructure.persistence.engine import write_transaction
from blackboard.infrastructure.persistence.tables import EVENTS

BOARD = "ps-v"
TARGET = 1.5  # put and get on 100,000 items / on 10
PG_URL = os.environ.get("BENCH_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
HEADERS = ["store", "items", "seed s", "put new µs", "put over µs", "get µs", "put new ratio", "get ratio"]


def item(i: int) -> tuple[tuple[str, ...], str, dict[str, Any]]:
    """The i-th seeded item: 1,000 users' memories."""
    return ("memories", f"user-{i % 1000}"), f"item-{i}", {"n": i, "text": f"remembered thing {i}"}


def seed_board(url: str, items: int) -> None:
    container = bench_container(url)
    engine, now = container.engine(), datetime.now(UTC)
    rows = []
    for i in range(items):
        namespace, key, value = item(i)
        event = EntryWritten(
            blackboard_id=BOARD,
            version=1,
            occurred_at=now - timedelta(days=1),
            key=entry_key(namespace, key),
            value=value,
            author="ps-bench",
        )
        rows.append(event_row(event, {"actor": "ps-bench"}, now))
    for start in range(0, len(rows), 20_000):
        with write_transaction(engine) as conn:
            conn.execute(EVENTS.insert(), rows[start : start + 20_000])
    container.projector().catch_up()
    if engine.dialect.name == "postgresql":  # the planner's statistics, as autovacuum would gather them
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.exec_driver_sql("ANALYZE")
    engine.dispose()


def seed_store(store: Any, items: int) -> None:
    from langgraph.store.base import PutOp

    for start in range(0, items, 1000):
        store.batch([PutOp(*item(i)) for i in range(start, min(items, start + 1000))])


def median_ms(run: Callable[[int], Any], reps: int, warm_up: int = 5) -> float:
    for i in range(reps, reps + warm_up):
        run(i)
    times = []
    for i in range(reps):
        started = time.perf_counter()
        run(i)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def measure(store: Any, items: int, reps: int) -> dict[str, float]:
    """put of a new item, put over a seeded item, get of a seeded item (each rep another one)."""
    seeded = [item(i * max(1, items // reps) % items) for i in range(2 * reps + 10)]
    for namespace, key, _ in seeded:  # warm: each item read once, as the 10 of the small board always are
        store.get(namespace, key)
    return {
        "put_new_ms": median_ms(lambda i: store.put(("bench", "new"), f"k-{i}", {"i": i}), reps),
        "put_over_ms": median_ms(lambda i: store.put(seeded[i][0], seeded[i][1], {"i": i}), reps),
        "get_ms": median_ms(lambda i: store.get(seeded[i][0], seeded[i][1]), reps),
    }


@contextmanager
def board_store(url: str) -> Iterator[Any]:
    from blackboard.langgraph import BlackboardStore

    with BlackboardStore(url, blackboard_id=BOARD, author="ps-bench") as store:
        yield store


@contextmanager
def postgres_store(libpq_url: str) -> Iterator[Any]:
    from langgraph.store.postgres import PostgresStore

    with PostgresStore.from_conn_string(libpq_url) as store:
        store.setup()
        yield store


def case(
    open_store: Callable[[], Any], seed: Callable[[Any], None] | None, items: int, reps: int
) -> dict[str, Any]:
    started = time.perf_counter()
    with open_store() as store:
        if seed is not None:
            seed(store)
        seeded = time.perf_counter() - started
        figures = measure(store, items, reps)
    return {"seed_s": round(seeded, 1), **{k: round(v, 4) for k, v in figures.items()}}


def run(config: Config) -> dict[str, Any]:
    large, reps = config["BENCH_STORE_ITEMS"], config["BENCH_STORE_REPS"]
    sizes = {"10": 10, f"{large:,}": large}
    result: dict[str, Any] = {"items": large, "reps": reps, "stores": {}}

    def record(name: str, size: str, figures: dict[str, Any]) -> None:
        result["stores"].setdefault(name, {})[size] = figures

    from langgraph.store.memory import InMemoryStore

    @contextmanager
    def memory() -> Iterator[Any]:
        yield InMemoryStore()

    for size, n in sizes.items():
        progress(f"(v) InMemoryStore, {n:,} items")
        record("InMemoryStore", size, case(memory, lambda s, n=n: seed_store(s, n), n, reps))

    with temp_dir("langgraph-store") as d:
        for size, n in sizes.items():
            url = f"sqlite:///{Path(d) / f'board-{n}.db'}"
            progress(f"(v) BlackboardStore on SQLite, seeding {n:,} items")
            started = time.perf_counter()
            seed_board(url, n)
            figures = case(lambda url=url: board_store(url), None, n, reps)
            record(
                "BlackboardStore, SQLite",
                size,
                {**figures, "seed_s": round(time.perf_counter() - started, 1)},
            )

    result["postgresql"] = _postgresql(sizes, reps, record)
    for by_size in result["stores"].values():
        small, big = by_size["10"], by_size[f"{large:,}"]
        big["put_new_ratio"] = round(big["put_new_ms"] / small["put_new_ms"], 3)
        big["get_ratio"] = round(big["get_ms"] / small["get_ms"], 3)
    return result


def _postgresql(sizes: dict[str, int], reps: int, record: Callable[[str, str, dict[str, Any]], None]) -> str:
    """The board and LangGraph's PostgresStore, each on a fresh database per size; skipped (said so)
    without a server, or PostgresStore without langgraph-checkpoint-postgres."""
    from bench.postgres.databases import Databases

    dbs = Databases(PG_URL)
    try:
        version = dbs.server_version()
    except Exception as exc:  # noqa: BLE001 - no server: the SQLite and in-memory figures still stand
        dbs.close()
        return (
            f"skipped: no PostgreSQL at {PG_URL.rsplit('@', 1)[-1]} ({type(exc).__name__}); set BENCH_PG_URL"
        )
    try:
        for size, n in sizes.items():
            url = dbs.sqlalchemy_url(dbs.create(f"v_board_{n}"))
            progress(f"(v) BlackboardStore on PostgreSQL, seeding {n:,} items")
            started = time.perf_counter()
            seed_board(url, n)
            figures = case(lambda url=url: board_store(url), None, n, reps)
            record(
                "BlackboardStore, PostgreSQL",
                size,
                {**figures, "seed_s": round(time.perf_counter() - started, 1)},
            )
        try:
            import langgraph.store.postgres  # noqa: F401 - langgraph-checkpoint-postgres, the bench extra
        except ImportError:
            return f"{version}; PostgresStore skipped: langgraph-checkpoint-postgres is not installed"
        for size, n in sizes.items():
            libpq = dbs.libpq_url(dbs.create(f"v_lg_{n}"))
            progress(f"(v) LangGraph's PostgresStore, {n:,} items")
            record(
                "PostgresStore (langgraph)",
                size,
                case(lambda libpq=libpq: postgres_store(libpq), lambda s, n=n: seed_store(s, n), n, reps),
            )
        return str(version)
    finally:
        dbs.close()


def rows(result: dict[str, Any]) -> list[list[Any]]:
    table = []
    for name, by_size in result["stores"].items():
        for size, c in by_size.items():
            table.append(
                [
                    name,
                    size,
                    c["seed_s"],
                    round(c["put_new_ms"] * 1000, 1),
                    round(c["put_over_ms"] * 1000, 1),
                    round(c["get_ms"] * 1000, 1),
                    c.get("put_new_ratio", ""),
                    c.get("get_ratio", ""),
                ]
            )
    return table
