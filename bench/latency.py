"""(c) Command latency on a small and a very large board: warm (long-lived service) and cold (fresh service)."""

from __future__ import annotations

import statistics
import time
from typing import Any

from sqlalchemy import func, select

from blackboard.application.commands import ClaimSignal, CompleteSignal
from bench.common import AGENT, Config, Timer, bench_container, post_command, progress, summary_ms, temp_dir
from bench.seeding import seed_posts
from blackboard.infrastructure.persistence.engine import StoreSettings, make_engine
from blackboard.infrastructure.persistence.event_store import EVENTS
from blackboard.infrastructure.persistence.snapshots import SNAPSHOTS, SqlSnapshotStore

WARMUP_CYCLES = 5
COLD_REPS = 3


def _claim(service: Any, signal_id: str) -> None:
    service.claim_signal(ClaimSignal(signal_id=signal_id, agent_id=AGENT.agent_id))


def _complete(service: Any, signal_id: str) -> None:
    service.complete_signal(CompleteSignal(signal_id=signal_id, agent_id=AGENT.agent_id, artifact_path="out/x.md"))


def run(config: Config) -> dict[str, Any]:
    sizes = {"small": config["BENCH_SMALL_BOARD"], "large": config["BENCH_LARGE_BOARD"]}
    reps = config["BENCH_REPS"]
    results: dict[str, Any] = {"reps": reps, "boards": {}}
    with temp_dir("latency") as d:
        path = d / "blackboard.db"
        container = bench_container(f"sqlite:///{path}")
        engine = container.engine()
        for prefix, (label, n) in enumerate(sizes.items(), start=1):
            progress(f"(c) seeding the {label} board with {n:,} posted signals")
            with Timer() as t:
                seed_posts(engine, f"ps-{label}", prefix, n, on_batch=lambda k: progress(f"     {k:,} posted"))
            results["boards"][label] = {"signals_seeded": n, "seed_s": round(t.seconds, 2)}

        service = container.service()  # the long-lived service of this section
        for label in sizes:
            board, info = f"ps-{label}", results["boards"][label]
            progress(f"(c) warming up on the {label} board")
            with Timer() as t:  # the first load of this board: no snapshot yet, every event is replayed
                first = service.post_signal(post_command(board, 0)).signal_id
            info["first_command_s"] = round(t.seconds, 3)
            _claim(service, first)
            _complete(service, first)
            for i in range(WARMUP_CYCLES):
                sid = service.post_signal(post_command(board, i)).signal_id
                _claim(service, sid)
                _complete(service, sid)

        # The boards take turns, one repetition each (the order alternating), so both see the same load.
        progress(f"(c) {reps} x claim+complete of a fresh signal on each board, taking turns")
        samples = {label: {"claim": [], "complete": [], "pairs": []} for label in sizes}
        for i in range(reps):
            order = list(sizes) if i % 2 == 0 else list(reversed(sizes))
            for label in order:
                sid = service.post_signal(post_command(f"ps-{label}", i)).signal_id  # untimed: a fresh signal
                t0 = time.perf_counter()
                _claim(service, sid)
                t1 = time.perf_counter()
                _complete(service, sid)
                t2 = time.perf_counter()
                samples[label]["claim"].append(t1 - t0)
                samples[label]["complete"].append(t2 - t1)
                samples[label]["pairs"].append(t2 - t0)
        for label, got in samples.items():
            info = results["boards"][label]
            info["warm"] = {
                "claim_plus_complete": summary_ms(got["pairs"]),
                "claim": summary_ms(got["claim"]),
                "complete": summary_ms(got["complete"]),
            }
            info["signals_after_warm"] = info["signals_seeded"] + 1 + WARMUP_CYCLES + reps

        # ------------------------------------------------------------------ cold: a new process's view
        for label in sizes:
            board, info = f"ps-{label}", results["boards"][label]
            progress(f"(c) cold claims on the {label} board ({COLD_REPS} fresh services)")
            cold, construct = [], []
            for _ in range(COLD_REPS):
                sid = service.post_signal(post_command(board, 0)).signal_id  # posted by the warm service
                with Timer() as t_build:
                    fresh_container = bench_container(f"sqlite:///{path}")
                    fresh = fresh_container.service()
                with Timer() as t_claim:
                    _claim(fresh, sid)
                construct.append(t_build.seconds)
                cold.append(t_claim.seconds)
                _complete(service, sid)
                fresh_container.engine().dispose()
            with engine.connect() as conn:
                snap_version = conn.scalar(select(SNAPSHOTS.c.version).where(SNAPSHOTS.c.stream_id == board))
                board_version = conn.scalar(select(func.max(EVENTS.c.version)).where(EVENTS.c.stream_id == board))
            probe_engine = make_engine(StoreSettings(url=f"sqlite:///{path}"))
            with Timer() as t_snap:
                snapshot = SqlSnapshotStore(probe_engine).get(board)
            probe_engine.dispose()
            info["cold"] = {
                "claim_ms_median": round(statistics.median(cold) * 1000, 1),
                "claim_ms_all": [round(c * 1000, 1) for c in cold],
                "service_construction_ms_median": round(statistics.median(construct) * 1000, 1),
                "snapshot_version": snap_version,
                "board_version": board_version,
                "snapshot_signals": len(snapshot[1]) if snapshot else 0,
                "snapshot_load_ms": round(t_snap.seconds * 1000, 1),
            }
        engine.dispose()

    small, large = (results["boards"][k]["warm"]["claim_plus_complete"] for k in ("small", "large"))
    results["warm_ratio_median"] = round(large["median_ms"] / small["median_ms"], 2)
    results["warm_ratio_p95"] = round(large["p95_ms"] / small["p95_ms"], 2)
    return results
