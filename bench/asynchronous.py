"""(w) AsyncBlackboard beside Blackboard, on a SQLite file and on PostgreSQL, taking turns.

- wake: a signal is completed by another handle on the store (its own connections, so the wake-up comes
  through the store: SQLite's poll, PostgreSQL's NOTIFY) `GAP` s after a wait began; the time from the
  start of the completing call (its commit, then the wake-up) to the wait's return, for
  `await AsyncBlackboard.wait` and `Blackboard.wait` in turn.
- call: `show` of one signal, awaited (a thread of the board's pool) and called (this thread).
- many waits: BENCH_ASYNC_WAITS waits at once on as many signals, each completed by the other handle; what
  those claims and completions cost per call beside the same calls with no wait under way, the threads
  the waits held, and how long after the last completion the last wait returned.
No target: the figures are reported side by side.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.common import summary_ms, table, temp_dir

GAP = 0.05  # seconds between a wait's start and the completion it waits for
AGENT = "---\nname: bench-researcher\ncapabilities: {RESEARCH: 0.95}\n---\nResearches.\n"


def run(rounds: int, waits: int, pg_url: str | None) -> dict[str, Any]:
    report: dict[str, Any] = {"rounds": rounds, "waits": waits, "backends": {}}
    with temp_dir("async") as where:
        agents = where / "agents"
        agents.mkdir()
        (agents / "bench-researcher.md").write_text(AGENT, encoding="utf-8")
        report["backends"]["sqlite"] = _measure(f"sqlite:///{where / 'async.db'}", agents, rounds, waits)
        if pg_url:
            try:
                with _pg(pg_url) as url:
                    report["backends"]["postgresql"] = _measure(url, agents, rounds, waits)
            except Exception as exc:  # noqa: BLE001 - no server: say so, keep SQLite's figures
                report["backends"]["postgresql"] = {"skipped": f"{type(exc).__name__}: {exc}"}
    return report


@contextmanager
def _pg(admin_url: str) -> Iterator[str]:
    from bench.postgres.databases import Databases

    dbs = Databases(admin_url)
    try:
        yield dbs.sqlalchemy_url(dbs.create("async_api"))
    finally:
        dbs.close()


def _measure(url: str, agents: Path, rounds: int, waits: int) -> dict[str, Any]:
    from blackboard import AsyncBlackboard, Blackboard

    with Blackboard(url, agents_dir=agents) as blocking, Blackboard(url, agents_dir=agents) as other:
        board = AsyncBlackboard(url, agents_dir=agents)
        try:
            return asyncio.run(_turns(board, blocking, other, rounds, waits))
        finally:
            asyncio.run(board.close())


async def _turns(bb: Any, blocking: Any, other: Any, rounds: int, waits: int) -> dict[str, Any]:
    entry = iter(range(1, 10**9))

    def post() -> str:
        return str(other.post("RESEARCH", "ps-async", f"e-{next(entry)}", "bench").signal_id)

    def finish(signal_id: str) -> None:
        other.claim(signal_id, agent="bench-researcher")
        other.complete(signal_id, agent="bench-researcher")

    def later(signal_id: str, done: list[float]) -> None:
        other.claim(signal_id, agent="bench-researcher")
        time.sleep(GAP)
        done.append(time.monotonic())
        other.complete(signal_id, agent="bench-researcher")

    wake: dict[str, list[float]] = {"async": [], "blocking": []}
    call: dict[str, list[float]] = {"async": [], "blocking": []}
    for _ in range(rounds):
        for mode in ("async", "blocking"):
            signal_id, done = await asyncio.to_thread(post), []
            completing = threading.Thread(target=later, args=(signal_id, done))
            completing.start()
            if mode == "async":
                await bb.wait(signal_id, timeout=60)
            else:
                await asyncio.to_thread(blocking.wait, signal_id, timeout=60)
            wake[mode].append(time.monotonic() - done[0])
            await asyncio.to_thread(completing.join)
            started = time.perf_counter()
            await bb.show(signal_id) if mode == "async" else blocking.show(signal_id)
            call[mode].append(time.perf_counter() - started)

    alone = await asyncio.to_thread(_per_call, [post() for _ in range(waits)], finish)
    signals = await asyncio.to_thread(lambda: [post() for _ in range(waits)])
    before = set(threading.enumerate())
    tasks = [asyncio.create_task(bb.wait(s, timeout=600)) for s in signals]
    while len(bb._follower._waiting) < waits:  # every wait checked once and is waiting
        await asyncio.sleep(0.02)
    held = len([t for t in threading.enumerate() if t not in before]) + len(
        [t for t in before if t.name.startswith("blackboard-")]
    )
    beside = await asyncio.to_thread(_per_call, signals, finish)
    ended = time.monotonic()
    await asyncio.gather(*tasks)
    return {
        "wake": {mode: summary_ms(s) for mode, s in wake.items()},
        "call": {mode: summary_ms(s) for mode, s in call.items()},
        "many": {
            "waits": waits,
            "threads_held": held,
            "per_call_alone_ms": round(alone * 1000, 3),
            "per_call_beside_waits_ms": round(beside * 1000, 3),
            "ratio": round(beside / alone, 2),
            "last_wake_after_ms": round((time.monotonic() - ended) * 1000, 1),
        },
    }


def _per_call(signals: list[str], finish: Callable[[str], None]) -> float:
    """Seconds per call (a claim or a completion) of finishing these signals one after another."""
    started = time.perf_counter()
    for signal_id in signals:
        finish(signal_id)
    return (time.perf_counter() - started) / (2 * len(signals))


def print_report(report: dict[str, Any], say: Callable[[str], None]) -> None:
    rows, many = [], []
    for backend, found in report["backends"].items():
        if "skipped" in found:
            rows.append([backend, "skipped", found["skipped"], "", "", ""])
            continue
        for figure in ("wake", "call"):
            a, b = found[figure]["async"], found[figure]["blocking"]
            rows.append([backend, figure, a["median_ms"], b["median_ms"], a["p95_ms"], b["p95_ms"]])
        m = found["many"]
        many.append(
            [
                backend,
                m["waits"],
                m["threads_held"],
                m["per_call_alone_ms"],
                m["per_call_beside_waits_ms"],
                m["ratio"],
                m["last_wake_after_ms"],
            ]
        )
    say(
        table(
            f"(w) AsyncBlackboard beside Blackboard, {report['rounds']} rounds taking turns (ms)",
            ["store", "figure", "async median", "blocking median", "async p95", "blocking p95"],
            rows,
            "    wake: from the start of another handle's completing call to the wait's return; call: `show`\n"
            "    of one signal"
            " (awaited: a thread of the board's pool; called: this thread)",
        )
    )
    say(
        table(
            "(w) many waits at once: another handle's claims and completions of their signals (ms per call)",
            ["store", "waits", "threads", "alone", "beside the waits", "ratio", "last wake after"],
            many,
            "    threads: the board's threads while every wait waited (its pool's and the log follower)",
        )
    )
