"""(e) Concurrent writers on SQLite WAL: deferred BEGIN (SQLAlchemy's usual) vs BEGIN IMMEDIATE (ours).

Each process appends to its own stream the way our event store does: in one transaction it reads
the stream's last version and the last position, then inserts the next event. No retries: every
failure is counted, so the figure is the number of operations a caller would have lost or had to
retry.
"""

from __future__ import annotations

import multiprocessing as mp
import time
from contextlib import AbstractContextManager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from uuid import uuid4

from sqlalchemy import Connection, Engine, create_engine, event, func, insert, select
from sqlalchemy.exc import DBAPIError

from bench.common import Config, Timer, progress, sqlite_engine, temp_dir
from blackboard.infrastructure.composition.settings import BlackboardSettings, store_settings
from blackboard.infrastructure.persistence.engine import make_engine, write_transaction
from blackboard.infrastructure.persistence.event_store import EVENTS

BUSY_TIMEOUT_S = 30.0
MODES = {
    "deferred": "plain SQLAlchemy engine, BEGIN (deferred) emitted on begin, engine.begin()",
    "immediate": "make_engine(store_settings(...)) and write_transaction (BEGIN IMMEDIATE)",
}


def _plain_engine(path: Path) -> Engine:
    """SQLAlchemy's documented pysqlite recipe for real transactions: driver autocommit off, emit BEGIN."""
    engine = create_engine(f"sqlite:///{path}", connect_args={"timeout": BUSY_TIMEOUT_S})

    @event.listens_for(engine, "connect")
    def connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        dbapi_connection.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_S * 1000)}")
        dbapi_connection.execute("PRAGMA journal_mode=WAL")
        dbapi_connection.execute("PRAGMA synchronous=FULL")

    @event.listens_for(engine, "begin")
    def begin(conn: Connection) -> None:
        conn.exec_driver_sql("BEGIN")

    return engine


def _worker(mode: str, path: str, proc: int, appends: int, barrier: Any, results: Any) -> None:
    if mode == "deferred":
        engine = _plain_engine(Path(path))

        def transaction() -> AbstractContextManager[Connection]:
            return engine.begin()
    else:
        engine = make_engine(
            store_settings(
                BlackboardSettings(
                    db=f"sqlite:///{path}", sqlite_synchronous="FULL", sqlite_busy_timeout=BUSY_TIMEOUT_S
                )
            )
        )

        def transaction() -> AbstractContextManager[Connection]:
            return write_transaction(engine)

    stream = f"writer-{proc}"
    with engine.connect():
        pass  # connect (and run the pragmas) before the start line
    ok = locked = other = 0
    samples: list[str] = []
    durations: list[float] = []
    barrier.wait()
    start = time.perf_counter()
    for _ in range(appends):
        t0 = time.perf_counter()
        try:
            with transaction() as conn:
                current = conn.scalar(
                    select(func.coalesce(func.max(EVENTS.c.version), 0)).where(EVENTS.c.stream_id == stream)
                )
                conn.scalar(select(func.coalesce(func.max(EVENTS.c.position), 0)))
                now = datetime.now(UTC)
                conn.execute(
                    insert(EVENTS).values(
                        event_id=str(uuid4()),
                        stream_id=stream,
                        version=current + 1,
                        event_type="BenchEvent",
                        schema_version=1,
                        data="{}",
                        metadata="{}",
                        occurred_at=now,
                        recorded_at=now,
                    )
                )
            ok += 1
        except DBAPIError as exc:
            message = str(exc.orig)
            if "database is locked" in message:
                locked += 1
            else:
                other += 1
            if len(samples) < 3 and message not in samples:
                samples.append(message)
        durations.append(time.perf_counter() - t0)
    results.put(
        {
            "proc": proc,
            "ok": ok,
            "locked": locked,
            "other": other,
            "errors": samples,
            "seconds": time.perf_counter() - start,
            "max_append_ms": round(max(durations) * 1000, 1),
        }
    )
    engine.dispose()


def run_mode(mode: str, procs: int, appends: int) -> dict[str, Any]:
    ctx = mp.get_context("spawn")
    with temp_dir(f"locking-{mode}") as d:
        path = d / "blackboard.db"
        sqlite_engine(path, "FULL").dispose()  # schema and WAL, made before the writers start
        barrier, results = ctx.Barrier(procs), ctx.Queue()
        workers = [
            ctx.Process(target=_worker, args=(mode, str(path), p, appends, barrier, results))
            for p in range(procs)
        ]
        with Timer() as t:
            for w in workers:
                w.start()
            outcomes = [results.get(timeout=600) for _ in workers]
            for w in workers:
                w.join()
        engine = make_engine(store_settings(BlackboardSettings(db=f"sqlite:///{path}")))
        with engine.connect() as conn:
            stored = conn.scalar(select(func.count()).select_from(EVENTS))
        engine.dispose()
    outcomes.sort(key=lambda o: o["proc"])
    attempted = procs * appends
    return {
        "how": MODES[mode],
        "attempted": attempted,
        "succeeded": sum(o["ok"] for o in outcomes),
        "database_is_locked": sum(o["locked"] for o in outcomes),
        "other_errors": sum(o["other"] for o in outcomes),
        "rows_stored": stored,
        "error_samples": sorted({e for o in outcomes for e in o["errors"]}),
        "max_append_ms": max(o["max_append_ms"] for o in outcomes),
        "wall_s_including_process_start": round(t.seconds, 2),
        "per_process": outcomes,
    }


def run(config: Config) -> dict[str, Any]:
    procs, appends = config["BENCH_LOCK_PROCS"], config["BENCH_LOCK_APPENDS"]
    results: dict[str, Any] = {
        "processes": procs,
        "appends_per_process": appends,
        "busy_timeout_s": BUSY_TIMEOUT_S,
    }
    for mode in MODES:
        progress(f"(e) {procs} processes x {appends} appends, {mode} transactions")
        results[mode] = run_mode(mode, procs, appends)
    return results
