"""The tables of section (g), and its targets for the summary: the drains side by side with the ratios,
the candidate query before and after ANALYZE, one worker round step by step, the wake-up."""

from __future__ import annotations

from typing import Any

from bench.common import say, table, verdict
from bench.fleet import HANDLERS
from bench.postgres.section import (
    TARGET_VS_PGQUEUER,
    TARGET_VS_PROCRASTINATE,
    TARGET_WAKEUP_P50_MS,
    TARGET_WAKEUP_P99_MS,
)


def print_report(pg: dict[str, Any]) -> list[dict[str, Any]]:
    """The tables of section (g), and its targets for the summary."""
    if "skipped" in pg:
        say(f"\n== (g) PostgreSQL: skipped ({pg['skipped']})")
        return []
    v = pg["versions"]
    handler = pg["handler_cost"].get("handler_call") or pg["handler_cost"].get("run_handler", {})
    handler_mean_s = handler.get("mean_ms", 0.0) / 1000  # BENCH_PG_HANDLER_REPS=0: not measured
    rows = []
    for d in pg["drain"].values():
        system, k = d["system"], d["workers"]
        excluded = ""
        ours = system.startswith(("blackboard", "before"))
        if ours and d["steady_per_s"] and handler_mean_s:
            per_signal = k / d["steady_per_s"]  # seconds of one worker per signal
            if (
                per_signal > handler_mean_s
            ):  # else the handler's mean (a few slow calls) exceeds the whole: no estimate
                excluded = round(k / (per_signal - handler_mean_s), 1)
        spread = "/".join(str(c) for c in d.get("claims_per_worker", [])) or "-"
        rows.append(
            [
                system,
                k,
                d["items"],
                d["total_s"],
                d["startup_s"],
                d["steady_per_s"],
                d["overall_per_s"],
                excluded or "-",
                d["cpu_ms_per_item_steady"],
                d.get("server_cpu_ms_per_item_steady") or "-",
                d.get("transactions_per_item", "-"),
                spread,
                d["load_average_1min"][1],
            ]
        )
    if rows:
        say(
            table(
                f"(g) drain on PostgreSQL {pg['postgresql']}: k worker processes, backlog in place before they start",
                [
                    "system",
                    "workers",
                    "items",
                    "total s",
                    "start-up s",
                    "steady/s",
                    "overall/s",
                    "bb excl. handler/s",
                    "cpu ms/item",
                    "server cpu ms/item",
                    "xacts/item",
                    "claims per worker",
                    "load",
                ],
                rows,
                "    total: spawning the workers until the poll (every 20 ms) sees everything done.  start-up:\n"
                "    until it first sees one item done.  steady: items/s from then on; the compared figure.\n"
                "    cpu: the workers'\n"
                "    own, and their children's (blackboard's handlers), per item in the steady part.  server cpu: the\n"
                "    PostgreSQL server's processes (on this machine), per item in the steady part.  xacts: the\n"
                "    database's commits and rollbacks (pg_stat_database) per item, the benchmark's own polls\n"
                "    taken off.\n"
                + "".join(
                    f"    {name}{' ' + v[name] if v.get(name) else ''}: {note}.\n"
                    for name, note in pg.get("setup", {}).items()
                )
                + f"    blackboard's handler: {HANDLERS[pg['sizes'].get('BENCH_PG_HANDLER', 'entrypoint')]}; "
                + (
                    "a handler call as the worker makes it, measured in this process: "
                    f"p50 {handler['p50_ms']} ms, mean "
                    f"{handler['mean_ms']} ms, p90 {handler['p90_ms']} ms (a bare subprocess.run(['true']): "
                    f"p50 {pg['handler_cost']['subprocess_true'].get('p50_ms')} ms).\n"
                    if handler.get("n")
                    else "the handler call not measured (BENCH_PG_HANDLER_REPS=0).\n"
                )
                + "    bb excl. handler: the steady rate with that mean taken off each signal's worker time; "
                "an estimate, "
                "not compared.",
            )
        )
    for d in pg["drain"].values():
        if d["system"].startswith(("blackboard", "before")):
            say(
                f"    {d['system']}, {d['workers']} worker(s), from the event log: claim -> completed p50 "
                f"{d['claim_to_completed'].get('p50_ms')} ms; completed -> the same worker's next claim p50 "
                f"{d['completed_to_next_claim'].get('p50_ms')} ms, mean {d.get('completed_to_next_claim_mean_ms')} ms, "
                f"{d.get('completed_to_next_claim_over_200ms')} of {d['completed_to_next_claim'].get('n')} "
                "over 200 ms; "
                f"claimed twice: {d.get('claimed_twice')}"
            )
    targets = []
    ratios = pg["ratios"]
    for other, goal in (("pgqueuer", TARGET_VS_PGQUEUER), ("procrastinate", TARGET_VS_PROCRASTINATE)):
        ratio = ratios.get(f"blackboard/{other}@4")
        if ratio is None:
            continue
        ok = ratio >= goal
        say(
            f"    blackboard / {other}, steady rate, 4 workers: {ratio}x (target >= {goal:g}x): {verdict(ok)}"
        )
        targets.append(
            {
                "name": f"(g) PostgreSQL drain, 4 workers: blackboard / {other}",
                "measured": f"{ratio:.4f}",
                "target": f">= {goal:g}",
                "verdict": verdict(ok),
            }
        )
    for key, ratio in ratios.items():
        if not key.endswith("@4"):
            say(f"    (info) {key.replace('@', ', workers: ')}: {ratio}x")
    if "open_signals_query" in pg:
        rows = []
        for state, q in pg["open_signals_query"].items():
            join = next(
                (
                    line.strip().lstrip("-> ").split(" (")[0]
                    for line in q["plan"]
                    if "Join" in line or "Nested Loop" in line
                ),
                "-",
            )
            rows.append(
                [
                    state.replace("_", " "),
                    q["rows_returned"],
                    q["find"]["p50_ms"],
                    q["execution_ms"],
                    q["rows_removed_by_join_filter"],
                    join,
                ]
            )
        say(
            table(
                "(g) the worker's candidate query (candidates, limit 100) on the "
                f"{pg['sizes']['BENCH_PG_SIGNALS']}-signal "
                f"backlog, before and after ANALYZE (this server: autovacuum={pg['server_settings']['autovacuum']})",
                [
                    "statistics",
                    "rows",
                    "find p50 ms",
                    "PG execution ms",
                    "rows removed by join filter",
                    "join",
                ],
                rows,
                "    find: BlackboardQueries.open_candidates, as the worker asks (SQL, then a Candidate per row);\n"
                "    PG execution: EXPLAIN ANALYZE of the statement it sent.  The drains run after ANALYZE unless "
                "BENCH_PG_ANALYZE=0.",
            )
        )
    if "claim_path" in pg:
        cp = pg["claim_path"]
        before = pg.get("claim_path_before", {}).get("steps", {})
        rows = [
            [
                name,
                st["p50_ms"],
                st["mean_ms"],
                st["p90_ms"],
                st["statements"],
                st["checkouts"],
                *((before[name]["p50_ms"], before[name]["statements"]) if name in before else ()),
            ]
            for name, st in cp["steps"].items()
        ]
        say(
            table(
                f"(g) one worker round on the blackboard backlog, step by step in this process ({cp['reps']} rounds "
                f"of {cp.get('batch', 1)} signals)",
                [
                    "step",
                    "p50 ms",
                    "mean ms",
                    "p90 ms",
                    "SQL statements",
                    "pool checkouts",
                    *(("before: p50 ms", "before: SQL statements") if before else ()),
                ],
                rows,
                "    the worker's calls in its order, for a worker with that many free slots: last_position,\n"
                "    candidates (2 per slot, as the worker reads them), claim_signals (one command, its signals\n"
                "    held), a handler call for each, record_outcomes (one command); no head start to pay\n"
                "    (no other agent fits better).\n"
                f"    A bare SELECT 1 round trip: p50 {cp['select_1_round_trip']['p50_ms']} ms.",
            )
        )
    rows = []
    for label, w in pg["wakeup"].items():
        lat = w["post_to_claim"]
        judged = label == "defaults"
        ok50, ok99 = lat["p50_ms"] <= TARGET_WAKEUP_P50_MS, lat["p99_ms"] <= TARGET_WAKEUP_P99_MS
        rows.append(
            [
                label,
                w["signals"],
                lat["p50_ms"],
                lat["p90_ms"],
                lat["p99_ms"],
                lat["max_ms"],
                w["post_decided_to_append_start"]["p50_ms"],
                w["post_signal_call"]["p50_ms"],
                w["post_append_start_to_claim"]["p50_ms"],
                f"{verdict(ok50)} / {verdict(ok99)}" if judged else "(info)",
            ]
        )
        if judged:
            for q, goal, ok in (("p50", TARGET_WAKEUP_P50_MS, ok50), ("p99", TARGET_WAKEUP_P99_MS, ok99)):
                targets.append(
                    {
                        "name": f"(g) PostgreSQL wake-up post -> claim {q} ms, 1 idle worker",
                        "measured": lat[f"{q}_ms"],
                        "target": f"<= {goal:g}",
                        "verdict": verdict(ok),
                    }
                )
    if rows:
        say(
            table(
                f"(g) wake-up on PostgreSQL: one idle worker, signals posted one at a time "
                f"({pg['sizes']['BENCH_PG_WAKEUP_GAP_MS']} ms apart) through BlackboardService; ms from the post "
                "event's occurred_at to the claim event's",
                [
                    "worker",
                    "signals",
                    "p50",
                    "p90",
                    "p99",
                    "max",
                    "post>append",
                    "post call",
                    "append>claim",
                    f"p50<={TARGET_WAKEUP_P50_MS:g} / p99<={TARGET_WAKEUP_P99_MS:g}",
                ],
                rows,
                "    defaults: `blackboard worker --agent bench-noop`, the only agent, so no head start to wait.\n"
                "    post>append: the poster's decide-to-append step;\n"
                "    post call: the poster's whole post_signal (decide, append, commit, catch up); append>claim:\n"
                "    from the post's append starting to the worker's claim decision (all three medians).",
            )
        )
    return targets
