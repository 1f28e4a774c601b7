"""(x) Control of the work (issue 24's speed figures), on SQLite and on PostgreSQL, real worker processes.

cancel: one `blackboard worker --agent bench-sleeper` process whose handler (a `command`) writes its pid
and sleeps for ten minutes. A signal is posted; once its handler runs (its pid file appears) and a
random 50-300 ms more have passed, this process cancels it through the application's service (what
`blackboard cancel` calls, without the CLI's start-up) and times from just before that call until the
handler's process has ended (gone from /proc, or a zombie its worker has yet to reap). One signal at a
time, BENCH_CANCELS of them.

later: one idle `blackboard worker --agent bench-noop` (handler `true`) run through bench/counted.py,
which counts every SQL statement the worker makes, by kind. First a window of nothing to do (the
worker as it idled before `--not-before` existed, plus one `MIN(not_before)` per idle round, counted
apart), then the same window while a signal waits for its time. The worker runs with a claim timeout of
3 s, so that it sweeps (an idle round) every second, not every 10 s: each window then holds several
rounds, and the two windows compare rounds with rounds. The goal is on the rounds (the worker's wake-ups:
one `MIN(not_before)` each): no more of them while a signal waits. A round's statements grow with an open
signal on the board (the sweep then reads the board's rows and who is alive), as they did before.
Then BENCH_LATER signals are posted at once, each due BENCH_LATER_AHEAD_S seconds ahead plus 300-600 ms
after the one before, and nothing else happens: from the log, each claim's occurred_at minus the signal's not_before.
"""

from __future__ import annotations

import json
import os
import random
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.common import Config, progress, temp_dir, wired
from bench.drain import by_type
from bench.fleet import BIN, POST_TIMEOUT_S, agents_dir, fleet, worker_env
from bench.stats import dist_ms

BOARD = "ps-control"
SLEEPER = "bench-sleeper"
SLEEPER_FILE = """---
name: bench-sleeper
description: Writes its pid, then sleeps ten minutes (section x of the benchmarks: cancels).
capabilities: {RESEARCH: 0.9}
command: 'P="pids/$BLACKBOARD_SIGNAL_ID"; echo $$ > "$P.tmp" && mv "$P.tmp" "$P.pid" && exec sleep 600'
timeout: 900
---
Sleeps until it is stopped.
"""

# name -> (full, small); each can be overridden by its own environment variable.
SIZES: dict[str, tuple[Any, Any]] = {
    "BENCH_CANCELS": (40, 12),  # cancel: signals cancelled while their handler runs, per database
    "BENCH_LATER": (30, 10),  # later: signals posted for later, per database
    "BENCH_LATER_AHEAD_S": (3.0, 2.0),  # later: how far ahead the first one is due
    "BENCH_IDLE_WINDOW_S": (6.0, 3.0),  # later: each window over which an idle worker's statements count
    "BENCH_CONTROL_DATABASES": ("sqlite,postgresql", "sqlite,postgresql"),
}
TARGET_CANCEL_P99_MS = {"sqlite": 2000.0, "postgresql": 500.0}
TARGET_LATER_P99_MS = 1000.0
NEXT_DUE = "next due (not-before)"


def sizes(config: Config) -> dict[str, Any]:
    full = config.scale == "full"
    return {name: os.environ.get(name, str(pair[0] if full else pair[1])) for name, pair in SIZES.items()}


def sleeper_dir(root: Path) -> Path:
    agents = root / "agents-sleeper"
    if not agents.exists():
        (agents / "pids").mkdir(parents=True)
        (agents / f"{SLEEPER}.md").write_text(SLEEPER_FILE)
    return agents


