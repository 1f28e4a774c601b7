"""`python -m bench.follow`: what keeping a run's output costs, and how soon a follower sees a line
(docs/persistence.md, "Run output"; issue 36, item 4), on SQLite and PostgreSQL (BENCH_PG_URL, default the
local server; BENCH_FOLLOW_PG=0 leaves it out).

- **Writing**: BENCH_FOLLOW_LINES lines (default 10,000: a run's bound) said by one run as fast as a thread can
  say them, through the worker's writer (`worker/output.py`) into the table, until `finish` returns: lines a
  second, and the transactions it took (batches).
- **Lag**: a run says a line every 20 ms (BENCH_FOLLOW_LAG_LINES of them, default 200) while `Watcher.follow`
  in another thread follows the signal; each line's time from being said to being yielded: p50, p95, max. The
  follower polls the table every OUTPUT_POLL (0.25 s) and the writer flushes every FLUSH_EVERY (0.2 s), so the
  lag is about their sum at worst.

Writes bench-results/follow.json (BENCH_OUT_DIR)."""

from __future__ import annotations

import json
import os
import statistics
import threading
import time
from pathlib import Path
from typing import Any

from bench.common import machine, say, table, temp_dir, wired

AGENT_FILE = "---\nname: bench-talker\ncapabilities: {RESEARCH: 0.9}\ncommand: echo done\n---\nTalks.\n"


def _claimed(container: Any) -> Any:
    from blackboard.application.commands import ClaimSignal, PostSignal

    service = container.service()
    posted = service.post_signal(PostSignal(signal_type="RESEARCH", ps_id="ps-bench", topic="a long run"))
    return service.claim_signal(ClaimSignal(signal_id=posted.signal_id, agent_id="bench-talker"))


def writing(container: Any, lines: int) -> dict[str, Any]:
    from blackboard.infrastructure.worker.output import OutputWriter

    store = container.run_output()
    batches = 0
    append = store.append

    def counted(batch: Any) -> None:
        nonlocal batches
        batches += 1
        append(batch)

    store.append = counted  # type: ignore[method-assign]
    writer = OutputWriter(store, container.clock().now)
    writer.start()
    try:
        run = writer.run(_claimed(container))
        started = time.perf_counter()
        for n in range(lines):
            run.stdout(f"line {n} of the run's output, about as long as a log line of a handler is")
        writer.finish(timeout=600)
        took = time.perf_counter() - started
    finally:
        writer.close()
    return {"lines": lines, "seconds": round(took, 3), "lines_per_s": round(lines / took), "batches": batches}


def lag(container: Any, lines: int) -> dict[str, Any]:
    from blackboard.application.commands import CompleteSignal
    from blackboard.application.output import OutputLine
    from blackboard.infrastructure.worker.output import OutputWriter

    claimed = _claimed(container)
    writer = OutputWriter(container.run_output(), container.clock().now)
    writer.start()
    seen: list[float] = []
    said: dict[str, float] = {}

    def follow() -> None:
        for item in container.watcher().follow(claimed.signal_id, timeout=600):
            if isinstance(item, OutputLine):
                seen.append(time.perf_counter() - said[item.text])

    follower = threading.Thread(target=follow)
    follower.start()
    try:
        run = writer.run(claimed)
        for n in range(lines):
            text = f"line {n}"
            said[text] = time.perf_counter()
            run.stdout(text)
            time.sleep(0.02)
        writer.finish()
        container.service().complete_signal(
            CompleteSignal(signal_id=claimed.signal_id, agent_id="bench-talker", token=claimed.claim_token)
        )
        follower.join(600)
    finally:
        writer.close()
    ms = sorted(s * 1000 for s in seen)
    return {
        "lines": len(ms),
        "p50_ms": round(statistics.median(ms), 1),
        "p95_ms": round(ms[int(len(ms) * 0.95) - 1], 1),
        "max_ms": round(ms[-1], 1),
    }


def on(url: str, agents: Path, write_lines: int, lag_lines: int) -> dict[str, Any]:
    with wired(url, agents_dir=agents) as container:
        return {"writing": writing(container, write_lines), "lag": lag(container, lag_lines)}


def main() -> None:
    write_lines = int(os.environ.get("BENCH_FOLLOW_LINES", "10000"))
    lag_lines = int(os.environ.get("BENCH_FOLLOW_LAG_LINES", "200"))
    results: dict[str, Any] = {"machine": machine(), "load_average_at_start": os.getloadavg()}
    with temp_dir("follow") as folder:
        agents = folder / "agents"
        agents.mkdir()
        (agents / "bench-talker.md").write_text(AGENT_FILE, encoding="utf-8")
        results["sqlite"] = on(f"sqlite:///{folder / 'board.db'}", agents, write_lines, lag_lines)
        if os.environ.get("BENCH_FOLLOW_PG", "1") != "0":
            from bench.postgres.databases import Databases

            databases = Databases(
                os.environ.get("BENCH_PG_URL", "postgresql+psycopg://postgres@127.0.0.1/test")
            )
            try:
                url = databases.sqlalchemy_url(databases.create("follow"))
                results["postgresql"] = on(url, agents, write_lines, lag_lines)
            finally:
                databases.close()
    results["load_average_at_end"] = os.getloadavg()
    rows = [
        [
            db,
            r["writing"]["lines_per_s"],
            r["writing"]["batches"],
            r["lag"]["p50_ms"],
            r["lag"]["p95_ms"],
            r["lag"]["max_ms"],
        ]
        for db, r in results.items()
        if db in ("sqlite", "postgresql")
    ]
    say(
        table(
            f"a run's output: {write_lines:,} lines written through the worker's writer; the lag of "
            f"{lag_lines} lines said 20 ms apart to a follower in another thread",
            ["database", "lines/s", "batches", "lag p50 ms", "p95 ms", "max ms"],
            rows,
            f"    load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}",
        )
    )
    out = Path(os.environ.get("BENCH_OUT_DIR", "bench-results")) / "follow.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2))
    say(f"    written: {out}")


if __name__ == "__main__":
    main()
