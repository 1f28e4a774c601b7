"""(d) Replaying the whole log into the read model (`Projector.rebuild(resume=False)`), the normal path and
the fast one side by side in one run, on SQLite and on PostgreSQL.

About BENCH_REBUILD_EVENTS events over 4 boards (bench/seeding.py `seed_mix`: every signal posted, 80%
claimed, 70% completed, interleaved as on a busy board), appended without their rows. Then, taking turns
BENCH_REBUILD_ROUNDS times on the same log: *before*, the application's `Projector` over the event store
and the read model's `apply` (events decoded into pydantic models from SQLAlchemy rows, rows written
through SQLAlchemy Core: what every rebuild ran until issue 25); *after*, the projector the container
builds (`ReplayingProjector`: rows read on the driver's cursor, events decoded by `codec.stored_event`,
rows written through the driver; persistence/replay.py). Each rebuild is checked (the count per status, the position
at the log's end), and every table the fold writes is compared, row for row, with the normal path's.
Each rebuild's CPU time (`time.process_time`, this process: on PostgreSQL the server's share is not in it)
is kept beside its wall time: on a shared machine it moves less than the wall time.

In each round, a *decode-only read* of the same log takes its turn too: the pages read as the fast
rebuild reads them (`replay.read_page`) and decoded into the domain's events by the same decoder
(`replay.events`), nothing folded or written. Issue 35's target is the fast rebuild at 0.5x its events/s
or more (the best of each).
"""

from __future__ import annotations

import os
import statistics
import time
from typing import Any

from sqlalchemy import Engine, func, select, text

from bench.common import Config, Timer, progress, temp_dir, wired
from bench.seeding import seed_mix
from blackboard.infrastructure.persistence.tables import SIGNALS

PAGE = 5000  # events per page, as the container's projector had them before (it has 20,000 now)
TABLES = ("blackboard_signals", "signal_capabilities", "signal_dependencies", "signal_usage")


def _tables(engine: Engine) -> dict[str, list[tuple[Any, ...]]]:
    with engine.connect() as conn:
        return {
            t: sorted(map(tuple, conn.execute(text(f"SELECT * FROM {t}")).all()), key=repr) for t in TABLES
        }


def _by_status(engine: Engine) -> dict[str, int]:
    with engine.connect() as conn:
        return dict(conn.execute(select(SIGNALS.c.status, func.count()).group_by(SIGNALS.c.status)).all())  # type: ignore[arg-type]


def _decode_only(engine: Engine, page: int) -> int:
    """The log read and decoded page by page as the fast rebuild does it, nothing folded; the events read."""
    from blackboard.infrastructure.persistence import replay

    read, after = 0, 0
    with engine.connect() as conn, replay.collector_paused():
        while rows := replay.read_page(conn, after, page):
            replay.events(rows)
            after, read = rows[-1][0], read + len(rows)
    return read


def measure(url: str, total: int, rounds: int, label: str) -> dict[str, Any]:
    from blackboard.application.projection import Projector

    with wired(url, synchronous="FULL") as container:
        engine = container.engine()
        progress(
            f"(d) {label}: seeding about {total:,} events (posts, claims, completions on 4 boards), without rows"
        )
        with Timer() as t_seed:
            counts = seed_mix(engine, total)
        events = sum(counts.values())
        expected = {
            "POSTED": counts["AgentSignalPosted"] - counts["AgentSignalClaimed"],
            "CLAIMED": counts["AgentSignalClaimed"] - counts["AgentSignalCompleted"],
            "COMPLETED": counts["AgentSignalCompleted"],
        }
        store, read_model = container.event_store(), container.read_model()
        paths = {
            "before": Projector(store, read_model, page_size=PAGE),
            "after": container.projector(),
        }
        seconds: dict[str, list[float]] = {name: [] for name in paths}
        cpu: dict[str, list[float]] = {
            name: [] for name in paths
        }  # this process's (on PostgreSQL: not the server's)
        correct, same, reference = True, True, None
        page = getattr(paths["after"], "_page_size", PAGE)
        decode_only: list[float] = []
        for r in range(rounds):
            for name, projector in paths.items():
                progress(f"(d) {label}: rebuild {r + 1}/{rounds}, {name}")
                cpu_start = time.process_time()
                with Timer() as t:
                    folded = projector.rebuild(resume=False, progress=None)
                cpu[name].append(time.process_time() - cpu_start)
                seconds[name].append(t.seconds)
                correct = correct and (
                    folded == events
                    and _by_status(engine) == expected
                    and read_model.position() == store.last_position()
                )
                tables = _tables(engine)
                reference = reference or tables
                same = same and tables == reference
            progress(f"(d) {label}: decode-only read {r + 1}/{rounds}")
            with Timer() as t:
                correct = correct and _decode_only(engine, page) == events
            decode_only.append(t.seconds)
        kind = type(paths["after"]).__name__
    best = {name: min(s) for name, s in seconds.items()}
    rate = {name: round(events / best[name], 1) for name in paths}
    return {
        "database": label,
        "events": events,
        "events_by_type": counts,
        "seed_s": round(t_seed.seconds, 2),
        "rounds": rounds,
        "seconds": {name: [round(x, 3) for x in s] for name, s in seconds.items()},
        "median_s": {name: round(statistics.median(s), 3) for name, s in seconds.items()},
        "events_per_second": rate,  # the best round of each
        # CPU of this process per event, µs, the least of each path's rounds: what a loaded machine moves less
        "cpu_us_per_event": {name: round(min(c) / events * 1e6, 1) for name, c in cpu.items()},
        "ratio_after_over_before": round(rate["after"] / rate["before"], 2),
        # the decode-only read (pages read and decoded as the fast rebuild does, nothing folded), best round
        "decode_only_events_per_second": round(events / min(decode_only), 1),
        "ratio_after_over_decode_only": round(rate["after"] / (events / min(decode_only)), 2),
        "page_size": {"before": PAGE, "after": getattr(paths["after"], "_page_size", None)},
        "after_projector": kind,
        "read_model_correct": correct,
        "same_tables_both_paths": same,
    }


def run(config: Config) -> dict[str, Any]:
    total = config["BENCH_REBUILD_EVENTS"]
    rounds = int(os.environ.get("BENCH_REBUILD_ROUNDS", "2"))
    result: dict[str, Any] = {"load_average_at_start": os.getloadavg()}
    with temp_dir("rebuild") as d:
        result["sqlite"] = measure(f"sqlite:///{d / 'blackboard.db'}", total, rounds, "sqlite")
    from bench.postgres.databases import Databases
    from bench.postgres.section import sizes as pg_sizes

    dbs = Databases(pg_sizes(config)["BENCH_PG_URL"])
    try:
        dbs.server_version()
    except Exception as exc:  # noqa: BLE001 - no server: the SQLite figures still stand
        result["postgresql"] = {"skipped": f"no PostgreSQL: {type(exc).__name__}"}
    else:
        result["postgresql"] = measure(dbs.sqlalchemy_url(dbs.create("rebuild")), total, rounds, "postgresql")
    finally:
        dbs.close()
    result["load_average_at_end"] = os.getloadavg()
    return result
