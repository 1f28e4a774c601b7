"""(c) Command latency on a small and a very large board: warm (long-lived service) and cold (a new process).

The small board holds 10 POSTED signals; the large one BENCH_LARGE_BOARD signals that saw work and
about BENCH_LARGE_EVENTS events (claims, renewals, completions, failures and retries, entries written
on the board: `seed_busy`), so that both the log and the read model are large. Both are seeded through
the fast path (bench/seeding.py) in one SQLite file, then folded
into the read model by one catch-up (the seeding time includes it): commands decide on the rows only
once the read model has caught up with the log. Warm: one long-lived service claims and completes
fresh signals, the boards taking turns. Cold: a fresh process (`python -m bench.cold`: engine,
service, one claim) on each board, the boards taking turns; the ratio large/small of that cold
command is the target (<= 3x). Beside it, what the cold claim read: its SQL statements, the signals
its decision loaded, the events it replayed (none while the read model is live).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from sqlalchemy import Engine, func, or_, select

from bench.common import AGENT, Config, Timer, post_command, progress, summary_ms, temp_dir, wired
from bench.fleet import REPO, base_env
from bench.seeding import seed_busy, seed_posts
from blackboard.application.commands import ClaimSignal, CompleteSignal
from blackboard.domain.events import entry_stream_id
from blackboard.infrastructure.persistence.tables import ENTRIES, EVENTS, SIGNALS

WARMUP_CYCLES = 5
TARGET_COLD_RATIO = 3.0


def _claim(service: Any, signal_id: str) -> None:
    service.claim_signal(ClaimSignal(signal_id=signal_id, agent_id=AGENT.agent_id))


def _complete(service: Any, signal_id: str) -> None:
    service.complete_signal(
        CompleteSignal(signal_id=signal_id, agent_id=AGENT.agent_id, artifact_path="out/x.md")
    )


def cold_command(url: str, signal_id: str) -> dict[str, Any]:
    """bench/cold.py in a fresh process: its own timings, and the whole process's wall time."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "bench.cold", url, signal_id],
        cwd=REPO,
        env=base_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"the cold command exited {done.returncode}:\n{done.stderr[-3000:]}")
    return {**json.loads(done.stdout.strip().splitlines()[-1]), "wall_s": wall}


def run(config: Config) -> dict[str, Any]:
    """On a SQLite file (the figures at the top level), then on a fresh PostgreSQL database when
    BENCH_LATENCY_DATABASES names it ("postgresql": skipped with a note when no server answers)."""
    databases = [
        d.strip() for d in os.environ.get("BENCH_LATENCY_DATABASES", "sqlite").split(",") if d.strip()
    ]
    unknown = set(databases) - {"sqlite", "postgresql"}
    if unknown or not databases:
        raise SystemExit(
            f"BENCH_LATENCY_DATABASES: pick from sqlite,postgresql, not {os.environ['BENCH_LATENCY_DATABASES']!r}"
        )
    results: dict[str, Any] = {"databases": databases}
    if "sqlite" in databases:
        with temp_dir("latency") as d:
            results |= measure(f"sqlite:///{d / 'blackboard.db'}", config)
    if "postgresql" in databases:
        from bench.postgres.databases import Databases, analyze
        from bench.postgres.section import sizes as pg_sizes

        dbs = Databases(pg_sizes(config)["BENCH_PG_URL"])
        try:
            dbs.server_version()
        except Exception as exc:  # noqa: BLE001 - no server: the SQLite figures still stand
            results["postgresql"] = {"skipped": f"no PostgreSQL: {type(exc).__name__}"}
        else:
            db = dbs.create("latency")
            results["postgresql"] = measure(dbs.sqlalchemy_url(db), config, lambda: analyze(dbs, db))
        finally:
            dbs.close()
    return results


