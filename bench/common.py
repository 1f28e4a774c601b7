"""Shared pieces of the benchmarks: sizes, the wiring of a service on SQLite, timing and tables."""

from __future__ import annotations

import contextlib
import os
import platform
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from blackboard.application.commands import PostSignal
from blackboard.application.dispatcher import EventDispatcher
from blackboard.application.service import BlackboardService
from blackboard.domain.capabilities import AgentCapability, AgentProfile
from blackboard.infrastructure.clock import RandomSignalIds, SystemClock
from blackboard.infrastructure.memory.agents import FixedAgentRegistry
from blackboard.infrastructure.persistence.engine import StoreSettings, make_engine
from blackboard.infrastructure.persistence.event_store import SqlAlchemyEventStore
from blackboard.infrastructure.persistence.read_model import SqlSignalReadModel
from blackboard.infrastructure.persistence.schema import ensure_schema
from blackboard.infrastructure.persistence.snapshots import SqlSnapshotStore

AGENT = AgentProfile(agent_id="bench-researcher", capabilities=(AgentCapability(type="RESEARCH", score=0.9),))

# name -> (full, small); each can be overridden by its own environment variable.
SIZES: dict[str, tuple[int, int]] = {
    "BENCH_N": (1000, 200),  # (a)/(b): signals posted, claimed and completed (3 commands each)
    "BENCH_ES_DEFAULTS_N": (200, 50),  # (b): signals for eventsourcing with its defaults (it replays: O(N^2))
    "BENCH_SMALL_BOARD": (10, 10),  # (c): signals on the small board
    "BENCH_LARGE_BOARD": (100_000, 10_000),  # (c): signals on the large board
    "BENCH_REPS": (200, 50),  # (c): claim+complete repetitions per board
    "BENCH_REBUILD_EVENTS": (200_000, 20_000),  # (d): events replayed by the rebuild
    "BENCH_LOCK_PROCS": (4, 4),  # (e): concurrent writer processes
    "BENCH_LOCK_APPENDS": (200, 50),  # (e): appends per process
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
    sizes = {name: int(os.environ.get(name, pair[0] if scale == "full" else pair[1])) for name, pair in SIZES.items()}
    sections = tuple(s.strip() for s in os.environ.get("BENCH_SECTIONS", "a,b,c,d,e").split(",") if s.strip())
    out = Path(os.environ.get("BENCH_OUT", "bench-results/persistence.json"))
    return Config(scale, sizes, sections, out)


def machine() -> dict[str, Any]:
    from importlib.metadata import version

    def ver(dist: str) -> str | None:
        try:
            return version(dist)
        except Exception:
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


def sqlite_engine(path: Path, synchronous: str = "FULL") -> Engine:
    engine = make_engine(StoreSettings(url=f"sqlite:///{path}", synchronous=synchronous))
    ensure_schema(engine)
    return engine


def build_service(engine: Engine) -> BlackboardService:
    """Wired like tests/fakes.Board, but on the SQLAlchemy adapters, real time and random ids."""
    return BlackboardService(
        SqlAlchemyEventStore(engine),
        SqlSignalReadModel(engine),
        FixedAgentRegistry([AGENT]),
        EventDispatcher(),
        SystemClock(),
        RandomSignalIds(),
        snapshots=SqlSnapshotStore(engine),
    )


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


def percentile(samples: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    ordered = sorted(samples)
    rank = max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


def summary_ms(samples: Sequence[float]) -> dict[str, float]:
    return {
        "median_ms": round(statistics.median(samples) * 1000, 3),
        "p95_ms": round(percentile(samples, 95) * 1000, 3),
        "min_ms": round(min(samples) * 1000, 3),
        "max_ms": round(max(samples) * 1000, 3),
        "n": len(samples),
    }


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def table(title: str, headers: Sequence[str], rows: Sequence[Sequence[Any]], note: str | None = None) -> str:
    cells = [[_fmt(c) for c in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]

    def line(values: Sequence[str]) -> str:
        return "  ".join(v.ljust(w) if i == 0 else v.rjust(w) for i, (v, w) in enumerate(zip(values, widths)))

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


# ------------------------------------------------------------------ worker processes of a run
STOP_GRACE_S = 10.0  # after SIGTERM, before SIGKILL


def die_with_parent() -> None:
    """In the child before exec: the kernel sends SIGTERM if the benchmark process dies first."""
    import ctypes
    import signal

    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def stop_processes(running: Sequence[Any]) -> None:
    """SIGTERM each `.process`, SIGKILL what is left after STOP_GRACE_S, reap all; marks `.killed`."""
    import signal
    import subprocess

    for item in running:
        if item.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                item.process.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + STOP_GRACE_S
    for item in running:
        try:
            item.process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            item.process.kill()
            item.process.wait(timeout=10)
            item.killed = True
