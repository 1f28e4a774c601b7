"""A board of many signals for the web view (bench section `web`, tests/e2e/test_ui_large_board.py): decided
by BlackboardAggregate itself and appended in batches, then folded (bench/seeding.py's Seeder), so 10,000
signals take seconds rather than the minutes 30,000 commands would.

Of each 100 signals: 70 COMPLETED (every fifth with a runner's usage), 15 FAILED, 7 left POSTED and 8 left
CLAIMED; 4 of them `after` the signal before (two completed chains, two POSTED ones waiting on the one before);
each carries a label `area-K` (K = i % 7), and each hundredth one `milestone` and `mNNN` (NNN = i // 100), a
label no other signal carries."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Engine

from bench.common import AGENT
from bench.seeding import Seeder, fold, signal_id
from blackboard.domain.signals import SignalPayload, SignalResult, SignalType, SignalUsage

USAGE = SignalUsage(
    runner="anthropic", model="bench-model", input_tokens=1800, output_tokens=420, cost_usd=0.0093
)
CHAINED = {10: "after", 40: "after", 89: "after", 91: "after"}  # place in the round -> `after` the one before


def plan(i: int) -> str:
    """What becomes of signal i: COMPLETED, FAILED, POSTED or CLAIMED."""
    place = i % 100
    if place < 70:
        return "COMPLETED"
    if place < 85:
        return "FAILED"
    return "POSTED" if place < 92 else "CLAIMED"


def labels(i: int) -> tuple[str, ...]:
    return (f"area-{i % 7}", "milestone", f"m{i // 100:03d}") if i % 100 == 0 else (f"area-{i % 7}",)


def build(engine: Engine, board: str, n: int, prefix: int = 3) -> dict[str, Any]:
    """n signals on `board` (a new one), ending just before now (a claim left open is not yet lapsed); the
    count per status, and the seconds it took."""
    step = timedelta(milliseconds=1)
    started = datetime.now(UTC)
    seeder = Seeder(engine, board, prefix, batch=5000, start=started - step * (4 * n), step=step)
    aggregate = seeder.board
    counts = {"POSTED": 0, "CLAIMED": 0, "COMPLETED": 0, "FAILED": 0}
    for first in range(0, n, 100):
        ids = []
        for i in range(first, min(n, first + 100)):
            sid = signal_id(prefix, i)
            aggregate.post_signal(
                signal_id=sid,
                signal_type=SignalType.RESEARCH,
                payload=SignalPayload(
                    ps_id=board,
                    entry_id=f"e-{i}",
                    topic=f"question {i}: what is known about area {i % 7}",
                    prompt="find out what is known about this",
                    labels=labels(i),
                ),
                posted_by="ps-skill",
                at=seeder.at(),
                after=(signal_id(prefix, i - 1),) if i % 100 in CHAINED and i else (),
                priority=i % 5,
            )
            ids.append((i, sid))
        for i, sid in ids:
            fate = plan(i)
            counts[fate] += 1
            if fate == "POSTED":
                continue
            aggregate.claim_signal(sid, AGENT, seeder.at())
            if fate == "COMPLETED":
                usage = USAGE if i % 5 == 0 else None
                result = SignalResult(artifact_path=f"out/{sid}.md")
                aggregate.complete_signal(sid, AGENT.agent_id, result, seeder.at(), usage=usage)
            elif fate == "FAILED":
                aggregate.fail_signal(sid, AGENT.agent_id, "no sources found", seeder.at())
        seeder.decided()
    seeder.flush()
    folded = fold(engine)
    return {
        "signals": n,
        "events": seeder.events,
        "folded": folded,
        "by_status": counts,
        "seconds": round((datetime.now(UTC) - started).total_seconds(), 2),
    }