def ended(pid: int) -> bool:
    """The process is gone, or a zombie (it ended; its parent has yet to reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


def _wait_for(path: Path, running: Any, timeout: float = 60.0) -> int:
    deadline = time.monotonic() + timeout
    while not path.exists():
        running.check_alive()
        if time.monotonic() > deadline:
            raise TimeoutError(f"no handler wrote {path.name} after {timeout:g}s")
        time.sleep(0.002)
    return int(path.read_text().strip())


# ------------------------------------------------------------------------------------------ cancel
def cancel(url: str, root: Path, n: int, label: str) -> dict[str, Any]:
    from blackboard.application.commands import CancelSignal, GetSignalById, PostSignal
    from blackboard.domain.signals import SignalStatus

    agents = sleeper_dir(root)
    rng = random.Random(n)
    to_end, calls, statuses = [], [], []
    load = os.getloadavg()[0]
    with (
        wired(url, agents_dir=agents, post_timeout=POST_TIMEOUT_S) as container,
        fleet(root, f"cancel-{label}", worker_env(url, agents)) as running,
    ):
        service, queries = container.service(), container.queries()
        running.start([str(BIN / "blackboard"), "worker", "--agent", SLEEPER, "--grace", "1"], 1)
        running.wait_started()
        time.sleep(0.3)
        for i in range(n):
            sid = service.post_signal(
                PostSignal(signal_type="RESEARCH", ps_id=BOARD, entry_id=f"e-{i}", topic=f"sleep {i}")
            ).signal_id
            pid = _wait_for(agents / "pids" / f"{sid}.pid", running)
            time.sleep(rng.uniform(0.05, 0.3))  # at any phase of the worker's looks at the log
            if ended(pid):
                raise RuntimeError(f"{label}: the handler of {sid} ended before its cancel")
            started = time.perf_counter()
            service.cancel_signal(CancelSignal(signal_id=sid, cancelled_by="bench", reason="bench"))
            calls.append(time.perf_counter() - started)
            deadline = started + 30
            while not ended(pid):
                if time.perf_counter() > deadline:
                    raise TimeoutError(f"{label}: the handler of {sid} still runs 30 s after its cancel")
                time.sleep(0.001)
            to_end.append(time.perf_counter() - started)
            statuses.append(queries.get_signal(GetSignalById(signal_id=sid)).status)
    return {
        "database": label,
        "cancels": n,
        "cancel_to_handler_end": dist_ms(to_end),
        "cancel_call": dist_ms(calls),
        "all_cancelled": all(s is SignalStatus.CANCELLED for s in statuses),
        "load_average_1min": [round(load, 2), round(os.getloadavg()[0], 2)],
        "processes": running.results,
    }


# ------------------------------------------------------------------------------------------- later
def _counts(path: Path) -> dict[str, int]:
    return dict(json.loads(path.read_text())["counts"])


def _window(path: Path, seconds: float) -> dict[str, float]:
    """Statements per second, by kind, over `seconds` of the worker's life from now."""
    before = _counts(path)
    time.sleep(seconds)
    after = _counts(path)
    rates = {k: round((after.get(k, 0) - before.get(k, 0)) / seconds, 2) for k in sorted(after)}
    rates["all"] = round(sum(v for k, v in rates.items()), 2)
    return rates


def later(url: str, root: Path, n: int, ahead: float, window: float, label: str) -> dict[str, Any]:
    from blackboard.application.commands import PostSignal

    agents = agents_dir(root, "command")
    counts_file = root / f"counts-{label}.json"
    rng = random.Random(n)
    load = os.getloadavg()[0]

    def post(i: int, due: datetime) -> str:
        return service.post_signal(
            PostSignal(
                signal_type="RESEARCH", ps_id=BOARD, entry_id=f"e-{i}", topic=f"later {i}", not_before=due
            )
        ).signal_id

    with (
        wired(url, agents_dir=agents, post_timeout=POST_TIMEOUT_S) as container,
        fleet(root, f"later-{label}", worker_env(url, agents, {"BLACKBOARD_CLAIM_TIMEOUT": "3"})) as running,
    ):
        service = container.service()
        command = ["-m", "bench.counted", str(counts_file), "worker", "--agent", "bench-noop", "--grace", "5"]
        running.start([str(BIN / "python"), *command], 1)
        running.wait_started()
        time.sleep(0.5)
        idle = _window(counts_file, window)
        waiting_id = post(0, datetime.now(UTC) + timedelta(seconds=window + 2))
        time.sleep(0.5)
        waiting = _window(counts_file, window)
        due = datetime.now(UTC) + timedelta(seconds=ahead + 2)  # after the first one
        ids = [waiting_id]
        for i in range(1, n + 1):
            ids.append(post(i, due))
            due += timedelta(seconds=rng.uniform(0.3, 0.6))
        deadline = time.monotonic() + (due - datetime.now(UTC)).total_seconds() + 30
        store = container.event_store()
        while True:
            records = store.read_all()
            claims = {r.event.signal_id: r for r in by_type(records, "AgentSignalClaimed")}
            if all(sid in claims for sid in ids):
                break
            running.check_alive()
            if time.monotonic() > deadline:
                raise TimeoutError(f"{label}: {len(claims)}/{len(ids)} signals posted for later claimed")
            time.sleep(0.25)
    posts = {r.event.signal_id: r.event for r in by_type(records, "AgentSignalPosted")}
    late = [(claims[sid].event.occurred_at - posts[sid].not_before).total_seconds() for sid in ids]
    early = [x for x in late if x < 0]
    before = {k: v for k, v in idle.items() if k not in (NEXT_DUE, "all")}
    return {
        "database": label,
        "signals": len(ids),
        "due_to_claim": dist_ms(late),
        "claimed_early": len(early),
        "idle_statements_per_s": {
            "before (idle, without the next-due query)": {**before, "all": round(sum(before.values()), 2)},
            "now, nothing waits": idle,
            "now, a signal waits for its time": waiting,
        },
        "load_average_1min": [round(load, 2), round(os.getloadavg()[0], 2)],
        "processes": running.results,
    }


