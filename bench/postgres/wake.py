"""Section (wake): PostgreSQL wake-up against a raw LISTEN/NOTIFY claim, and the drain against
pgqueuer and four boards against one, all in alternating rounds (issue 37).

**Wake-up.** Each round measures, on fresh databases, one idle `blackboard worker` (section (g)'s
wake-up: bench/wakeup.py, the bench agent's `entrypoint` handler) and one raw claimer
(bench/postgres/raw_claim.py: psycopg, LISTEN, `UPDATE ... WHERE id = (SELECT ... FOR UPDATE SKIP
LOCKED LIMIT 1) RETURNING`): BENCH_WAKE_POSTS posts one at a time, BENCH_WAKE_GAP_MS apart (the same
seed, so the same gaps), post -> claim read from the database's rows (the post and claim events'
`occurred_at`; the job row's `posted_at` and `claimed_at`), one clock. The order is swapped each
round; with BENCH_WAKE_BEFORE (a folder holding another build's `blackboard` package) that build's
worker takes its turn too. Per round: ours / raw at p50 and at p99; medians and min-max over the rounds.

**Drain.** Templates made once (section (g)'s: BENCH_WAKE_SIGNALS signals posted through the service
on one board and spread over four; as many pgqueuer jobs), ANALYZEd; each round drains a fresh clone
of each with BENCH_WAKE_WORKERS worker processes (section (g)'s drain), the order swapped each round.
Per round: blackboard / pgqueuer and four boards / one board, steady rates; medians and min-max.
"""

from __future__ import annotations

import os
import statistics
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bench.common import Config

TARGET_WAKE_P50 = 1.5  # ours / the raw claim's, p50, at most
TARGET_WAKE_P99 = 2.0  # ours / the raw claim's, p99, at most
TARGET_DRAIN_VS_PGQUEUER = 0.6  # 4 workers, at least
TARGET_FOUR_BOARDS = 1.0  # 4 boards / 1 board, 4 workers, at least

# name -> (full, small); each can be overridden by its own environment variable.
SIZES: dict[str, tuple[str, str]] = {
    "BENCH_PG_URL": ("postgresql+psycopg://postgres@127.0.0.1:5432/test",) * 2,
    "BENCH_WAKE_ROUNDS": ("5", "5"),  # alternating rounds (each part)
    "BENCH_WAKE_POSTS": ("100", "30"),  # wake-up: posts per system per round
    "BENCH_WAKE_GAP_MS": ("100-200", "100-200"),  # wake-up: pause between two posts (uniform)
    "BENCH_WAKE_SIGNALS": ("2000", "1000"),  # drain: signals (and pgqueuer jobs) per drain
    "BENCH_WAKE_WORKERS": ("4", "4"),  # drain: worker processes
    "BENCH_WAKE_CONCURRENCY": ("128", "128"),  # drain: each blackboard worker's --concurrency
    "BENCH_WAKE_PARTS": ("wakeup,drain", "wakeup,drain"),  # which parts run
    "BENCH_WAKE_BEFORE": ("", ""),  # a folder holding another build's `blackboard` package, run beside
}


def sizes(config: Config) -> dict[str, str]:
    full = config.scale == "full"
    return {name: os.environ.get(name, pair[0] if full else pair[1]) for name, pair in SIZES.items()}


def spread(values: list[float]) -> dict[str, Any]:
    """Median and min-max of per-round figures, and the rounds themselves."""
    if not values:
        return {}
    return {
        "median": round(statistics.median(values), 3),
        "min": round(min(values), 3),
        "max": round(max(values), 3),
        "rounds": [round(v, 3) for v in values],
    }


def run(config: Config) -> dict[str, Any]:
    """The section; SIGTERM and SIGHUP become an exception meanwhile, so its databases are dropped."""
    from bench.postgres.section import terminable

    return terminable(_run, config)


def _run(config: Config) -> dict[str, Any]:
    from bench.common import progress, temp_dir
    from bench.postgres.databases import Databases, server_version_or_skip

    s = sizes(config)
    parts = {p.strip() for p in s["BENCH_WAKE_PARTS"].split(",") if p.strip()}
    before = s["BENCH_WAKE_BEFORE"].strip() or None
    out: dict[str, Any] = {"sizes": s, "load_average_at_start": os.getloadavg()}
    dbs = Databases(s["BENCH_PG_URL"])
    version = server_version_or_skip(dbs, "wake", s)
    if isinstance(version, dict):
        return version
    out["postgresql"] = version
    try:
        with temp_dir("wake") as root:
            if "wakeup" in parts:
                progress("(wake) wake-up: blackboard's idle worker and the raw claim, alternating rounds")
                out["wakeup"] = wakeup_rounds(dbs, root, s, before)
            if "drain" in parts:
                progress("(wake) drain: blackboard, pgqueuer, four boards, alternating rounds")
                out["drain"] = drain_rounds(dbs, root, s, before)
    finally:
        dbs.close()
        out["databases_created"], out["databases_dropped"] = len(dbs.created), len(dbs.dropped)
    out["load_average_at_end"] = os.getloadavg()
    return out


