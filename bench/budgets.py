"""(u) budgets under concurrency and (n) a lapsed claim's concurrency slot, on SQLite and PostgreSQL, each beside
the build before when BENCH_BUDGET_BEFORE=DIR names one (a copy of an older tree's `src` and `migrations`, run
through this interpreter with the editable install pointed at DIR, as section (s) does: only our code differs).

(u) The spend of 6 concurrent runs: 3 `blackboard worker` processes with `--concurrency 2`, one agent run by the
anthropic runner (`estimate: {tokens: 100005}`) against a local stand-in of the Messages API whose every answer
reports 100,005 tokens after ANSWER_S seconds, on a board with a 250,000-token budget; the six signals are
posted first and the three workers started at once, so all six claims can be made before the first run ends
(as the issue measured it). When no signal is CLAIMED and two or more are COMPLETED, the workers are stopped
(Ctrl-C, which lets a run started meanwhile finish) and what the board's runs recorded is summed: its ratio to
the budget (goal <= 1.1).

(n) A lapsed claim to its concurrency slot freed: an agent under a key of max 1 claims one signal and nothing
renews it (its claim timeout 1 s); a process that never sweeps then tries to claim a second signal under the key
every 5 ms. The time from the first claim's lapse to the second claim (None: not within BENCH_LAPSE_LIMIT s).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.common import database_stores, started_workers, table, temp_dir, verdict

BUDGET, RUN_TOKENS, RUNS = 250_000, 100_005, 6
GOAL = 1.1
LAPSE_S = 1.0
ANSWER_S = 6.0  # longer than three workers take to start on a loaded 2-core machine
ROOT = Path(__file__).resolve().parents[1]
WRITER = "---\nname: writer\nrunner: anthropic\nmodel: sonnet\nestimate: {tokens: 100005}\n---\nYou write.\n"
KEYED = "---\nname: keyed\ncommand: echo done\nconcurrency: {key: bench-one, max: 1}\n---\nOne at a time.\n"
# the editable install's finder pointed at an older tree, then the code in argv[1] run as a script
IN_BEFORE = (
    "import sys\n"
    "finder = next(m for n, m in list(sys.modules.items()) if n.startswith('__editable___agent_blackboard'))\n"
    "finder.MAPPING.update({k: v.replace(sys.argv[1], sys.argv[2]) for k, v in finder.MAPPING.items()})\n"
    "del sys.argv[1:3]\n"
    "code = sys.argv[1]\n"
    "del sys.argv[1]\n"
    "exec(compile(code, '<bench>', 'exec'))\n"
)
CLI = "import sys\nfrom blackboard.infrastructure.cli import main\nsys.exit(main())\n"
PROBE = """
import json, sys, time
from datetime import UTC, datetime, timedelta
from blackboard.application.commands import ClaimSignal, PostSignal
from blackboard.domain.errors import BlackboardError
from blackboard.infrastructure.composition import settings
from blackboard.infrastructure.composition.container import Container

service = Container(config=settings.load({})).service()
limit = float(sys.argv[1])
def post(entry):
    return service.post_signal(PostSignal(
        signal_type="RESEARCH", ps_id="ps-n", entry_id=entry, topic="t", target_capabilities=("keyed",)))
first, second = post("e-1"), post("e-2")
held = service.claim_signal(ClaimSignal(signal_id=first.signal_id, agent_id="keyed"))
lapse = held.claimed_at + service.settings.claim_timeout
tries = 0
while True:
    tries += 1
    try:
        service.claim_signal(ClaimSignal(signal_id=second.signal_id, agent_id="keyed"))
    except BlackboardError:
        if datetime.now(UTC) - lapse > timedelta(seconds=limit):
            print(json.dumps({"freed_after_s": None, "tries": tries}))
            break
        time.sleep(0.005)
        continue
    print(json.dumps({"freed_after_s": (datetime.now(UTC) - lapse).total_seconds(), "tries": tries}))
    break