def measure(url: str, config: Config, after_seeding: Callable[[], float] | None = None) -> dict[str, Any]:
    """The section on one database. `after_seeding`: run once the boards are folded (PostgreSQL: ANALYZE,
    which this machine's server, autovacuum off, would not do by itself); its seconds are recorded."""
    sizes = {"small": config["BENCH_SMALL_BOARD"], "large": config["BENCH_LARGE_BOARD"]}
    reps, cold_reps = config["BENCH_REPS"], config["BENCH_COLD_REPS"]
    results: dict[str, Any] = {"reps": reps, "cold_reps": cold_reps, "boards": {}}
    database = "postgresql" if url.startswith("postgresql") else "sqlite"
    with wired(url) as container:
        engine = container.engine()
        for prefix, (label, n) in enumerate(sizes.items(), start=1):
            seeded = _seed(engine, database, label, prefix, n, config["BENCH_LARGE_EVENTS"])
            results["boards"][label] = {
                "signals_seeded": seeded.get("signals", n),
                "events_seeded": seeded["events"],
                "seed_s": seeded["seed_s"],
                "seed_append_s": seeded["append_s"],
                "seed_fold_s": seeded["fold_s"],
                **({"events_by_kind": seeded["kinds"]} if "kinds" in seeded else {}),
            }
        live = _read_model_live(container)
        results["read_model_live_after_seeding"] = live
        if not live:
            raise RuntimeError("(c) the read model is behind the log after seeding: commands would replay")
        if after_seeding is not None:
            results["analyze_s"] = after_seeding()

        service = container.service()  # the long-lived service of this section
        for label in sizes:
            board, info = f"ps-{label}", results["boards"][label]
            progress(f"(c) {database}: warming up on the {label} board")
            with Timer() as t:  # this service's first command on the board
                first = service.post_signal(post_command(board, 0)).signal_id
            info["first_command_s"] = round(t.seconds, 3)
            _claim(service, first)
            _complete(service, first)
            for i in range(WARMUP_CYCLES):
                sid = service.post_signal(post_command(board, i)).signal_id
                _claim(service, sid)
                _complete(service, sid)

        # The boards take turns, one repetition each (the order alternating), so both see the same load.
        progress(f"(c) {database}: {reps} x claim+complete of a fresh signal on each board, taking turns")
        samples: dict[str, dict[str, list[float]]] = {
            label: {"claim": [], "complete": [], "pairs": [], "post_numbered": []} for label in sizes
        }
        for i in range(reps):
            for label in _turn(list(sizes), i):
                # a fresh signal, its entry id left to the board (its highest e-N plus one, on an index)
                numbered = post_command(f"ps-{label}", i).model_copy(update={"entry_id": None})
                tp = time.perf_counter()
                sid = service.post_signal(numbered).signal_id
                samples[label]["post_numbered"].append(time.perf_counter() - tp)
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
                "post_numbered": summary_ms(got["post_numbered"]),
            }
            info["signals_after_warm"] = info["signals_seeded"] + 1 + WARMUP_CYCLES + reps

        # -------------------------------------------------- cold: a new process's view, side by side
        progress(f"(c) {database}: cold command: {cold_reps} fresh processes per board, taking turns")
        cold: dict[str, list[dict[str, Any]]] = {label: [] for label in sizes}
        for i in range(cold_reps):
            for label in _turn(list(sizes), i):
                sid = service.post_signal(
                    post_command(f"ps-{label}", 0)
                ).signal_id  # posted by the warm service
                cold[label].append(cold_command(url, sid))
                _complete(service, sid)
        for label, runs in cold.items():
            board, info = f"ps-{label}", results["boards"][label]

            def ms_all(key: str, runs: list[dict[str, Any]] = runs) -> list[float]:
                return [round(r[key] * 1000, 1) for r in runs]

            def ms_median(key: str, runs: list[dict[str, Any]] = runs) -> float:
                return round(statistics.median(r[key] for r in runs) * 1000, 1)

            info["cold"] = {
                "command_ms_median": ms_median("command_s"),
                "command_ms_all": ms_all("command_s"),
                "claim_ms_median": ms_median("claim_s"),
                "claim_ms_all": ms_all("claim_s"),
                "service_construction_ms_median": ms_median("build_s"),
                "process_wall_ms_median": ms_median("wall_s"),
                "process_wall_ms_all": ms_all("wall_s"),
                **_what_the_claim_read(runs),
                **_board_figures(engine, board),
            }
        results["read_model_live_at_end"] = _read_model_live(container)

    boards = results["boards"]
    small, large = (boards[k]["warm"]["claim_plus_complete"] for k in ("small", "large"))
    results["warm_ratio_median"] = round(large["median_ms"] / small["median_ms"], 2)
    results["warm_ratio_p95"] = round(large["p95_ms"] / small["p95_ms"], 2)
    results["cold_ratio"] = {
        key: round(
            boards["large"]["cold"][f"{key}_ms_median"] / boards["small"]["cold"][f"{key}_ms_median"], 2
        )
        for key in ("command", "claim", "process_wall")
    }
    return results


def _seed(engine: Engine, database: str, label: str, prefix: int, n: int, events: int) -> dict[str, Any]:
    """The small board: n POSTED signals. The large one: n signals that saw work (claimed, completed,
    failed and retried, their claims renewed, entries written), about `events` events in all."""
    if label == "small":
        progress(f"(c) {database}: seeding the {label} board with {n:,} posted signals, then one catch-up")
        return seed_posts(engine, f"ps-{label}", prefix, n)
    progress(
        f"(c) {database}: seeding the {label} board: {n:,} signals, about {events:,} events, then one catch-up"
    )
    return seed_busy(
        engine, f"ps-{label}", prefix, n, events, on_batch=lambda k: progress(f"     {k:,} signals")
    )


def _turn(labels: list[str], i: int) -> list[str]:
    """Alternate the order, so that neither board always goes first."""
    return labels if i % 2 == 0 else list(reversed(labels))


def _what_the_claim_read(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """What the cold claims read, from bench/cold.py: the same in every run unless something is off."""
    return {
        "claim_statements": max(r["statements"] for r in runs),
        "claim_statements_all": [r["statements"] for r in runs],
        "claim_sql": runs[-1]["sql"],
        "signals_loaded": max(r["signals_loaded"] for r in runs),
        "events_replayed": max(r["events_replayed"] for r in runs),
    }


def _board_figures(engine: Engine, board: str) -> dict[str, Any]:
    """The board as it stands: its stream's events (its version), all its events in the log (its
    entries' streams too), and its rows in the read model (signals, entries)."""
    own = or_(EVENTS.c.stream_id == board, EVENTS.c.stream_id.startswith(entry_stream_id(board, "")))
    with engine.connect() as conn:
        version = conn.scalar(select(func.max(EVENTS.c.version)).where(EVENTS.c.stream_id == board))
        logged = conn.scalar(select(func.count()).select_from(EVENTS).where(own))
        rows = conn.scalar(select(func.count()).select_from(SIGNALS).where(SIGNALS.c.blackboard_id == board))
        entries = conn.scalar(
            select(func.count()).select_from(ENTRIES).where(ENTRIES.c.blackboard_id == board)
        )
    return {
        "board_version": version,
        "board_log_events": logged,
        "board_signal_rows": rows,
        "board_entry_rows": entries,
    }


def _read_model_live(container: Any) -> bool:
    """Whether the read model has folded the whole log (else commands decide on the event log)."""
    return bool(container.read_model().position() == container.event_store().last_position())