# --------------------------------------------------------------------------------------------- run
def run(config: Config) -> dict[str, Any]:
    s = sizes(config)
    databases = [x.strip() for x in s["BENCH_CONTROL_DATABASES"].split(",") if x.strip()]
    n_cancel, n_later = int(s["BENCH_CANCELS"]), int(s["BENCH_LATER"])
    ahead, window = float(s["BENCH_LATER_AHEAD_S"]), float(s["BENCH_IDLE_WINDOW_S"])
    result: dict[str, Any] = {"sizes": s, "cancel": {}, "later": {}, "skipped": {}}
    with temp_dir("control") as root:
        for database in databases:
            if database == "sqlite":
                urls = {what: f"sqlite:///{root / f'{what}.db'}" for what in ("cancel", "later")}
                _measure(result, database, urls, root, n_cancel, n_later, ahead, window)
                continue
            from bench.postgres.databases import Databases
            from bench.postgres.section import sizes as pg_sizes

            dbs = Databases(pg_sizes(config)["BENCH_PG_URL"])
            try:
                dbs.server_version()
            except Exception as exc:  # noqa: BLE001 - no server: the SQLite figures still stand
                dbs.close()
                result["skipped"][database] = f"no PostgreSQL: {type(exc).__name__}"
                continue
            try:
                urls = {what: dbs.sqlalchemy_url(dbs.create(f"ctl_{what}")) for what in ("cancel", "later")}
                _measure(result, database, urls, root, n_cancel, n_later, ahead, window)
            finally:
                dbs.close()
    result["pass"] = {
        **{
            f"cancel/{db}": r["cancel_to_handler_end"]["p99_ms"] <= TARGET_CANCEL_P99_MS[db]
            for db, r in result["cancel"].items()
        },
        **{f"later/{db}": _later_ok(r) for db, r in result["later"].items()},
    }
    return result


def _later_ok(r: dict[str, Any]) -> bool:
    idle = r["idle_statements_per_s"]
    rounds = idle["now, nothing waits"].get(NEXT_DUE, 0.0)  # one next-due query per idle round
    return (
        r["due_to_claim"]["p99_ms"] <= TARGET_LATER_P99_MS
        and r["claimed_early"] == 0
        and idle["now, a signal waits for its time"].get(NEXT_DUE, 0.0) <= 1.1 * rounds + 0.2
    )


def _measure(
    result: dict[str, Any],
    database: str,
    urls: dict[str, str],
    root: Path,
    n_cancel: int,
    n_later: int,
    ahead: float,
    window: float,
) -> None:
    progress(f"(x) {database}: {n_cancel} cancels of a running handler, one at a time")
    result["cancel"][database] = cancel(urls["cancel"], root, n_cancel, database)
    progress(f"(x) {database}: {n_later} signals posted for later, and an idle worker's statements")
    result["later"][database] = later(urls["later"], root, n_later, ahead, window, database)
