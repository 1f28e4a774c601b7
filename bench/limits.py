"""(z) the claim path with limits configured beside none: a worker's round (its candidates, then a batch claim
of one) on a store where the agent names a concurrency key, signals carry priorities and the board has a
budget, against the same store with none of them, taking turns so the machine's load touches both alike.

Both stores hold the same backlog (BENCH_LIMITS_SIGNALS signals) and the same recorded runs
(BENCH_LIMITS_RUNS completions with a runner's usage, which a budget totals at every claim). The key's
maximum is far above what is claimed, and the budget far above what was spent: what is measured is what
checking them costs, not a claim refused. The agent's runs are a runner's with an `estimate`, so each claim
on the budgeted board reserves it and totals what the board's open claims reserved; each claim is completed
after it is timed (untimed), so the open claims stay as few as a worker's slots, as they do in a fleet.
SQLite (synchronous=NORMAL, so fsync does not hide the difference) and PostgreSQL (when BENCH_PG_URL answers).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.common import summary_ms, temp_dir, verdict, wired

TARGET_RATIO = 1.1  # issue 24 "Speed": the claim path with priorities, keys and budgets <= 1.1x today's
AGENT = (
    "---\nname: bench-claimer\ncapabilities: {RESEARCH: 0.9}\nestimate: {usd: 0.01, tokens: 1200}\n{extra}---\n"
    "Claims.\n"
)
KEYED = "concurrency: {key: bench-api, max: 1000000}\n"
BOARD = "ps-limits"


def run(signals: int, runs: int, pg_url: str | None) -> dict[str, Any]:
    report: dict[str, Any] = {"signals": signals, "runs": runs, "backends": {}}
    with temp_dir("limits") as where:
        report["backends"]["sqlite"] = _side_by_side(
            where, signals, runs, lambda name: f"sqlite:///{where / name}.db"
        )
        if pg_url:
            try:
                with _pg(pg_url) as url_for:
                    report["backends"]["postgresql"] = _side_by_side(where, signals, runs, url_for)
            except Exception as exc:  # noqa: BLE001 - no server: say so, keep SQLite's figures
                report["backends"]["postgresql"] = {"skipped": f"{type(exc).__name__}: {exc}"}
    measured = [b for b in report["backends"].values() if "ratio" in b]
    report["pass"] = bool(measured) and all(b["ratio"] <= TARGET_RATIO for b in measured)
    return report


@contextmanager
def _pg(admin_url: str) -> Iterator[Any]:
    from bench.postgres.databases import Databases

    dbs = Databases(admin_url)
    try:
        yield lambda name: dbs.sqlalchemy_url(dbs.create(name))
    finally:
        dbs.close()


def _side_by_side(where: Path, signals: int, runs: int, url_for: Any) -> dict[str, Any]:
    from blackboard.application.claiming import plan_claims
    from blackboard.application.commands import ClaimSignals, CompleteSignal, GetOpenSignals, SetBudget
    from blackboard.domain.signals import SignalUsage

    stores = {}
    for name, extra in (("none", ""), ("limits", KEYED)):
        agents = where / f"agents-{name}-{len(stores)}-{id(url_for)}"
        agents.mkdir()
        (agents / "bench-claimer.md").write_text(AGENT.replace("{extra}", extra), encoding="utf-8")
        stores[name] = wired(
            url_for(f"limits_{name}"), synchronous="NORMAL", agents_dir=agents, post_timeout=86400
        )
    samples: dict[str, list[float]] = {name: [] for name in stores}
    with stores["none"] as plain, stores["limits"] as limited:
        containers = {"none": plain, "limits": limited}
        for name, container in containers.items():
            service = container.service()
            for i in range(signals + runs):
                service.post_signal(_post(i, priority=(i % 5) if name == "limits" else 2))
            usage = SignalUsage(runner="anthropic", input_tokens=1000, output_tokens=200, cost_usd=0.01)
            queries = container.queries()
            for _ in range(runs):  # recorded runs: the budget's total reads them at every claim
                (signal,) = _claim(container, queries, service, plan_claims, ClaimSignals, GetOpenSignals)
                service.complete_signal(
                    CompleteSignal(signal_id=signal.signal_id, agent_id="bench-claimer", usage=usage)
                )
            if name == "limits":
                service.set_budget(SetBudget(board=BOARD, usd=1e9, tokens=10**15, set_by="bench"))
        for _ in range(signals):  # taking turns
            for name, container in containers.items():
                started = time.perf_counter()
                claimed = _claim(
                    container,
                    container.queries(),
                    container.service(),
                    plan_claims,
                    ClaimSignals,
                    GetOpenSignals,
                )
                samples[name].append(time.perf_counter() - started)
                assert len(claimed) == 1, f"{name}: claimed {len(claimed)}"
                container.service().complete_signal(  # untimed: the open claims stay a worker's few
                    CompleteSignal(signal_id=claimed[0].signal_id, agent_id="bench-claimer")
                )
    result = {name: summary_ms(s) for name, s in samples.items()}
    result["ratio"] = round(statistics.median(samples["limits"]) / statistics.median(samples["none"]), 3)
    return result


def _post(i: int, priority: int) -> Any:
    from blackboard.application.commands import PostSignal

    return PostSignal(
        signal_type="RESEARCH", ps_id=BOARD, entry_id=f"e-{i}", topic=f"topic {i}", priority=priority
    )


def _claim(
    container: Any, queries: Any, service: Any, plan_claims: Any, claim_signals: Any, open_signals: Any
) -> list:
    """A worker's round for one free slot: its candidates, the claim plan, one batch claim."""
    registry = container.agent_registry()
    profile = registry.get("bench-claimer")
    found = queries.open_candidates(open_signals(capabilities=("RESEARCH",), limit=8, catch_up=False))
    plan = plan_claims(found, profile, lambda: [profile], 0.5, 0.0, 1)
    board = plan.claims[0]
    claims = service.claim_signals(
        claim_signals(
            blackboard_id=board.blackboard_id, signal_ids=board.signal_ids, agent_id="bench-claimer", limit=1
        )
    )
    return claims.claimed


def print_report(report: dict[str, Any], say: Any, table: Any) -> dict[str, Any]:
    rows = []
    for backend, b in report["backends"].items():
        if "skipped" in b:
            rows.append([backend, "skipped", "", "", "", b["skipped"][:60]])
            continue
        rows.append(
            [
                backend,
                b["none"]["median_ms"],
                b["limits"]["median_ms"],
                b["none"]["p95_ms"],
                b["limits"]["p95_ms"],
                f"{b['ratio']:.3f}x",
            ]
        )
    say(
        table(
            f"(z) the claim path: candidates + a batch claim of one, {report['signals']} rounds each, taking "
            f"turns ({report['runs']} runs recorded on each board), ms",
            ["store", "none: median", "limits: median", "none: p95", "limits: p95", "limits / none"],
            rows,
            note="limits: priorities 0-4, the agent's concurrency key (max 1,000,000), a budget in USD and tokens",
        )
    )
    worst = max((b["ratio"] for b in report["backends"].values() if "ratio" in b), default=float("nan"))
    return {
        "name": "(z) claim path with priorities, a concurrency key and a budget / none, median ratio",
        "measured": worst,
        "target": f"<= {TARGET_RATIO:g}",
        "verdict": verdict(report["pass"]),
    }
