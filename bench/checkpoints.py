"""(j) LangGraph checkpoints on a board (`blackboard.langgraph.BlackboardSaver`): reads stay flat as a thread
grows. One board holds a thread of 10 checkpoints and one of BENCH_CHECKPOINTS (10,000 by default), each
checkpoint with a few channels and a pending write, as a graph's step leaves them; the section times, taking
turns between the two threads so the machine's load touches both alike:

- get_tuple of the newest checkpoint (what every graph step reads first),
- get_tuple of a named older one (a resume from history),
- list(limit=10) (the newest ten: get_state_history's first page),
- put of one more checkpoint (its event and its rows).

The ratio long / short is the figure: the newest checkpoint is found through the primary key of the read
model's rows, never by replaying the thread's events. SQLite (synchronous=NORMAL) and PostgreSQL (when
BENCH_PG_URL answers). This machine's PostgreSQL runs with autovacuum off: the section runs ANALYZE every
ANALYZE_EVERY checkpoints of the fill and before the timed rounds, as autovacuum's analyze would on a live
server (as section (g) does). Without statistics, psycopg's prepared statements get a generic plan for the
stream's version that costs ~1.6 ms on a stream of 2,000 events against ~0.6 ms on one of 10 (measured
2026-11-27), and a put on the long thread was 2.96x the short thread's.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from bench.common import summary_ms, temp_dir, verdict

TARGET_RATIO = 1.5  # issue 26: reads stay flat as a thread grows (long thread's median / short thread's)
SHORT = 10
BOARD = "bench-langgraph"
OPS = ("get_tuple latest", "get_tuple older", "list limit 10", "put")
ANALYZE_EVERY = 1000


def run(long: int, reps: int, pg_url: str | None) -> dict[str, Any]:
    report: dict[str, Any] = {"short": SHORT, "long": long, "reps": reps, "backends": {}}
    with temp_dir("checkpoints") as where:
        report["backends"]["sqlite"] = _measure(f"sqlite:///{where / 'checkpoints.db'}", long, reps)
        if pg_url:
            try:
                with _pg(pg_url) as url:
                    report["backends"]["postgresql"] = _measure(url, long, reps)
            except Exception as exc:  # noqa: BLE001 - no server: say so, keep SQLite's figures
                report["backends"]["postgresql"] = {"skipped": f"{type(exc).__name__}: {exc}"}
    measured = [b for b in report["backends"].values() if "ratios" in b]
    report["pass"] = bool(measured) and all(
        b["ratios"][op] <= TARGET_RATIO for b in measured for op in OPS if op.startswith(("get", "list"))
    )
    return report


@contextmanager
def _pg(admin_url: str) -> Iterator[str]:
    from bench.postgres.databases import Databases

    dbs = Databases(admin_url)
    try:
        yield dbs.sqlalchemy_url(dbs.create("langgraph_checkpoints"))
    finally:
        dbs.close()


def _checkpoint(step: int) -> dict[str, Any]:
    from langgraph.checkpoint.base import empty_checkpoint

    return {
        **empty_checkpoint(),
        "channel_values": {
            "messages": [f"message {i} of a conversation, a sentence or two long" for i in range(5)],
            "step": step,
        },
        "channel_versions": {"messages": step, "step": step},
    }


def _analyze(bb: Any) -> None:
    """What autovacuum's analyze does on a live PostgreSQL (off on this machine's); nothing on SQLite."""
    from sqlalchemy import text

    engine = bb._parts.engine
    if engine.dialect.name == "postgresql":
        with engine.connect() as conn:
            conn.execute(text("ANALYZE"))
            conn.commit()


def _fill(bb: Any, saver: Any, thread: str, count: int) -> list[dict[str, Any]]:
    configs, parent = [], None
    for step in range(count):
        if step and step % ANALYZE_EVERY == 0:
            _analyze(bb)
        config = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
        if parent is not None:
            config["configurable"]["checkpoint_id"] = parent["configurable"]["checkpoint_id"]
        parent = saver.put(config, _checkpoint(step), {"source": "loop", "step": step, "parents": {}}, {})
        saver.put_writes(parent, [("messages", "a pending write")], f"task-{step}", "~__pregel_pull, node")
        configs.append(parent)
    return configs


def _measure(url: str, long: int, reps: int) -> dict[str, Any]:
    from blackboard import Blackboard
    from blackboard.langgraph import BlackboardSaver

    with Blackboard(url, sqlite_synchronous="NORMAL") as bb:
        saver = BlackboardSaver(bb, board=BOARD)
        started = time.perf_counter()
        threads = {"short": _fill(bb, saver, "short", SHORT), "long": _fill(bb, saver, "long", long)}
        _analyze(bb)
        fill_s = time.perf_counter() - started
        samples: dict[str, dict[str, list[float]]] = {t: {op: [] for op in OPS} for t in threads}
        for rep in range(reps):  # taking turns
            for name, configs in threads.items():
                latest = {"configurable": {"thread_id": name, "checkpoint_ns": ""}}
                older = configs[len(configs) // 2]
                for op in OPS:
                    t0 = time.perf_counter()
                    if op == "get_tuple latest":
                        found = saver.get_tuple(latest)
                    elif op == "get_tuple older":
                        found = saver.get_tuple(older)
                    elif op == "list limit 10":
                        found = list(saver.list(latest, limit=10))
                    else:
                        found = saver.put(
                            {
                                "configurable": {
                                    **latest["configurable"],
                                    "checkpoint_id": configs[-1]["configurable"]["checkpoint_id"],
                                }
                            },
                            _checkpoint(len(configs) + rep),
                            {"source": "loop", "step": len(configs) + rep, "parents": {}},
                            {},
                        )
                    samples[name][op].append(time.perf_counter() - t0)
                    assert found, f"{name}: {op} found nothing"
        events = bb.position()
    result: dict[str, Any] = {
        "fill_s": round(fill_s, 1),
        "events": events,
        **{name: {op: summary_ms(s) for op, s in ops.items()} for name, ops in samples.items()},
    }
    result["ratios"] = {
        op: round(statistics.median(samples["long"][op]) / statistics.median(samples["short"][op]), 3)
        for op in OPS
    }
    return result


def print_report(report: dict[str, Any], say: Any, table: Any) -> dict[str, Any]:
    rows = []
    for backend, b in report["backends"].items():
        if "skipped" in b:
            rows.append([backend, "skipped", "", "", "", b["skipped"][:60]])
            continue
        for op in OPS:
            rows.append(
                [
                    backend,
                    op,
                    b["short"][op]["median_ms"],
                    b["long"][op]["median_ms"],
                    b["long"][op]["p95_ms"],
                    f"{b['ratios'][op]:.3f}x",
                ]
            )
    say(
        table(
            f"(j) LangGraph checkpoints: a thread of {report['short']} vs one of {report['long']:,} checkpoints, "
            f"{report['reps']} rounds taking turns, ms",
            [
                "store",
                "call",
                f"{report['short']}: median",
                f"{report['long']:,}: median",
                f"{report['long']:,}: p95",
                "long / short",
            ],
            rows,
            note="each checkpoint: 2 channels and 1 pending write; fill "
            + ", ".join(f"{k} {b['fill_s']} s" for k, b in report["backends"].items() if "fill_s" in b),
        )
    )
    worst = max(
        (b["ratios"][op] for b in report["backends"].values() if "ratios" in b for op in OPS[:3]),
        default=float("nan"),
    )
    return {
        "name": f"(j) checkpoint reads (get_tuple, list) on a {report['long']:,}-checkpoint thread / a "
        f"{report['short']}-checkpoint one, median",
        "measured": worst,
        "target": f"<= {TARGET_RATIO:g}",
        "verdict": verdict(report["pass"]),
    }
