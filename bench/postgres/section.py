"""Section (g), the run: sizes, the order of the steps, the ratios; skipped when no server answers.

Every database is created fresh and dropped WITH (FORCE) at the end, whatever happens; SIGTERM and
SIGHUP become an exception while the section runs, so that the clean-up also happens when the
benchmark is stopped (a background job started by a non-interactive shell ignores SIGINT).
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from bench.postgres.blackboard_drain import BlackboardSystem, empty_template, wakeup
from bench.postgres.databases import Databases, analyze, server_version_or_skip
from bench.postgres.pgqueuer_peer import PgQueuerSystem
from bench.postgres.procrastinate_peer import ProcrastinateSystem
from bench.postgres.steps import claim_path, claim_path_of, handler_cost, open_signals_probe
from bench.postgres.systems import System, drain

if TYPE_CHECKING:
    from bench.common import Config

T = TypeVar("T")
SYSTEMS = ("blackboard", "pgqueuer", "procrastinate")
TARGET_VS_PGQUEUER = 0.75
TARGET_VS_PROCRASTINATE = 3.0
TARGET_WAKEUP_P50_MS = 3.0
TARGET_WAKEUP_P99_MS = 10.0

# name -> (full, small); each can be overridden by its own environment variable.
SIZES: dict[str, tuple[Any, Any]] = {
    "BENCH_PG_URL": ("postgresql+psycopg://postgres@127.0.0.1:5432/test",) * 2,  # where CREATE DATABASE runs
    "BENCH_PG_JOBS": (5000, 1000),  # drain: pgqueuer / procrastinate jobs in the backlog
    "BENCH_PG_SIGNALS": (5000, 1000),  # drain: blackboard signals in the backlog
    "BENCH_PG_HANDLER": (
        "entrypoint",
        "entrypoint",
    ),  # drain: the no-op agent's handler, entrypoint or command
    "BENCH_PG_CONCURRENCY": (
        128,
        128,
    ),  # drain: each blackboard worker's --concurrency (pgqueuer: no cap, batches of 10)
    "BENCH_PG_WORKERS": ("1,4", "1,4"),  # drain: worker processes per run
    "BENCH_PG_BOARDS": ("1,4", "1,4"),  # drain: blackboard's backlog spread over that many boards
    # drain: a folder holding another build's `blackboard` package (e.g. main before a change); its
    # workers (`before`, `before-4boards`) drain the same backlogs, interleaved with this build's
    "BENCH_PG_BEFORE": ("", ""),
    "BENCH_PG_SYSTEMS": (",".join(SYSTEMS),) * 2,  # drain: which systems
    "BENCH_PG_WAKEUPS": (100, 30),  # wake-up: signals posted one at a time (0: skip)
    "BENCH_PG_WAKEUP_GAP_MS": ("100-200", "100-200"),  # wake-up: pause between two posts (uniform)
    "BENCH_PG_HANDLER_REPS": (200, 50),  # the handler's cost: handler calls timed in this process
    "BENCH_PG_STEP_REPS": (100, 30),  # claim path: worker rounds timed step by step in this process
    "BENCH_PG_ANALYZE": (
        1,
        1,
    ),  # 1: ANALYZE each backlog before the workers start (what autovacuum would do); 0: not
}


def sizes(config: Config) -> dict[str, Any]:
    full = config.scale == "full"
    return {name: os.environ.get(name, str(pair[0] if full else pair[1])) for name, pair in SIZES.items()}


def _versions() -> dict[str, str | None]:
    from importlib.metadata import version

    out: dict[str, str | None] = {}
    for dist in ("pgqueuer", "procrastinate", "asyncpg", "psycopg", "psycopg-pool"):
        try:
            out[dist] = version(dist)
        except Exception:  # noqa: BLE001
            out[dist] = None
    return out


class Terminated(Exception):
    """SIGTERM (or SIGHUP) while the section runs: raised so that workers are stopped and databases dropped."""


def run(config: Config) -> dict[str, Any]:
    """Section (g); SIGTERM and SIGHUP become an exception meanwhile, so the clean-up runs whatever happens."""
    return terminable(_run, config)


def terminable(fn: Callable[..., T], *args: Any) -> T:
    """`fn(*args)` with SIGTERM and SIGHUP raised as Terminated meanwhile (sections (g) and (wake))."""

    def terminate(signum: int, _frame: Any) -> None:
        raise Terminated(f"signal {signum}")

    previous = {sig: signal.signal(sig, terminate) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        return fn(*args)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _run(config: Config) -> dict[str, Any]:
    from bench.common import counts, gap_s, progress, temp_dir

    s = sizes(config)
    jobs, signals = int(s["BENCH_PG_JOBS"]), int(s["BENCH_PG_SIGNALS"])
    worker_counts = counts(s["BENCH_PG_WORKERS"])
    wanted = [x.strip() for x in s["BENCH_PG_SYSTEMS"].split(",") if x.strip()]
    wakeups, gap = int(s["BENCH_PG_WAKEUPS"]), gap_s(s["BENCH_PG_WAKEUP_GAP_MS"])
    handler, batch = s["BENCH_PG_HANDLER"], int(s["BENCH_PG_CONCURRENCY"])
    worker_args = ["--concurrency", str(batch)]
    blackboard = BlackboardSystem(handler, worker_args)
    peers: dict[str, System] = {"pgqueuer": PgQueuerSystem(), "procrastinate": ProcrastinateSystem()}
    unknown = set(wanted) - {"blackboard", *peers}
    if unknown:
        raise SystemExit(
            f"BENCH_PG_SYSTEMS: unknown {', '.join(sorted(unknown))}; pick from {', '.join(SYSTEMS)}"
        )
    before = s["BENCH_PG_BEFORE"].strip() or None
    systems: dict[str, System] = {}
    for name in wanted:
        if name != "blackboard":
            systems[name] = peers[name]
            continue
        for boards in counts(s["BENCH_PG_BOARDS"]):
            ours = blackboard if boards == 1 else BlackboardSystem(handler, worker_args, boards)
            systems[ours.name] = ours
            if before:
                theirs = BlackboardSystem(handler, worker_args, boards, before)
                systems[theirs.name] = theirs
    result: dict[str, Any] = {
        "sizes": s,
        "versions": _versions(),
        "drain": {},
        "wakeup": {},
        "load_average_at_start": os.getloadavg(),
    }
    dbs = Databases(s["BENCH_PG_URL"])
    version = server_version_or_skip(dbs, "g", s)
    if isinstance(version, dict):
        return version
    result["postgresql"] = version
    try:
        result["server_settings"] = dbs.server_settings()
        with temp_dir("postgres") as root:
            result["handler_cost"] = handler_cost(root, handler, int(s["BENCH_PG_HANDLER_REPS"]))
            templates: dict[str, str] = {}
            by_boards: dict[int, str] = {}  # one backlog per spread: a build and the one before share it
            for name, system in systems.items():
                n = signals if isinstance(system, BlackboardSystem) else jobs
                if isinstance(system, BlackboardSystem) and system.boards in by_boards:
                    templates[name] = by_boards[system.boards]
                    result.setdefault("setup", {})[name] = system.setup_note()
                    if name == "before" and int(s["BENCH_PG_STEP_REPS"]):
                        reps = min(int(s["BENCH_PG_STEP_REPS"]), n // batch - 3)
                        progress("(g) before: one worker round, step by step, in a child on that build")
                        result["claim_path_before"] = claim_path_of(
                            system.before or "", s["BENCH_PG_URL"], templates[name], handler, reps, batch
                        )
                    continue
                progress(f"(g) {name}: preparing a backlog of {n:,} {system.unit}")
                started = time.perf_counter()
                template = templates[name] = system.prepare(dbs, root, n)
                if isinstance(system, BlackboardSystem):
                    by_boards[system.boards] = template
                result.setdefault("prepare_s", {})[name] = round(time.perf_counter() - started, 2)
                if name == "blackboard":
                    result.setdefault("open_signals_query", {})["no_statistics"] = open_signals_probe(
                        dbs, template
                    )
                if int(s["BENCH_PG_ANALYZE"]):
                    result.setdefault("analyze_s", {})[name] = analyze(dbs, template)
                    if name == "blackboard":
                        result["open_signals_query"]["analyzed"] = open_signals_probe(dbs, template)
                result.setdefault("setup", {})[name] = system.setup_note()
                reps = min(
                    int(s["BENCH_PG_STEP_REPS"]), n // batch - 3
                )  # the backlog must last reps + 3 rounds
                if name == "blackboard" and reps > 0:
                    progress("(g) blackboard: one worker round, step by step, in this process")
                    result["claim_path"] = claim_path(dbs, root, template, handler, reps, batch)
                elif name == "blackboard" and int(s["BENCH_PG_STEP_REPS"]):
                    progress(
                        f"(g) blackboard: no step-by-step round ({n} signals do not last 4 rounds of {batch})"
                    )
            for k in worker_counts:  # the systems interleaved, so a change in the machine's load hits all
                for name, system in systems.items():
                    n = signals if isinstance(system, BlackboardSystem) else jobs
                    progress(f"(g) {name}: draining {n:,} {system.unit} with {k} worker process(es)")
                    r = drain(system, dbs, root, templates[name], k, n)
                    result["drain"][f"{name}/{k}"] = r
                    progress(f"(g)   {r['steady_per_s']} {system.unit}/s steady, {r['total_s']} s in all")
            if "blackboard" in wanted:
                result["blackboard_post_s"] = round(blackboard.post_seconds, 2)
            if wakeups:
                empty = empty_template(dbs)
                if before:  # the build before first, then this one, on clones of the same empty board
                    progress(f"(g) wake-up, the build before: {wakeups} signals posted one at a time")
                    result["wakeup"]["before"] = wakeup(
                        dbs, root, empty, handler, wakeups, gap, label="before", before=before
                    )
                progress(f"(g) wake-up: {wakeups} signals posted one at a time, one idle worker")
                result["wakeup"]["defaults"] = wakeup(dbs, root, empty, handler, wakeups, gap)
    finally:
        dbs.close()
        result["databases_created"] = len(dbs.created)
        result["databases_dropped"] = len(dbs.dropped)
    result["ratios"] = ratios(result["drain"], worker_counts, list(systems))
    result["load_average_at_end"] = os.getloadavg()
    return result


def ratios(
    drain_results: dict[str, Any], worker_counts: Sequence[int], names: Sequence[str] = ("blackboard",)
) -> dict[str, float]:
    """Each blackboard build's (and spread's) steady rate over each job queue's, per worker count; and
    what each system gains from its fewest workers to its most (`<name>@4/1`)."""
    out = {}
    rate = {key: (d or {}).get("steady_per_s") for key, d in drain_results.items()}
    for k in worker_counts:
        for name in names:
            if name in ("pgqueuer", "procrastinate"):
                continue
            for other in ("pgqueuer", "procrastinate"):
                ours, theirs = rate.get(f"{name}/{k}"), rate.get(f"{other}/{k}")
                if ours and theirs:
                    out[f"{name}/{other}@{k}"] = round(ours / theirs, 4)
    if len(worker_counts) > 1:
        low, high = min(worker_counts), max(worker_counts)
        for name in names:
            one, many = rate.get(f"{name}/{low}"), rate.get(f"{name}/{high}")
            if one and many:
                out[f"{name}@{high}/{low}"] = round(many / one, 4)
    return out
