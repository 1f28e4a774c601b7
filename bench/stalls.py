"""(stalls) A stalled run to its retry, on SQLite and PostgreSQL, a real `blackboard worker` process.

One worker of an anthropic agent (`stall_timeout: BENCH_STALL_TIMEOUT_S`, one retry with a fixed 100 ms
wait) runs BENCH_STALLS signals, each posted once the one before ended (so no other signal's run holds the
worker when a retry comes due), against a local stand-in for the Messages API that keeps
silent on each signal's first model call (it answers after ten minutes: far past the stall timeout) and
answers its retry's at once. From the log, per signal: the first claim, the stall (`AgentSignalStalled`,
recorded with the attempt's failure) and the second claim. Reported:

- detected: from the first claim to the stall recorded, and that less the stall timeout (the lag: the
  worker's look every twentieth of a second, stopping the run, recording the failure);
- to its retry: from the stall recorded to the signal claimed again (the retry's wait, 100 ms here, and the
  worker's wake-up: the failure's append wakes it);
- all told: from the first claim to the second, the stall timeout plus how long until the signal is claimed
  again (the run goes quiet as it starts: its model call is sent at once).
"""

from __future__ import annotations

import os
import re
import signal as signals
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from bench.common import database_stores, table, temp_dir
from bench.stats import dist_ms
from tests.runners.standins import StandIn, Turn, say, slow

BOARD = "ps-stalls"
AGENT = "bench-staller"
AGENT_FILE = """---
name: {name}
runner: anthropic
model: sonnet
stall_timeout: {stall_timeout}
retries: {{max_attempts: 2, backoff: fixed, initial: 100ms, max: 1s, jitter: 0}}
---
Answer in one word.
"""
SILENCE_S = 600.0
SIGNAL = re.compile(r"sig-[0-9a-f]{8}")


def run(count: int, stall_timeout: float, pg_url: str | None) -> dict[str, Any]:
    report: dict[str, Any] = {"signals": count, "stall_timeout_s": stall_timeout, "stores": {}}
    api = StandIn(_first_call_silent()).start()
    try:
        with temp_dir("stalls") as where, database_stores(where, pg_url, "(stalls)") as stores:
            for store, url_of in stores.items():
                report["stores"][store] = _measure(url_of("stalls"), where / store, count, stall_timeout, api)
    finally:
        api.stop()
    return report


def _first_call_silent() -> Callable[[dict[str, Any]], Turn]:
    """Each signal's first model call gets no answer (for SILENCE_S); every later one an answer at once."""
    seen: set[str] = set()

    def turn(body: dict[str, Any]) -> Turn:
        found = SIGNAL.search(str(body.get("messages", "")))
        signal_id = found.group(0) if found else ""
        if signal_id in seen:
            return say("done", input_tokens=50, output_tokens=2)
        seen.add(signal_id)
        return slow(SILENCE_S, say("too late"))

    return turn


def _measure(url: str, where: Path, count: int, stall_timeout: float, api: StandIn) -> dict[str, Any]:
    from blackboard import Blackboard

    agents = where / "agents"
    agents.mkdir(parents=True)
    (agents / f"{AGENT}.md").write_text(AGENT_FILE.format(name=AGENT, stall_timeout=stall_timeout))
    ids: list[str] = []
    with Blackboard(url, agents_dir=agents, post_timeout=86_400) as bb:
        worker = subprocess.Popen(
            [str(Path(sys.executable).parent / "blackboard"), "worker", "--agent", AGENT],
            env=_env(url, agents, api.url),
            cwd=where,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            for i in range(
                count
            ):  # one at a time: no other signal's run holds the worker when a retry is due
                ids.append(bb.post("RESEARCH", BOARD, f"e-{i}", f"task {i}", capabilities=[AGENT]).signal_id)
                deadline = time.monotonic() + 60 + stall_timeout
                while time.monotonic() < deadline and worker.poll() is None:
                    if bb.show(ids[-1]).status in ("COMPLETED", "FAILED"):
                        break
                    time.sleep(0.1)
        finally:
            worker.send_signal(signals.SIGTERM)
            _, stderr = worker.communicate(timeout=120)
        done = {s.signal_id: s for s in bb.signals(blackboard_id=BOARD)}
        events = bb.events(blackboard_id=BOARD)
    unfinished = [sid for sid in ids if done[sid].status != "COMPLETED" or done[sid].attempt != 2]
    if unfinished:
        raise RuntimeError(f"{len(unfinished)} of {count} were not retried and completed:\n{stderr[-2000:]}")
    by_signal: dict[str, dict[str, list[float]]] = {}
    for event in events:
        signal_id = event.data.get("signal_id")
        if signal_id in done:
            by_signal.setdefault(signal_id, {}).setdefault(event.event_type, []).append(
                _at(event.occurred_at)
            )
    detected, lag, to_retry, all_told = [], [], [], []
    for signal_id in ids:
        seen = by_signal[signal_id]
        (first, second), (stalled,) = seen["AgentSignalClaimed"], seen["AgentSignalStalled"]
        detected.append(stalled - first)
        lag.append(stalled - first - stall_timeout)
        to_retry.append(second - stalled)
        all_told.append(second - first)
    return {
        "claim_to_stall": dist_ms(detected),
        "stall_lag": dist_ms(lag),
        "stall_to_retry_claimed": dist_ms(to_retry),
        "claim_to_retry_claimed": dist_ms(all_told),
    }


def _env(url: str, agents: Path, api: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BLACKBOARD_")}
    return {
        **env,
        "BLACKBOARD_DB": url,
        "BLACKBOARD_AGENTS_DIR": str(agents),
        "BLACKBOARD_POST_TIMEOUT": "86400",
        "ANTHROPIC_BASE_URL": api,
        "ANTHROPIC_API_KEY": "sk-ant-bench",
    }


def _at(moment: Any) -> float:
    return (moment if isinstance(moment, datetime) else datetime.fromisoformat(str(moment))).timestamp()


def print_report(r: dict[str, Any], say: Callable[[str], None]) -> None:
    rows = []
    for store, figures in r["stores"].items():
        for what, key in (
            ("claim to stall recorded", "claim_to_stall"),
            ("  of which past stall_timeout", "stall_lag"),
            ("stall recorded to retry claimed", "stall_to_retry_claimed"),
            ("claim to retry claimed, all told", "claim_to_retry_claimed"),
        ):
            d = figures[key]
            rows.append([store, what, d["n"], d["p50_ms"], d["p90_ms"], d["max_ms"]])
    say(
        table(
            f"(stalls) a stalled run to its retry: stall_timeout {r['stall_timeout_s']:g}s, a retry's wait 100 ms, "
            "one real worker",
            ["store", "span", "n", "p50 ms", "p90 ms", "max ms"],
            rows,
            "    from the log's occurred_at: the first claim, AgentSignalStalled (with the attempt's failure), "
            "the second claim",
        )
    )
