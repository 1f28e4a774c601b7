"""(v) LangGraph's store on the board: `BlackboardStore` put (a new item, and over an item) and get on a
board of 10 items against one of BENCH_STORE_ITEMS (100,000), on SQLite and PostgreSQL, beside LangGraph's
own `InMemoryStore` and (with langgraph-checkpoint-postgres, the bench extra) its `PostgresStore`, with the
same items, in the same run. The board's items are seeded in bulk (their events appended, then folded with
one catch-up, then ANALYZE on PostgreSQL); the other stores' through their own batches. Each figure is the
median of BENCH_STORE_REPS calls, warm (each item timed was read once before), in process, the two sizes of a
store taking turns call by call (the machine is shared: a drift falls on both alike)."""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
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
HEADERS = [
    "store",
    "items",
    "seed s",
    "put new µs",
    "put over µs",
    "get µs",
    "ratios: put new",
    "put over",
    "get",
]


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


OPERATIONS = ("put_new", "put_over", "get")


def operation(store: Any, name: str, seeded: list[tuple[tuple[str, ...], str, Any]]) -> Callable[[int], Any]:
    """The i-th call of an operation: a put of a new item, a put over a seeded item, a get of one."""
    if name == "put_new":
        return lambda i: store.put(("bench", "new"), f"k-{i}", {"i": i})
    if name == "put_over":
        return lambda i: store.put(seeded[i][0], seeded[i][1], {"i": i})
    return lambda i: store.get(seeded[i][0], seeded[i][1])


def measure(stores: dict[str, tuple[Any, int]], reps: int, warm_up: int = 5) -> dict[str, dict[str, float]]:
    """Each operation on every size of one kind of store, taking turns call by call (a drift of the shared
    machine falls on both sizes alike), warm: every item timed was read once before; medians in ms."""
    seeded = {
        size: [item(i * max(1, n // reps) % n) for i in range(reps + warm_up)]
        for size, (_, n) in stores.items()
    }
    for size, (store, _) in stores.items():
        for namespace, key, _ in seeded[size]:
            store.get(namespace, key)
    figures: dict[str, dict[str, float]] = {size: {} for size in stores}
    for name in OPERATIONS:
        calls = {size: operation(store, name, seeded[size]) for size, (store, _) in stores.items()}
        times: dict[str, list[float]] = {size: [] for size in stores}
        for i in range(reps + warm_up):
            for size, call in calls.items():
                started = time.perf_counter()
                call(i)
                if i >= warm_up:
                    times[size].append((time.perf_counter() - started) * 1000)
        for size in stores:
            figures[size][f"{name}_ms"] = round(statistics.median(times[size]), 4)
    return figures


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


@contextmanager
def memory_store() -> Iterator[Any]:
    from langgraph.store.memory import InMemoryStore

    yield InMemoryStore()


def kind(
    name: str,
    sizes: dict[str, int],
    reps: int,
    open_store: Callable[[int], Any],
    seed: Callable[[int], None] | None = None,
) -> dict[str, dict[str, Any]]:
    """One kind of store at every size: seeded (by `seed`, before opening, or through the store's own
    batches), then measured with the sizes taking turns."""
    stores: dict[str, tuple[Any, int]] = {}
    seeded_s: dict[str, float] = {}
    with ExitStack() as opened:
        for size, n in sizes.items():
            progress(f"(v) {name}: seeding {n:,} items")
            started = time.perf_counter()
            if seed is not None:
                seed(n)
            store = opened.enter_context(open_store(n))
            if seed is None:
                seed_store(store, n)
            seeded_s[size] = round(time.perf_counter() - started, 1)
            stores[size] = (store, n)
        progress(f"(v) {name}: measuring")
        figures = measure(stores, reps)
    return {size: {"seed_s": seeded_s[size], **figures[size]} for size in sizes}


def run(config: Config) -> dict[str, Any]:
    large, reps = config["BENCH_STORE_ITEMS"], config["BENCH_STORE_REPS"]
    sizes = {"10": 10, f"{large:,}": large}
    result: dict[str, Any] = {"items": large, "reps": reps, "stores": {}}
    result["stores"]["InMemoryStore"] = kind("InMemoryStore", sizes, reps, lambda n: memory_store())
    with temp_dir("langgraph-store") as d:

        def url(n: int) -> str:
            return f"sqlite:///{Path(d) / f'board-{n}.db'}"

        result["stores"]["BlackboardStore, SQLite"] = kind(
            "BlackboardStore, SQLite",
            sizes,
            reps,
            lambda n: board_store(url(n)),
            lambda n: seed_board(url(n), n),
        )
    result["postgresql"] = _postgresql(sizes, reps, result["stores"])
    for by_size in result["stores"].values():
        small, big = by_size["10"], by_size[f"{large:,}"]
        for name in OPERATIONS:
            big[f"{name}_ratio"] = round(big[f"{name}_ms"] / small[f"{name}_ms"], 3)
    return result


def _postgresql(sizes: dict[str, int], reps: int, stores: dict[str, Any]) -> str:
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
        boards = {n: dbs.sqlalchemy_url(dbs.create(f"v_board_{n}")) for n in sizes.values()}
        stores["BlackboardStore, PostgreSQL"] = kind(
            "BlackboardStore, PostgreSQL",
            sizes,
            reps,
            lambda n: board_store(boards[n]),
            lambda n: seed_board(boards[n], n),
        )
        try:
            import langgraph.store.postgres  # noqa: F401 - langgraph-checkpoint-postgres, the bench extra
        except ImportError:
            return f"{version}; PostgresStore skipped: langgraph-checkpoint-postgres is not installed"
        theirs = {n: dbs.libpq_url(dbs.create(f"v_lg_{n}")) for n in sizes.values()}
        stores["PostgresStore (langgraph)"] = kind(
            "PostgresStore (langgraph)", sizes, reps, lambda n: postgres_store(theirs[n])
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
                    c.get("put_over_ratio", ""),
                    c.get("get_ratio", ""),
                ]
            )
    return table
