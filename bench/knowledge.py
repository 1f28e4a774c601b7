"""(k) Knowledge entries: a write and a read on a board of 10 entries against one of 100,000 entries
and 100,000 signals; a signal command with and without those entries on its board; `entries
--topic` and `--author` on the large board. Each case is its own SQLite file, seeded in bulk (the
events appended as they would be, then folded with one catch-up) and measured warm in process."""

from __future__ import annotations

import statistics
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.common import AGENT, Config, bench_container, progress, temp_dir
from blackboard.application.commands import ClaimSignal, CompleteSignal, PostSignal
from blackboard.application.knowledge.commands import ListEntries, ReadEntry, WriteEntry
from blackboard.domain.events import AgentSignalPosted, EntryWritten
from blackboard.domain.signals import SignalPayload, SignalType
from blackboard.infrastructure.persistence.codec import event_row
from blackboard.infrastructure.persistence.engine import write_transaction
from blackboard.infrastructure.persistence.tables import EVENTS

BOARD = "ps-k"
AUTHORS = ("ps-researcher", "ps-analyst", "ps-reviewer", "ps-writer")


def seed(url: str, entries: int, signals: int) -> None:
    """`entries` keys (one version each, four authors, one of 50 topics each) and `signals` posted
    signals on BOARD, appended in bulk, then folded into the read model by one catch-up."""
    container = bench_container(url, post_timeout=86_400)
    engine, now = container.engine(), datetime.now(UTC)
    t0 = now - timedelta(days=1)
    rows = []
    for i in range(entries):
        event = EntryWritten(
            blackboard_id=BOARD,
            version=1,
            occurred_at=t0,
            key=f"finding/{i:06d}",
            value={"n": i, "text": f"finding number {i}"},
            author=AUTHORS[i % 4],
            entry_type="finding",
            topics=(f"topic-{i % 50}",),
        )
        rows.append(event_row(event, {"actor": event.author}, now))
    for i in range(signals):
        event = AgentSignalPosted(
            blackboard_id=BOARD,
            version=i + 1,
            occurred_at=t0,
            signal_id=f"sig-{i:08x}",
            signal_type=SignalType.RESEARCH,
            posted_by="bench",
            payload=SignalPayload(ps_id=BOARD, entry_id="e-1", topic=f"topic {i}"),
            target_capabilities=("RESEARCH",),
        )
        rows.append(event_row(event, {"actor": "bench"}, now))
    for start in range(0, len(rows), 20_000):
        with write_transaction(engine) as conn:
            conn.execute(EVENTS.insert(), rows[start : start + 20_000])
    container.projector().catch_up()
    engine.dispose()


def _median_ms(run: Any, reps: int, warm_up: int = 5) -> float:
    """The median of `reps` calls, after `warm_up` unmeasured ones (first-use costs: schemas, caches)."""
    for i in range(reps, reps + warm_up):
        run(i)
    times = []
    for i in range(reps):
        started = time.perf_counter()
        run(i)
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def measure(url: str, reps: int) -> dict[str, float]:
    container = bench_container(url, post_timeout=86_400)
    knowledge, queries, service = container.knowledge(), container.knowledge_queries(), container.service()
    figures = {
        "write_ms": _median_ms(
            lambda i: knowledge.write(
                WriteEntry(blackboard_id=BOARD, key=f"bench/new-{i}", value={"i": i}, author="ps-bench")
            ),
            reps,
        ),
        "read_ms": _median_ms(
            lambda i: queries.read(ReadEntry(blackboard_id=BOARD, key=f"bench/new-{i}")), reps
        ),
    }

    def signal_command(i: int) -> None:
        posted = service.post_signal(
            PostSignal(signal_type="RESEARCH", ps_id=BOARD, entry_id="e-1", topic=f"b {i}")
        )
        service.claim_signal(ClaimSignal(signal_id=posted.signal_id, agent_id=AGENT.agent_id))
        service.complete_signal(
            CompleteSignal(signal_id=posted.signal_id, agent_id=AGENT.agent_id, artifact_path="a.md")
        )

    figures["post_claim_complete_ms"] = _median_ms(signal_command, reps)
    figures["entries_topic_ms"] = _median_ms(
        lambda i: queries.entries(ListEntries(blackboard_id=BOARD, topic=f"topic-{i % 50}", limit=20)), reps
    )
    figures["entries_author_ms"] = _median_ms(
        lambda i: queries.entries(ListEntries(blackboard_id=BOARD, author=AUTHORS[i % 4], limit=20)), reps
    )
    container.engine().dispose()
    return figures


def run(config: Config) -> dict[str, Any]:
    large, reps = config["BENCH_LARGE_BOARD"], config["BENCH_REPS"]
    cases = {"small": (10, 10), "large entries and signals": (large, large), "large signals only": (0, large)}
    result: dict[str, Any] = {"entries": large, "signals": large, "reps": reps, "cases": {}}
    with temp_dir("knowledge") as d:
        for name, (entries, signals) in cases.items():
            url = f"sqlite:///{Path(d) / (name.replace(' ', '-') + '.db')}"
            progress(f"(k) seeding {entries:,} entries and {signals:,} signals ({name})")
            started = time.perf_counter()
            seed(url, entries, signals)
            seeded = time.perf_counter() - started
            progress(f"(k) measuring {name}")
            result["cases"][name] = {
                "seed_s": round(seeded, 1),
                **{k: round(v, 3) for k, v in measure(url, reps).items()},
            }
    small, big, plain = (result["cases"][n] for n in cases)
    result["write_ratio"] = round(big["write_ms"] / small["write_ms"], 3)
    result["read_ratio"] = round(big["read_ms"] / small["read_ms"], 3)
    result["signal_command_ratio"] = round(big["post_claim_complete_ms"] / plain["post_claim_complete_ms"], 3)
    return result
