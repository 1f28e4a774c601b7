"""(d) Replaying the whole log into the signal read model with `Projector.rebuild` (the only rebuild)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select

from bench.common import Config, Timer, progress, temp_dir, wired
from bench.seeding import seed_mix
from blackboard.infrastructure.persistence.tables import SIGNALS


def run(config: Config) -> dict[str, Any]:
    total = config["BENCH_REBUILD_EVENTS"]
    with temp_dir("rebuild") as d, wired(f"sqlite:///{d / 'blackboard.db'}", synchronous="FULL") as container:
        engine = container.engine()
        projector = container.projector()  # Projector(event store, read model, page_size=5000), as the CLI's
        progress(f"(d) seeding about {total:,} events (posts, claims, completions on 4 boards), without rows")
        with Timer() as t_seed:
            counts = seed_mix(engine, total)
        events = sum(counts.values())
        progress(f"(d) rebuilding the read model from {events:,} events")
        with Timer() as t:
            folded = projector.rebuild(resume=False, progress=None)
        with engine.connect() as conn:
            by_status = dict(
                conn.execute(select(SIGNALS.c.status, func.count()).group_by(SIGNALS.c.status)).all()
            )
        read_model_position = container.read_model().position()
        last_position = container.event_store().last_position()
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
        "page_size": 5000,
        "read_model_by_status": by_status,
        "read_model_correct": by_status == expected
        and folded == events
        and read_model_position == last_position,
    }
