"""`make soak`: workers on the example agents (agents/) for a few minutes, with random handler failures and
random SIGKILLs of workers (restarted at once), under a steady stream of posted stories (research, then
analysis, review and a decision after it). Then it drains, stops the workers and reports: operations,
errors (tracebacks or "database is locked" on any worker's stderr), stuck signals (neither ended nor
endable: must be 0), the invariants of tests/faults/invariants.py, and the memory growth of a long-lived
worker. Exits 1 if anything is stuck, an error surfaced or an invariant broke.

BLACKBOARD_SOAK_SECONDS (180), SOAK_FAIL_RATE (0.1), BLACKBOARD_SOAK_DB (a SQLite file in a temp dir)."""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from blackboard.application.commands import PostSignal
from blackboard.application.ports import SignalFilter
from blackboard.domain.signals import SignalStatus
from tests.faults.conftest import FATAL, Store
from tests.faults.invariants import counts, violations

ROOT = Path(__file__).resolve().parents[2]
BLACKBOARD = str(Path(sys.executable).parent / "blackboard")
AGENTS = ("ps-researcher", "ps-analyst", "ps-reviewer", "ps-architect")
CLAIM_TIMEOUT = 6.0  # a killed worker's claims expire within the run


def soak_agents(folder: Path) -> Path:
    """The example agents, each handler wrapped by flaky.py (which fails some runs on purpose)."""
    agents = shutil.copytree(
        ROOT / "agents", folder / "example-agents", ignore=shutil.ignore_patterns("__pycache__")
    )
    for spec in agents.glob("*.md"):
        text = spec.read_text().replace(
            "command: python3 ", f"command: {sys.executable} {Path(__file__).parent / 'flaky.py'} python3 "
        )
        spec.write_text(text)
    return agents


class Fleet:
    def __init__(self, store: Store, folder: Path) -> None:
        self.store, self.folder, self.logs, self.kills = store, folder, [], 0
        self.env = {
            **store.env,
            "BLACKBOARD_CLAIM_TIMEOUT": str(CLAIM_TIMEOUT),
            "BLACKBOARD_POST_TIMEOUT": "600",
        }
        self.steady = {a: self.start(a) for a in AGENTS}  # never killed: the long-lived ones
        self.churn = {a: self.start(a) for a in AGENTS}  # killed at random and restarted

    def start(self, agent: str) -> subprocess.Popen:
        log = self.folder / f"worker-{len(self.logs)}-{agent}.log"
        self.logs.append(log)
        return subprocess.Popen(
            [BLACKBOARD, "worker", "--agent", agent, "--concurrency", "2"],
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=log.open("w"),
        )

    def kill_one(self, rng: random.Random) -> None:
        agent = rng.choice(AGENTS)
        self.churn[agent].send_signal(signal.SIGKILL)
        self.churn[agent].wait()
        self.kills += 1
        self.churn[agent] = self.start(agent)

    def stop(self) -> None:
        workers = [*self.steady.values(), *self.churn.values()]
        for worker in workers:
            worker.send_signal(signal.SIGTERM)
        for worker in workers:
            worker.wait(timeout=90)

    def errors(self) -> int:
        return sum(log.read_text().count(fatal) for log in self.logs for fatal in FATAL)


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def post_story(service, rng: random.Random, n: int) -> int:
    """A research signal, and after it (sometimes) an analysis, a review and a decision; how many were posted."""

    def post(kind: str, after: tuple[str, ...] = (), **context) -> str:
        return service.post_signal(
            PostSignal(
                signal_type=kind,
                ps_id=f"ps-soak{n % 5}",
                entry_id=f"e-{n}",
                topic=f"story {n}",
                prompt="Which store must we use? It must be fast.",
                after=after,
                context=context,
            )
        ).signal_id

    chain = [post("RESEARCH")]
    for kind, chance in (("ANALYSIS", 0.6), ("REVIEW", 0.6), ("DECISION", 0.5)):
        if rng.random() >= chance:
            break
        chain.append(
            post(kind, (chain[-1],), **({"options": ["sqlite", "postgresql"]} if kind == "DECISION" else {}))
        )
    return len(chain)


def open_signals(read_model) -> int:
    return sum(
        len(read_model.find(SignalFilter(status=s))) for s in (SignalStatus.POSTED, SignalStatus.CLAIMED)
    )


def main() -> int:
    seconds = float(os.environ.get("BLACKBOARD_SOAK_SECONDS", "180"))
    rng, folder = (
        random.Random(int(os.environ.get("SOAK_SEED", "7"))),
        Path(tempfile.mkdtemp(prefix="blackboard-soak-")),
    )
    url = os.environ.get("BLACKBOARD_SOAK_DB") or f"sqlite:///{folder / 'soak.db'}"
    store = Store(url, folder)
    store.env["BLACKBOARD_AGENTS_DIR"] = str(soak_agents(folder))
    subprocess.run([BLACKBOARD, "db", "upgrade"], env=store.env, check=True, capture_output=True)
    container = store.container()
    service, read_model = container.service(), container.read_model()
    fleet = Fleet(store, folder)
    started, posted, stories, next_kill, rss_start = time.monotonic(), 0, 0, time.monotonic() + 5, None
    while (now := time.monotonic()) - started < seconds:
        posted += post_story(service, rng, stories)
        stories += 1
        if rss_start is None and now - started > min(
            15.0, seconds / 4
        ):  # after warm-up: imports, first claims
            rss_start = rss_kib(fleet.steady["ps-researcher"].pid)
        if now >= next_kill:
            fleet.kill_one(rng)
            next_kill = now + rng.uniform(3, 12)
        time.sleep(rng.uniform(0.1, 0.6))
    rss_end = rss_kib(fleet.steady["ps-researcher"].pid)
    drain_until = time.monotonic() + 3 * CLAIM_TIMEOUT + 60
    while open_signals(read_model) and time.monotonic() < drain_until:
        time.sleep(0.5)
    stuck = open_signals(read_model)
    fleet.stop()
    store_, events = container.event_store(), None
    container.projector().catch_up()
    broken = violations(store_, read_model)
    events = counts(store_)
    report = {
        "seconds": round(time.monotonic() - started, 1),
        "db": url.split(":")[0],
        "stories": stories,
        "signals_posted": posted,
        "events": events,
        "worker_kills": fleet.kills,
        "errors": fleet.errors(),
        "stuck_signals": stuck,
        "invariant_violations": len(broken),
        "long_lived_worker_rss_kib": {
            "after_warmup": rss_start,
            "end": rss_end,
            "growth": (rss_end - rss_start) if rss_start else None,
        },
    }
    print(json.dumps(report, indent=2))
    for line in broken[:20]:
        print("broken:", line, file=sys.stderr)
    (ROOT / "bench-results").mkdir(exist_ok=True)
    (ROOT / "bench-results" / "soak.json").write_text(json.dumps(report, indent=2) + "\n")
    container.engine().dispose()
    shutil.rmtree(folder, ignore_errors=True)
    return 1 if stuck or report["errors"] or broken else 0


if __name__ == "__main__":
    sys.exit(main())
