"""Shared pieces of the benchmarks: sizes, the application built through its container, timing and tables."""

from __future__ import annotations

import os
import platform
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine

from bench.stats import percentile, summary_ms
from blackboard.application.commands import PostSignal
from blackboard.domain.capabilities import AgentCapability, AgentProfile

if TYPE_CHECKING:
    from blackboard.infrastructure.composition.container import Container

__all__ = ["percentile", "summary_ms"]  # re-exported: sections import them from here

AGENT = AgentProfile(agent_id="bench-researcher", capabilities=(AgentCapability(type="RESEARCH", score=0.9),))

SECTIONS = (
    "a",
    "b",
    "c",
    "d",
    "e",
    "f",
    "g",
    "wake",
    "k",
    "l",
    "m",
    "t",
    "q",
    "x",
    "s",
    "p",
    "r",
    "h",
    "z",
    "y",
    "w",
    "v",
    "i",
    "o",
    "j",
    "u",
    "n",
    "stalls",
    "resume",
    "rate",
    "web",
    "savers",
)  # all of them run by default; BENCH_SECTIONS picks some

# name -> (full, small); each can be overridden by its own environment variable.
SIZES: dict[str, tuple[int, int]] = {
    "BENCH_N": (1000, 200),  # (a)/(b): signals posted, claimed and completed (3 commands each)
    "BENCH_ES_DEFAULTS_N": (200, 50),  # (b): signals for eventsourcing with its defaults (it replays: O(N^2))
    "BENCH_SMALL_BOARD": (10, 10),  # (c): signals on the small board
    "BENCH_LARGE_BOARD": (100_000, 10_000),  # (c): signals on the large board
    "BENCH_LARGE_EVENTS": (1_000_000, 100_000),  # (c): events on the large board (its work, its entries)
    "BENCH_REPS": (200, 50),  # (c): claim+complete repetitions per board
    "BENCH_COLD_REPS": (5, 3),  # (c): fresh processes per board for the cold command
    "BENCH_REBUILD_EVENTS": (200_000, 20_000),  # (d): events replayed by the rebuild
    "BENCH_LOCK_PROCS": (4, 4),  # (e): concurrent writer processes
    "BENCH_LOCK_APPENDS": (200, 50),  # (e): appends per process
    "BENCH_LOG_EVENTS": (200_000, 20_000),  # (l): events in the log that `events` and `status` read
    "BENCH_STATUS_REPS": (3, 3),  # (l): fresh `status` processes
    "BENCH_API_POSTS": (300, 100),  # (m): posts through the Python API
    "BENCH_API_CLI_POSTS": (15, 5),  # (m): `blackboard post` processes, taking turns with the API's posts
    "BENCH_MATCH_AGENTS": (1000, 1000),  # (t): agent files in the large folder (the target is for 1,000)
    "BENCH_MATCH_REPS": (50, 20),  # (t): signals matched per case, each with its own text
    "BENCH_TRACES_SIGNALS": (500, 100),  # (o): signals posted, claimed and completed, traced and not
    "BENCH_TRACES_PROCESSES": (10, 4),  # (o): `blackboard post` processes, traced and not
    "BENCH_LIMITS_SIGNALS": (1000, 200),  # (z): claims timed on each store (with limits, without)
    "BENCH_LIMITS_RUNS": (200, 50),  # (z): runs recorded on each board before (a budget totals them)
    "BENCH_TRANSFER_EVENTS": (50_000, 5_000),  # (y): the board exported and imported (and 10x as many)
    "BENCH_ASYNC_ROUNDS": (30, 10),  # (w): waits and calls per kind, AsyncBlackboard and Blackboard in turn
    "BENCH_ASYNC_WAITS": (200, 50),  # (w): waits at once on one AsyncBlackboard
    "BENCH_SEARCH_ENTRIES": (100_000, 10_000),  # (i): entries searched, on SQLite and on PostgreSQL
    "BENCH_SEARCH_QUERIES": (200, 50),  # (i): searches per kind of query
    "BENCH_SEARCH_ROUNDS": (5, 5),  # (i): rounds, the application's search and the bare query taking turns
    "BENCH_STORE_ITEMS": (3_000, 1_000),  # (v): items in the one namespace of each LangGraph store
    "BENCH_STORE_REPS": (60, 20),  # (v): calls of each kind (get, put, search) timed per store and round
    "BENCH_STORE_ROUNDS": (5, 5),  # (v): rounds, the store and its peer taking turns
    "BENCH_CHECKPOINTS": (10_000, 2_000),  # (j): checkpoints on the long thread (the short one has 10)
    "BENCH_CHECKPOINT_REPS": (300, 100),  # (j): rounds of reads and a put on each thread, taking turns
    "BENCH_SAVER_ROUNDS": (7, 5),  # (savers): alternating rounds, the board's saver and LangGraph's
    "BENCH_SAVER_CALLS": (30, 15),  # (savers): calls per operation per saver in a round (median taken)
    "BENCH_STALLS": (10, 3),  # (stalls): signals whose first run stalls, each then retried
    "BENCH_STALL_TIMEOUT_S": (2, 1),  # (stalls): the agent file's stall_timeout, seconds
    "BENCH_RESUME_STEPS": (8, 4),  # (resume): steps of the run whose attempt 1 is cut off halfway
}


