"""(d) Replaying the whole log into the signal read model with BlackboardProjectionRebuilder."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from bench.common import Config, Timer, progress, sqlite_engine, temp_dir
from bench.seeding import seed_mix
from blackboard.infrastructure.persistence.projection import SIGNALS
from blackboard.infrastructure.persistence.rebuild import BlackboardProjectionRebuilder


def run(config: Config) -> dict[str, Any]:
    total = config["BENCH_REBUILD_EVENTS"]
    with temp_dir("rebuild") as d:
        engine = sqlite_engine(d / "blackboard.db", "FULL")
        progress(f"(d) seeding about {total:,} events (posts, claims, completions on 4 boards)")
        with Timer() as t_seed:
            counts = seed_mix(engine, total)
        events = sum(counts.values())
        progress(f"(d) rebuilding the read model from {events:,} events")
        with Timer() as t:
            folded = BlackboardProjectionRebuilder(engine).rebuild()
        with engine.connect() as conn:
            by_status = dict(conn.execute(select(SIGNALS.c.status, func.count()).group_by(SIGNALS.c.status)).all())
        engine.dispose()
    expected = {
        "POSTED": counts["AgentSignalPosted"] - counts["AgentSignalClaimed"],
        "CLAIMED": counts["AgentSignalClaimed"] - counts["AgentSignalCompleted"],
        "COMPLETED": counts["AgentSignalCompleted"],
    }
    return {
        "events": events,
        "events_by_type": counts,
        "seed_s": round(t_seed.seconds, 2),
        "folded": folded,
        "seconds": round(t.seconds, 3),
        "events_per_second": round(folded / t.seconds, 1),
        "read_model_by_status": by_status,
        "read_model_correct": by_status == expected,
    }