def wakeup_rounds(dbs: Any, root: Any, s: dict[str, str], before: str | None) -> dict[str, Any]:
    from bench.common import gap_s, progress
    from bench.postgres import raw_claim
    from bench.postgres.blackboard_drain import empty_template, wakeup

    rounds, n, gap = int(s["BENCH_WAKE_ROUNDS"]), int(s["BENCH_WAKE_POSTS"]), gap_s(s["BENCH_WAKE_GAP_MS"])
    empty = empty_template(dbs)
    variants = ["blackboard", "raw"] + (["before"] if before else [])
    runs: dict[str, list[dict[str, Any]]] = {v: [] for v in variants}
    for r in range(rounds):
        for v in variants if r % 2 == 0 else variants[::-1]:
            if v == "raw":
                result = raw_claim.wakeup(dbs, root, n, gap, seed=n, label=f"_r{r}")
            else:
                result = wakeup(
                    dbs,
                    root,
                    empty,
                    "entrypoint",
                    n,
                    gap,
                    label=f"{v}_r{r}",
                    before=before if v == "before" else None,
                )
            result["round"] = r
            runs[v].append(result)
            p = result["post_to_claim"]
            progress(
                f"(wake) round {r} {v}: p50 {p['p50_ms']} ms, p99 {p['p99_ms']} ms, "
                f"load {result['load_average_1min']}"
            )
    out: dict[str, Any] = {"posts": n, "gap_ms": s["BENCH_WAKE_GAP_MS"], "rounds": rounds, "runs": runs}
    for v in variants:
        for q in ("p50_ms", "p99_ms"):
            out.setdefault("summary", {})[f"{v} {q}"] = spread([x["post_to_claim"][q] for x in runs[v]])
    for v in [x for x in variants if x != "raw"]:
        for q in ("p50_ms", "p99_ms"):
            ratios = [
                a["post_to_claim"][q] / b["post_to_claim"][q]
                for a, b in zip(runs[v], runs["raw"], strict=True)
            ]
            out["summary"][f"{v} / raw {q}"] = spread(ratios)
    return out


def drain_rounds(dbs: Any, root: Any, s: dict[str, str], before: str | None) -> dict[str, Any]:
    from bench.common import progress
    from bench.postgres.blackboard_drain import BlackboardSystem
    from bench.postgres.databases import analyze
    from bench.postgres.pgqueuer_peer import PgQueuerSystem
    from bench.postgres.systems import System, drain

    rounds, n, k = int(s["BENCH_WAKE_ROUNDS"]), int(s["BENCH_WAKE_SIGNALS"]), int(s["BENCH_WAKE_WORKERS"])
    args = ["--concurrency", s["BENCH_WAKE_CONCURRENCY"]]
    systems: dict[str, System] = {
        "blackboard": BlackboardSystem("entrypoint", args, 1),
        "pgqueuer": PgQueuerSystem(),
        "blackboard-4boards": BlackboardSystem("entrypoint", args, 4),
    }
    if before:
        systems["before"] = BlackboardSystem("entrypoint", args, 1, before)
        systems["before-4boards"] = BlackboardSystem("entrypoint", args, 4, before)
    templates: dict[str, str] = {}
    for name in ("blackboard", "pgqueuer", "blackboard-4boards"):
        progress(f"(wake) {name}: preparing a backlog of {n:,}")
        templates[name] = systems[name].prepare(dbs, root, n)
        analyze(dbs, templates[name])
    if before:
        templates["before"], templates["before-4boards"] = (
            templates["blackboard"],
            templates["blackboard-4boards"],
        )
    names = list(systems)
    rate: dict[str, list[float]] = {name: [] for name in names}
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    for r in range(rounds):
        for name in names if r % 2 == 0 else names[::-1]:
            result = drain(systems[name], dbs, root, templates[name], k, n, label=f"_r{r}")
            result.pop("progress_every_second", None)
            result["round"] = r
            runs[name].append(result)
            rate[name].append(result["steady_per_s"] or 0.0)
            progress(
                f"(wake) round {r} {name}: {result['steady_per_s']}/s steady, "
                f"{result['cpu_ms_per_item_steady']} ms worker CPU/item, load {result['load_average_1min']}"
            )
    summary: dict[str, Any] = {}
    for name in names:
        summary[f"{name} steady/s"] = spread(rate[name])
        summary[f"{name} worker cpu ms/item"] = spread(
            [x["cpu_ms_per_item_steady"] for x in runs[name] if x["cpu_ms_per_item_steady"] is not None]
        )
        summary[f"{name} xacts/item"] = spread([x["transactions_per_item"] for x in runs[name]])
    for ours in [x for x in ("blackboard", "before") if x in names]:
        summary[f"{ours} / pgqueuer"] = spread(
            [a / b for a, b in zip(rate[ours], rate["pgqueuer"], strict=True) if b]
        )
        summary[f"{ours}-4boards / {ours}"] = spread(
            [a / b for a, b in zip(rate[f"{ours}-4boards"], rate[ours], strict=True) if b]
        )
    return {"signals": n, "workers": k, "rounds": rounds, "runs": runs, "summary": summary}