@dataclass(frozen=True)
class Config:
    scale: str
    sizes: dict[str, int]
    sections: tuple[str, ...]
    out: Path

    def __getitem__(self, name: str) -> int:
        return self.sizes[name]


def load_config() -> Config:
    scale = os.environ.get("BENCH_SCALE", "full").lower()
    if scale not in ("full", "small"):
        raise SystemExit(f"BENCH_SCALE must be 'full' or 'small', not {scale!r}")
    sizes = {
        name: int(os.environ.get(name, pair[0] if scale == "full" else pair[1]))
        for name, pair in SIZES.items()
    }
    sections = tuple(
        s.strip() for s in os.environ.get("BENCH_SECTIONS", ",".join(SECTIONS)).split(",") if s.strip()
    )
    unknown = set(sections) - set(SECTIONS)
    if unknown:
        raise SystemExit(
            f"BENCH_SECTIONS: unknown {', '.join(sorted(unknown))}; pick from {','.join(SECTIONS)}"
        )
    out = Path(os.environ.get("BENCH_OUT", "bench-results/persistence.json"))
    return Config(scale, sizes, sections, out)


def counts(text: str) -> list[int]:
    """A knob like "1,2,4" -> [1, 2, 4]."""
    return [int(x) for x in text.split(",") if x.strip()]


def gap_s(text: str) -> tuple[float, float]:
    """A knob like "100-200" (ms) -> (0.1, 0.2) seconds; "150" -> (0.15, 0.15)."""
    low, _, high = text.partition("-")
    return float(low) / 1000, float(high or low) / 1000


