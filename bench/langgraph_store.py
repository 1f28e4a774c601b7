"""(v) LangGraph's store on the board: `BlackboardStore` against LangGraph's own stores on the same database,
`SqliteStore` (langgraph-checkpoint-sqlite) on SQLite and `PostgresStore` (langgraph-checkpoint-postgres) on
PostgreSQL, both of the bench extra. Each store holds one namespace of BENCH_STORE_ITEMS items (the board's
seeded in bulk: events appended, one catch-up, ANALYZE on PostgreSQL; the others' through their own batches).
Three calls: a get of a seeded item, a put over a seeded item (its fields kept), and a search of the namespace
with a filter and limit=10 (one item in FILTER_EVERY matches). A round times BENCH_STORE_REPS calls of each on
each store of a database, the stores taking turns round by round (which goes first alternates); each round
gives a median per call and a ratio (the peer's time / ours: 1 is as fast, 0.5 half as fast). Figures: the
median of the rounds, with min-max, over BENCH_STORE_ROUNDS rounds, and the load average before and after."""

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
TARGET = 0.5  # ours at least half as fast as the peer on its database, per call
NAMESPACE = ("memories", "user-1")
FILTER_EVERY = 25  # one item in so many matches the search's filter
PG_URL = os.environ.get("BENCH_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
OPERATIONS = ("get", "put", "search")
HEADERS = ["database", "store", "get µs", "put µs", "search µs", "ratio get", "ratio put", "ratio search"]


def item(i: int) -> tuple[tuple[str, ...], str, dict[str, Any]]:
    """The i-th seeded item of the one namespace."""
    return NAMESPACE, f"item-{i}", {"n": i, "kind": f"k{i % FILTER_EVERY}", "text": f"remembered thing {i}"}


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


def operation(store: Any, name: str, items: int) -> Callable[[int], Any]:
    """The i-th call of an operation: a get of a seeded item, a put over one, a filtered search."""
    step = max(1, items // 997)  # spread over the namespace
    if name == "get":
        return lambda i: store.get(NAMESPACE, f"item-{i * step % items}")
    if name == "put":
        return lambda i: store.put(*item(i * step % items))
    return lambda i: store.search(NAMESPACE, filter={"kind": f"k{i % FILTER_EVERY}"}, limit=10)


def check(store: Any, items: int) -> None:
    """Every store finds the same: the bench compares the same work."""
    found = store.search(NAMESPACE, filter={"kind": "k3"}, limit=10)
    assert len(found) == 10 and all(f.value["kind"] == "k3" for f in found), found
    assert store.get(*item(items - 1)[:2]).value == item(items - 1)[2]


def time_round(store: Any, items: int, reps: int) -> dict[str, float]:
    """The median µs of `reps` calls of each operation (after a few untimed)."""
    figures = {}
    for name in OPERATIONS:
        call = operation(store, name, items)
        for i in range(3):
            call(i)
        times = []
        for i in range(reps):
            started = time.perf_counter()
            call(i)
            times.append((time.perf_counter() - started) * 1e6)
        figures[name] = statistics.median(times)
    return figures


def compare(
    database: str, stores: dict[str, Callable[[], Any]], items: int, reps: int, rounds: int
) -> dict[str, Any]:
    """Our store and the peer on one database, in alternating rounds."""
    per_round: dict[str, list[dict[str, float]]] = {name: [] for name in stores}
    with ExitStack() as opened:
        open_ = {name: opened.enter_context(make()) for name, make in stores.items()}
        for store in open_.values():
            check(store, items)
        names = list(open_)
        for r in range(rounds):
            progress(f"(v) {database}: round {r + 1} of {rounds}")
            for name in names if r % 2 == 0 else names[::-1]:
                per_round[name].append(time_round(open_[name], items, reps))
    ours, peer = names
    result: dict[str, Any] = {"stores": {}, "ratios": {}}
    for name in names:
        result["stores"][name] = {op: _spread([r[op] for r in per_round[name]]) for op in OPERATIONS}
    for op in OPERATIONS:
        result["ratios"][op] = _spread(
            [p[op] / o[op] for o, p in zip(per_round[ours], per_round[peer], strict=True)], 3
        )
    return result


def _spread(values: list[float], digits: int = 0) -> dict[str, float]:
    return {
        "median": round(statistics.median(values), digits),
        "min": round(min(values), digits),
        "max": round(max(values), digits),
    }


@contextmanager
def board_store(url: str) -> Iterator[Any]:
    from blackboard.langgraph import BlackboardStore

    with BlackboardStore(url, blackboard_id=BOARD, author="ps-bench") as store:
        yield store


@contextmanager
def sqlite_store(path: Path, items: int) -> Iterator[Any]:
    from langgraph.store.sqlite import SqliteStore

    with SqliteStore.from_conn_string(str(path)) as store:
        store.setup()
        seed_store(store, items)
        yield store


@contextmanager
def postgres_store(libpq_url: str, items: int) -> Iterator[Any]:
    from langgraph.store.postgres import PostgresStore

    with PostgresStore.from_conn_string(libpq_url) as store:
        store.setup()
        seed_store(store, items)
        yield store


def run(config: Config) -> dict[str, Any]:
    items, reps, rounds = (
        config["BENCH_STORE_ITEMS"],
        config["BENCH_STORE_REPS"],
        config["BENCH_STORE_ROUNDS"],
    )
    result: dict[str, Any] = {"items": items, "reps": reps, "rounds": rounds, "load_before": os.getloadavg()}
    result["databases"] = {}
    with temp_dir("langgraph-store") as d:
        url = f"sqlite:///{Path(d) / 'board.db'}"
        progress(f"(v) SQLite: seeding {items:,} items")
        seed_board(url, items)
        result["databases"]["SQLite"] = compare(
            "SQLite",
            {
                "BlackboardStore": lambda: board_store(url),
                "SqliteStore (langgraph)": lambda: sqlite_store(Path(d) / "theirs.db", items),
            },
            items,
            reps,
            rounds,
        )
    result["postgresql"] = _postgresql(items, reps, rounds, result["databases"])
    result["load_after"] = os.getloadavg()
    return result


def _postgresql(items: int, reps: int, rounds: int, databases: dict[str, Any]) -> str:
    """The board and LangGraph's PostgresStore, each on a fresh database; skipped (said so) without a
    server."""
    from bench.postgres.databases import Databases

    dbs = Databases(PG_URL)
    try:
        version = dbs.server_version()
    except Exception as exc:  # noqa: BLE001 - no server: the SQLite figures still stand
        dbs.close()
        return (
            f"skipped: no PostgreSQL at {PG_URL.rsplit('@', 1)[-1]} ({type(exc).__name__}); set BENCH_PG_URL"
        )
    try:
        board = dbs.sqlalchemy_url(dbs.create("v_board"))
        theirs = dbs.libpq_url(dbs.create("v_lg"))
        progress(f"(v) PostgreSQL: seeding {items:,} items")
        seed_board(board, items)
        databases["PostgreSQL"] = compare(
            "PostgreSQL",
            {
                "BlackboardStore": lambda: board_store(board),
                "PostgresStore (langgraph)": lambda: postgres_store(theirs, items),
            },
            items,
            reps,
            rounds,
        )
        return str(version)
    finally:
        dbs.close()


def rows(result: dict[str, Any]) -> list[list[Any]]:
    def fig(c: dict[str, float]) -> str:
        return f"{c['median']:g} ({c['min']:g}-{c['max']:g})"

    table = []
    for database, found in result["databases"].items():
        for name, ops in found["stores"].items():
            mine = name == "BlackboardStore"
            table.append(
                [database, name, *(fig(ops[op]) for op in OPERATIONS)]
                + [fig(found["ratios"][op]) if mine else "" for op in OPERATIONS]
            )
    return table
