"""Nudges (`python -m bench.nudges`, not a section): how long a person's nudge takes to reach the running
agent, on SQLite and on PostgreSQL, a real worker process per runner (anthropic, claude-code).

One signal is run by one `blackboard worker`, against a local stand-in for the Messages API that keeps the
run at work: each answer calls a board tool (`blackboard_show`), BENCH_NUDGE_TURN_S seconds after the call
came (the run's turn, as a model's answer takes time), until told to answer. Meanwhile this process nudges
the run BENCH_NUDGES times through the application's service (what `blackboard nudge` calls, without the
CLI's start-up), each 100-300 ms after the one before reached the model, and times from the nudge's return
(recorded) until the stand-in is sent the first request carrying it. The figure holds the worker's watch
(the log's notification, one read of the running rows, one read of the nudges) and the wait for the run's
next model call: up to a turn, and, for claude-code, Claude Code's own way to its next request.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from bench.common import machine, say, table, temp_dir
from bench.runners import _worker_env
from bench.stats import dist_ms
from tests.runners.standins import StandIn, Turn, call
from tests.runners.standins import say as answer

AGENTS = {"anthropic": "runner: anthropic\nmodel: sonnet\n", "claude-code": "model: sonnet\n"}
TOOLS = {"anthropic": "blackboard_show", "claude-code": "mcp__blackboard__blackboard_show"}


class Pacing:
    """The stand-in's answers: a tool call per turn until `done`; the moment each nudge text is first seen."""

    def __init__(self, tool: str, signal_id: str, turn: float) -> None:
        self.tool, self.signal_id, self.turn = tool, signal_id, turn
        self.waiting: dict[str, float] = {}  # nudge text -> when it was first seen in a request
        self.lock = threading.Lock()
        self.started = threading.Event()
        self.done = threading.Event()

    def __call__(self, body: dict[str, Any]) -> Turn:
        now = time.perf_counter()
        said = json.dumps(body.get("messages"))
        with self.lock:
            for text in [t for t, seen in self.waiting.items() if seen == 0.0 and t in said]:
                self.waiting[text] = now
        self.started.set()
        if self.done.is_set():
            return answer("DONE")
        return Turn(**{**call(self.tool, {"signal_id": self.signal_id}).__dict__, "delay": self.turn})


def measure(url: str, kind: str, where: Path, nudges: int, turn: float) -> dict[str, Any]:
    from blackboard import Blackboard

    agents, home = where / f"agents-{kind}", where / "home"
    agents.mkdir()
    home.mkdir(exist_ok=True)
    name = f"bench-{kind}"
    (agents / f"{name}.md").write_text(f"---\nname: {name}\n{AGENTS[kind]}---\nWork until told.\n")
    with Blackboard(url, agents_dir=agents, post_timeout=3600) as bb:
        board = f"ps-nudge-{kind}"
        signal_id = bb.post("RESEARCH", board, "e-1", "work", capabilities=[name]).signal_id
        pacing = Pacing(TOOLS[kind], signal_id, turn)
        api = StandIn(pacing).start()
        worker = subprocess.Popen(
            [
                str(Path(sys.executable).parent / "blackboard"),
                "worker",
                "--agent",
                name,
                "--once",
                "--board",
                board,
            ],
            env=_worker_env(url, agents, api.url, home),
            cwd=where,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        took: list[float] = []
        try:
            if not pacing.started.wait(120):
                raise RuntimeError(f"{kind}: the run's first model call never came")
            for i in range(nudges):
                time.sleep(random.uniform(0.1, 0.3))
                text = f"nudge {i}: {random.getrandbits(64):016x}"
                with pacing.lock:
                    pacing.waiting[text] = 0.0
                bb.nudge(signal_id, text, by="bench")
                sent = time.perf_counter()
                deadline = sent + 60
                while pacing.waiting[text] == 0.0 and time.perf_counter() < deadline:
                    time.sleep(0.002)
                if pacing.waiting[text] == 0.0:
                    raise RuntimeError(f"{kind}: nudge {i} did not reach the model in 60 s")
                took.append(pacing.waiting[text] - sent)
        finally:
            pacing.done.set()
            try:
                _, stderr = worker.communicate(timeout=120)
            except subprocess.TimeoutExpired:
                worker.kill()
                _, stderr = worker.communicate()
            api.stop()
        status = bb.show(signal_id).status
    if status != "COMPLETED":
        raise RuntimeError(f"{kind}: the run ended {status}\n{stderr[-2000:]}")
    return {"nudges": nudges, "turn_s": turn, "to_model": dist_ms(took)}


def run(nudges: int, turn: float, databases: list[str], pg_url: str) -> dict[str, Any]:
    result: dict[str, Any] = {"nudges": nudges, "turn_s": turn, "runs": {}, "skipped": {}}
    with temp_dir("nudges") as root:
        for database in databases:
            dbs = None
            if database == "postgresql":
                from bench.postgres.databases import Databases

                dbs = Databases(pg_url)
                try:
                    dbs.server_version()
                except Exception as exc:  # noqa: BLE001 - no server: the SQLite figures still stand
                    dbs.close()
                    result["skipped"][database] = f"no PostgreSQL: {type(exc).__name__}"
                    continue
            try:
                for kind in AGENTS:
                    where = root / f"{database}-{kind}"
                    where.mkdir()
                    url = (
                        f"sqlite:///{where / 'board.db'}"
                        if dbs is None
                        else dbs.sqlalchemy_url(dbs.create(f"nudge_{kind.replace('-', '_')}"))
                    )
                    result["runs"][f"{kind}/{database}"] = measure(url, kind, where, nudges, turn)
            finally:
                if dbs is not None:
                    dbs.close()
    return result


def main() -> None:
    nudges = int(os.environ.get("BENCH_NUDGES", "20"))
    turn = float(os.environ.get("BENCH_NUDGE_TURN_S", "0.25"))
    databases = os.environ.get("BENCH_NUDGE_DATABASES", "sqlite,postgresql").split(",")
    pg_url = os.environ.get("BENCH_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
    result = run(nudges, turn, [d.strip() for d in databases if d.strip()], pg_url)
    result["machine"] = machine()
    result["load_average"] = os.getloadavg()
    rows = [
        [run_of, r["nudges"], r["to_model"]["p50_ms"], r["to_model"]["p90_ms"], r["to_model"]["max_ms"]]
        for run_of, r in result["runs"].items()
    ]
    say(
        table(
            f"a nudge's return to the model's next request carrying it (ms), a turn {turn:g} s",
            ["runner/database", "nudges", "p50", "p90", "max"],
            rows,
            f"    load average {' '.join(f'{x:.1f}' for x in result['load_average'])}"
            + "".join(f"; {db} skipped: {why}" for db, why in result["skipped"].items()),
        )
    )
    out = Path(os.environ.get("BENCH_OUT_DIR", "bench-results")) / "nudges.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2))
    say(f"    written: {out}")


if __name__ == "__main__":
    main()