def machine() -> dict[str, Any]:
    from importlib.metadata import version

    def ver(dist: str) -> str | None:
        try:
            return version(dist)
        except Exception:  # noqa: BLE001 - not installed, or a broken install: no version to report
            return None

    return {
        "git_commit": _git("rev-parse", "--short", "HEAD"),
        "src_uncommitted_changes": bool(_git("status", "--porcelain", "--", "src")),
        "nproc": os.cpu_count(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "python": sys.version.split()[0],
        "sqlite": sqlite3.sqlite_version,
        "sqlalchemy": ver("sqlalchemy"),
        "pydantic": ver("pydantic"),
        "eventsourcing": ver("eventsourcing"),
    }


def _git(*args: str) -> str | None:
    import subprocess

    try:
        done = subprocess.run(["git", *args], capture_output=True, text=True, timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip()


# ---------------------------------------------------------------------------------------- wiring
@contextmanager
def temp_dir(label: str) -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix=f"blackboard-bench-{label}-") as d:
        yield Path(d)


def bench_container(
    url: str, *, synchronous: str = "FULL", agents_dir: Path | None = None, **flags: Any
) -> Container:
    """The application as the CLI and the worker build it: `Container` configured from one
    `BlackboardSettings` (`flags` by its field names, e.g. post_timeout=86400; validated as it is
    built). The caller's BLACKBOARD_* environment is not read. Without `agents_dir` the agent registry is
    AGENT alone, in memory (a folder is scanned on every lookup, which the command timings should not include)."""
    from dependency_injector import providers

    from blackboard.infrastructure.composition.container import Container
    from blackboard.infrastructure.composition.settings import BlackboardSettings

    given = {"db": url, "sqlite_synchronous": synchronous, **flags}
    if agents_dir is not None:
        given["agents_dir"] = str(agents_dir)
    container = Container(config=BlackboardSettings(**given))
    if agents_dir is None:
        from blackboard.infrastructure.memory.agents import FixedAgentRegistry

        container.agent_registry.override(providers.Object(FixedAgentRegistry([AGENT])))
    return container


@contextmanager
def wired(url: str, **kwargs: Any) -> Iterator[Container]:
    """bench_container, its engine disposed on exit."""
    container = bench_container(url, **kwargs)
    try:
        yield container
    finally:
        container.engine().dispose()


def sqlite_engine(path: Path, synchronous: str = "FULL") -> Engine:
    """The engine the container opens on a SQLite file (schema created), for sections that need no service."""
    engine: Engine = bench_container(f"sqlite:///{path}", synchronous=synchronous).engine()
    return engine


def post_command(board: str, i: int) -> PostSignal:
    return PostSignal(
        signal_type="RESEARCH",
        ps_id=board,
        entry_id=f"e-{i}",
        topic=f"benchmark topic {i}",
        prompt="find out what is known about this",
    )


# ------------------------------------------------------------------------------------- measuring
class Timer:
    def __init__(self) -> None:
        self.seconds = 0.0

    def __enter__(self) -> Timer:
        self._start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self._start


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def table(title: str, headers: Sequence[str], rows: Sequence[Sequence[Any]], note: str | None = None) -> str:
    cells = [[_fmt(c) for c in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]

    def line(values: Sequence[str]) -> str:
        return "  ".join(
            v.ljust(w) if i == 0 else v.rjust(w) for i, (v, w) in enumerate(zip(values, widths, strict=False))
        )

    out = [f"\n== {title}", line(headers), line(["-" * w for w in widths])]
    out += [line(r) for r in cells]
    if note:
        out.append(note)
    return "\n".join(out)


def _fmt(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "NO"
    if isinstance(value, float):
        if value >= 100:
            return f"{value:,.0f}"
        if value >= 10:
            return f"{value:.1f}"
        return f"{value:.2f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def say(text: str) -> None:
    print(text, flush=True)


def progress(text: str) -> None:
    print(f"   .. {text}", file=sys.stderr, flush=True)


def started_workers(procs: Sequence[subprocess.Popen[str]], timeout: float) -> list[subprocess.Popen[str]]:
    """The worker processes, once each has said it started (within `timeout` seconds; else all are killed and
    RuntimeError says which exit); their logs drained on threads of their own (a full pipe would stall them)."""
    started = []
    for proc in procs:
        up = threading.Event()
        threading.Thread(target=_drain, args=(proc, up), daemon=True).start()
        started.append((proc, up))
    for proc, up in started:
        if not up.wait(timeout) or proc.poll() is not None:
            for other, _ in started:
                other.kill()
            raise RuntimeError(f"a worker did not start (exit {proc.poll()})")
    return list(procs)


def _drain(proc: subprocess.Popen[str], up: threading.Event) -> None:
    assert proc.stderr is not None
    for line in proc.stderr:
        if " started " in line:
            up.set()
    up.set()


@contextmanager
def database_stores(
    where: Path, pg_url: str | None, section: str
) -> Iterator[dict[str, Callable[[str], str]]]:
    """The databases a section runs on, each a function from a name to a fresh database's URL: a SQLite file
    under `where`, and a new PostgreSQL database at `pg_url` (dropped at the end) when one is given and its
    server answers; else SQLite alone, and a line on stderr saying why."""
    stores: dict[str, Callable[[str], str]] = {"sqlite": lambda name: f"sqlite:///{where / name}.db"}
    if not pg_url:
        yield stores
        return
    from bench.postgres.databases import Databases

    try:
        dbs = Databases(pg_url)
        dbs.server_version()
    except Exception as exc:  # noqa: BLE001 - no server: SQLite's figures alone, and why
        print(f"   .. {section}: PostgreSQL skipped: {type(exc).__name__}: {exc}", file=sys.stderr)
        yield stores
        return
    try:
        yield {**stores, "postgresql": lambda name: dbs.sqlalchemy_url(dbs.create(name))}
    finally:
        dbs.close()