def print_report(w: dict[str, Any], say: Any, table: Any) -> list[tuple[str, Any, str, bool]]:
    """The tables of (wake), and its targets (name, measured, target, met)."""
    if "skipped" in w:
        say(f"\n== (wake) skipped ({w['skipped']})")
        return []
    targets: list[tuple[str, Any, str, bool]] = []

    def cell(d: dict[str, Any]) -> str:
        return f"{d['median']} ({d['min']}-{d['max']})" if d else "-"

    if "wakeup" in w:
        wk = w["wakeup"]
        sm = wk["summary"]
        variants = sorted({k.split(" ")[0] for k in sm if " / " not in k})
        rows = [[v, cell(sm[f"{v} p50_ms"]), cell(sm[f"{v} p99_ms"])] for v in variants]
        say(
            table(
                f"(wake) wake-up on PostgreSQL {w['postgresql']}: post -> claim, one idle claimer, "
                f"{wk['posts']} posts {wk['gap_ms']} ms apart, {wk['rounds']} alternating rounds "
                "(median, min-max of the rounds' figures)",
                ["system", "p50 ms", "p99 ms"],
                rows,
            )
        )
        for v in [x for x in variants if x != "raw"]:
            p50, p99 = sm[f"{v} / raw p50_ms"], sm[f"{v} / raw p99_ms"]
            say(f"    {v} / raw, per round: p50 {cell(p50)} {p50['rounds']}; p99 {cell(p99)} {p99['rounds']}")
        p50, p99 = sm["blackboard / raw p50_ms"], sm["blackboard / raw p99_ms"]
        targets.append(
            (
                "(wake) wake-up p50, blackboard / raw LISTEN/NOTIFY claim",
                cell(p50),
                f"<= {TARGET_WAKE_P50}",
                p50["median"] <= TARGET_WAKE_P50,
            )
        )
        targets.append(
            (
                "(wake) wake-up p99, blackboard / raw LISTEN/NOTIFY claim",
                cell(p99),
                f"<= {TARGET_WAKE_P99}",
                p99["median"] <= TARGET_WAKE_P99,
            )
        )
    if "drain" in w:
        d = w["drain"]
        sm = d["summary"]
        names = [k.removesuffix(" steady/s") for k in sm if k.endswith(" steady/s")]
        rows = [
            [
                name,
                cell(sm[f"{name} steady/s"]),
                cell(sm[f"{name} worker cpu ms/item"]),
                cell(sm[f"{name} xacts/item"]),
            ]
            for name in names
        ]
        say(
            table(
                f"(wake) drain on PostgreSQL: {d['signals']:,} items, {d['workers']} worker processes, "
                f"{d['rounds']} alternating rounds (median, min-max)",
                ["system", "steady/s", "worker cpu ms/item", "xacts/item"],
                rows,
            )
        )
        for key in [k for k in sm if " / " in k]:
            say(f"    {key}, per round: {cell(sm[key])} {sm[key]['rounds']}")
        vs, four = sm["blackboard / pgqueuer"], sm["blackboard-4boards / blackboard"]
        targets.append(
            (
                "(wake) drain, 4 workers, blackboard / pgqueuer",
                cell(vs),
                f">= {TARGET_DRAIN_VS_PGQUEUER}",
                vs["median"] >= TARGET_DRAIN_VS_PGQUEUER,
            )
        )
        targets.append(
            (
                "(wake) drain, 4 workers, 4 boards / 1 board",
                cell(four),
                f">= {TARGET_FOUR_BOARDS}",
                four["median"] >= TARGET_FOUR_BOARDS,
            )
        )
    return targets