"""


def run(
    pg_url: str | None, before: str | None, lapse_limit: float = 20.0, spend: bool = True, lapse: bool = True
) -> dict[str, Any]:
    builds = {"now": None, **({"before": str(Path(before).resolve())} if before else {})}
    report: dict[str, Any] = {
        "budget": BUDGET,
        "run_tokens": RUN_TOKENS,
        "goal": GOAL,
        "spend": {},
        "lapse": {},
    }
    with temp_dir("budgets") as where, database_stores(where, pg_url, "(u), (n)") as stores:
        for store, url_for in stores.items():
            for build, tree in builds.items():
                name = f"{store} {build}"
                if spend:
                    report["spend"][name] = _spend(where / f"u-{store}-{build}", url_for(f"u_{build}"), tree)
                if lapse:
                    report["lapse"][name] = _lapse(
                        where / f"n-{store}-{build}", url_for(f"n_{build}"), tree, lapse_limit
                    )
    now = [v for k, v in report["spend"].items() if k.endswith(" now")]
    report["pass"] = all(v["ratio"] <= GOAL for v in now)
    return report


def _argv(tree: str | None, code: str, *args: str) -> list[str]:
    if tree is None:
        return [sys.executable, "-c", code, *args]
    return [sys.executable, "-c", IN_BEFORE, str(ROOT), tree, code, *args]


def _env(url: str, agents: Path, **more: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BLACKBOARD_")}
    return {
        **env,
        "BLACKBOARD_DB": url,
        "BLACKBOARD_AGENTS_DIR": str(agents),
        "BLACKBOARD_POST_TIMEOUT": "3600",
        **more,
    }


def _cli(tree: str | None, env: dict[str, str], cwd: Path, *args: str) -> str:
    done = subprocess.run(
        _argv(tree, CLI, *args), env=env, cwd=cwd, capture_output=True, text=True, timeout=120
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"blackboard {' '.join(args)} exited {done.returncode}: {done.stderr.strip()[-500:]}"
        )
    return done.stdout


def _spend(where: Path, url: str, tree: str | None) -> dict[str, Any]:
    from tests.runners.standins import StandIn, say, slow

    (where / "agents").mkdir(parents=True)
    (where / "agents" / "writer.md").write_text(WRITER, encoding="utf-8")
    api = StandIn(lambda body: slow(ANSWER_S, say("done", input_tokens=100_000, output_tokens=5))).start()
    env = _env(url, where / "agents", ANTHROPIC_BASE_URL=api.url, ANTHROPIC_API_KEY="sk-ant-bench")
    workers: list[subprocess.Popen[str]] = []
    try:
        _cli(tree, env, where, "budget", "ps-u", "--tokens", str(BUDGET), "--by", "bench")
        for n in range(RUNS):
            _cli(tree, env, where, "post", "--type", "RESEARCH", "--ps-id", "ps-u", "--entry-id", f"e-{n}",
                 "--topic", f"part {n}", "--capability", "writer", "-q")  # fmt: skip
        started = time.perf_counter()
        workers += _workers(tree, env, where, 3)
        counts = _until(
            lambda: (c := _statuses(url)).get("CLAIMED", 0) == 0 and c.get("COMPLETED", 0) >= 2 and c
        )
        took = time.perf_counter() - started
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.send_signal(signal.SIGINT)
        for worker in workers:
            try:
                worker.wait(timeout=60)
            except subprocess.TimeoutExpired:
                worker.kill()
        api.stop()
    spent, claims = _spent(url)
    counts = _statuses(url)
    return {
        "spent_tokens": spent,
        "ratio": spent / BUDGET,
        "claims": claims,
        "completed": counts.get("COMPLETED", 0),
        "waiting": counts.get("POSTED", 0),
        "seconds": round(took, 2),
        "model_calls": len(api.model_calls),
    }


def _workers(tree: str | None, env: dict[str, str], cwd: Path, count: int) -> list[subprocess.Popen[str]]:
    """`count` workers started at once, returned once each says it started; their logs drained on threads of
    their own (a full pipe would stall them)."""
    started = []
    for _ in range(count):
        proc = subprocess.Popen(
            _argv(tree, CLI, "worker", "--agent", "writer", "--concurrency", "2"),
            env=env,
            cwd=cwd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        started.append(proc)
    return started_workers(started, 60)


def _statuses(url: str) -> dict[str, int]:
    from sqlalchemy import create_engine, text
    from sqlalchemy.pool import NullPool

    engine = create_engine(url, poolclass=NullPool)  # the build's own schema, read as it is (no migration)
    try:
        with engine.connect() as conn:
            rows = conn.execute(text("SELECT status, COUNT(*) FROM blackboard_signals GROUP BY status")).all()
    finally:
        engine.dispose()
    return {status: int(n) for status, n in rows}


def _spent(url: str) -> tuple[int, int]:
    from sqlalchemy import create_engine, text
    from sqlalchemy.pool import NullPool

    engine = create_engine(url, poolclass=NullPool)
    try:
        with engine.connect() as conn:
            spent = conn.execute(
                text("SELECT COALESCE(SUM(input_tokens + output_tokens), 0) FROM signal_usage")
            ).scalar()
            claims = conn.execute(
                text("SELECT COUNT(*) FROM events WHERE event_type = 'AgentSignalClaimed'")
            ).scalar()
    finally:
        engine.dispose()
    return int(spent or 0), int(claims or 0)


def _until(condition: Callable[[], Any], limit: float = 300.0) -> Any:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if found := condition():
            return found
        time.sleep(0.1)
    raise RuntimeError(f"not done within {limit:g}s")


def _lapse(where: Path, url: str, tree: str | None, limit: float) -> dict[str, Any]:
    (where / "agents").mkdir(parents=True)
    (where / "agents" / "keyed.md").write_text(KEYED, encoding="utf-8")
    env = _env(url, where / "agents", BLACKBOARD_CLAIM_TIMEOUT=f"{LAPSE_S:g}")
    done = subprocess.run(
        _argv(tree, PROBE, str(limit)),
        env=env,
        cwd=where,
        capture_output=True,
        text=True,
        timeout=limit + 120,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the lapse probe exited {done.returncode}: {done.stderr.strip()[-800:]}")
    found = json.loads(done.stdout.strip().splitlines()[-1])
    return {**found, "limit_s": limit}


def print_report(report: dict[str, Any], say: Callable[[str], None]) -> dict[str, Any]:
    if report["spend"]:
        say(
            table(
                f"(u) 6 runs of {RUN_TOKENS:,} tokens, 3 workers x --concurrency 2, on a {BUDGET:,}-token budget",
                ["store, build", "spent tokens", "x budget", "claims", "completed", "waiting", "s"],
                [
                    [
                        n,
                        f"{v['spent_tokens']:,}",
                        round(v["ratio"], 2),
                        v["claims"],
                        v["completed"],
                        v["waiting"],
                        v["seconds"],
                    ]
                    for n, v in report["spend"].items()
                ],
                note=f"goal: spent <= {GOAL}x the budget with this build",
            )
        )
    if report["lapse"]:
        say(
            table(
                f"(n) a lapsed claim (claim timeout {LAPSE_S:g} s) to its concurrency slot freed, no sweeper",
                ["store, build", "ms after the lapse", "claims tried", "given up after s"],
                [
                    [
                        n,
                        "never" if v["freed_after_s"] is None else round(v["freed_after_s"] * 1000, 1),
                        v["tries"],
                        v["limit_s"],
                    ]
                    for n, v in report["lapse"].items()
                ],
            )
        )
    now = [v["ratio"] for k, v in report["spend"].items() if k.endswith(" now")]
    return {
        "name": "(u) spend of 6 concurrent runs / the budget (worst store, this build)",
        "measured": round(max(now), 3) if now else None,
        "target": f"<= {GOAL}",
        "verdict": verdict(report["pass"]),
    }


if __name__ == "__main__":
    found = run(
        os.environ.get("BENCH_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"),
        os.environ.get("BENCH_BUDGET_BEFORE"),
        float(os.environ.get("BENCH_LAPSE_LIMIT", "20")),
    )
    print_report(found, print)
