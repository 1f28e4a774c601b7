"""`make bench` / `python -m bench`: run the benchmarks, print tables and the targets, write JSON.

Sections, all run by default (BENCH_SECTIONS=a,b,... picks some): (a) command throughput, (b) the
eventsourcing baseline, (c) latency on a small vs a huge board, warm and cold, (d) rebuild speed,
(e) concurrent writers, (k) knowledge entries on a small and a huge board, (l) `events` and `status`
on a long log, (f) `blackboard worker` processes on SQLite (drain, wake-up), (g) the same on
PostgreSQL beside pgqueuer and procrastinate (skipped without a server unless named), (m) a post through
the Python API against a `blackboard post` process, (t) `match` by text over 1,000 agent files, (q) how
well `--capability auto` picks on a labelled set of public agent files (before and after matching read bodies),
(s) CLI start-up, (x) control of the work: a cancel reaching a running handler and a signal posted for later claimed
when due (SQLite and PostgreSQL),
(p) a post as an MCP tool call against a CLI post, (r) a runner's own overhead per signal beside a command
handler's, and the board tools' context size in tokens, (h) a worker's SIGKILL to the last process of its run
gone (a command handler's, a claude-code run's), (z) the claim path with limits configured (priorities,
a concurrency key, a budget) beside none.
handler's, and the board tools' context size in tokens, (y) the peak memory of export and import of a board
of BENCH_TRANSFER_EVENTS and ten times as many events, beside the former whole-board export and import,
(rate) shared rate limits: 8 runner slots (SQLite: 2 processes x 4; PostgreSQL: 2 process groups as 2 hosts) against
a stand-in API answering 429 past a fixed RPM/TPM: the 429 share after the first minute and the throughput as a share
of the limit.
(wake) PostgreSQL wake-up beside a raw LISTEN/NOTIFY claim, and the 4-worker drain beside pgqueuer and on 4 boards
beside 1, in alternating rounds (skipped without a server unless named).
(w) AsyncBlackboard beside Blackboard: a wait's wake-up, a call, and many waits at once (SQLite, PostgreSQL).
(i) `search` over 100,000 entries on SQLite (FTS5) and PostgreSQL (tsvector, GIN), by kind of query,
(v) LangGraph's store on the board (`BlackboardStore`): get, put and a filtered search (limit 10) on a namespace of
BENCH_STORE_ITEMS items, beside LangGraph's SqliteStore and PostgresStore on the same database, in alternating rounds.
(o) a command traced with OpenTelemetry beside untraced.
(j) LangGraph checkpoints: get_tuple, list and put on a thread of 10 checkpoints beside one of BENCH_CHECKPOINTS.
(savers) LangGraph checkpointers side by side: BlackboardSaver beside SqliteSaver and PostgresSaver, alternating rounds.
(stalls) a runner's run that stalls: from its claim to the stall recorded, and from that to its retry claimed
(SQLite, PostgreSQL).
(u) the spend of 6 concurrent runs (3 workers x --concurrency 2) on a 250,000-token budget, and (n) a lapsed claim
to its concurrency slot freed without a sweeper, each on SQLite and PostgreSQL beside BENCH_BUDGET_BEFORE=DIR.
(resume) a retried attempt that resumes the earlier attempt's conversation beside a fresh restart: the turns and
tokens it does not redo (claude-code, anthropic).
(web) the web view in headless Chromium on a board of BENCH_WEB_SIGNALS signals beside one of 100 (SQLite,
PostgreSQL): the page drawn, /api/board and /api/events, the JS heap, DOM nodes and a live record's redraw.
BENCH_SCALE=small runs everything at reduced sizes; each size has its own variable (docs/performance.md).
"""

from __future__ import annotations

import json
import logging
import os
import time
import traceback
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

from bench.common import Config, load_config, machine, say, table, verdict

T = TypeVar("T")
TARGET_VS_ES_TUNED = 1.0  # (b) ours/theirs commands/s at FULL, eventsourcing tuned (issue 25)
AIM_VS_ES_TUNED = 1.5  # what it would take: docs/performance.md, "A lean hot path"
TARGET_WARM_RATIO = 1.5
TARGET_REBUILD = 50_000
TARGET_REBUILD_OVER_DECODE = 0.5  # (d) the fast rebuild's events/s over a decode-only read's (issue 35)


def main() -> None:
    logging.basicConfig(level=logging.WARNING)
    config = load_config()
    started = time.perf_counter()
    report: dict[str, Any] = {
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": machine(),
        "scale": config.scale,
        "sizes": config.sizes,
        "sections": list(config.sections),
        "load_average_at_start": os.getloadavg(),
    }
    m = report["machine"]
    say(
        f"blackboard persistence benchmarks ({config.scale}): {m['nproc']} CPUs, Python {m['python']}, "
        f"SQLite {m['sqlite']}, SQLAlchemy {m['sqlalchemy']}, eventsourcing {m['eventsourcing']}; "
        f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )
    targets: list[dict[str, Any]] = []
    failed: list[str] = []

    def section(name: str, run: Callable[[], None]) -> None:
        """A section that fails is reported and recorded; the others still run."""
        try:
            run()
        except Exception as exc:  # noqa: BLE001 - a benchmark run should report what it could measure
            traceback.print_exc()
            say(f"\n!! section {name} failed: {type(exc).__name__}: {exc}")
            report.setdefault("errors", {})[name] = f"{type(exc).__name__}: {exc}"
            failed.append(name)

    def run_ab() -> None:
        from bench import throughput

        with_baseline = "b" in config.sections
        report["throughput"] = tp = profiled(config, "ab", throughput.run, config, with_baseline)
        print_throughput(tp)
        if with_baseline:
            targets.extend(print_baseline(tp, config))

    def run_c() -> None:
        from bench import latency

        report["latency"] = lat = profiled(config, "c", latency.run, config)
        targets.extend(print_latency(lat))

    def run_d() -> None:
        from bench import rebuild

        report["rebuild"] = reb = profiled(config, "d", rebuild.run, config)
        targets.extend(print_rebuild(reb))

    def run_e() -> None:
        from bench import locking

        report["locking"] = lock = profiled(config, "e", locking.run, config)
        targets.extend(print_locking(lock))

    def run_f() -> None:
        from bench import workers

        report["workers"] = wk = profiled(config, "f", workers.run, config)
        targets.extend(print_workers(wk))

    def run_g() -> None:  # (g) PostgreSQL: blackboard workers beside pgqueuer and procrastinate, wake-up
        from bench.postgres import report as pg_report
        from bench.postgres import section as pg_section

        report["postgres"] = pg = profiled(config, "g", pg_section.run, config)
        targets.extend(pg_report.print_report(pg))

    def run_wake() -> (
        None
    ):  # (wake) PostgreSQL wake-up vs a raw LISTEN/NOTIFY claim; drain rounds vs pgqueuer
        from bench.postgres import wake

        report["wake"] = w = profiled(config, "wake", wake.run, config)
        targets.extend(_target(*t) for t in wake.print_report(w, say, table))

    def run_s() -> None:  # (s) CLI start-up: `blackboard show` against `python -c "import sqlalchemy"`
        from bench import startup

        report["startup"] = st = startup.run(
            int(os.environ.get("BENCH_STARTUP_RUNS", "15")), os.environ.get("BENCH_STARTUP_BEFORE")
        )
        targets.append(
            _target(
                "(s) CLI start-up: blackboard show / import sqlalchemy (CPU)",
                round(st["cpu_ratio"], 2),
                f"<= {startup.TARGET}",
                st["pass"],
            )
        )

    def run_p() -> None:  # (p) a post as an MCP tool call (a running `blackboard mcp`) vs a CLI post
        from bench import mcp

        report["mcp"] = p = mcp.run(int(os.environ.get("BENCH_MCP_RUNS", "100")))
        targets.append(
            _target(
                "(p) MCP tool call (post), median ms; CLI post beside it",
                round(p["mcp_post_ms"], 2),
                f"<= {mcp.TARGET_MS:g}",
                p["pass"],
            )
        )

    def run_r() -> None:  # (r) runners: overhead per signal beside a command handler's; the tools' tokens
        from bench import runners

        # no target: the figures are reported side by side (docs/performance.md, section r)
        report["runners"] = runners.run(
            int(os.environ.get("BENCH_RUNNER_SIGNALS", "20")),
            int(os.environ.get("BENCH_RUNNER_CLAUDE_SIGNALS", "5")),
        )

    def run_h() -> None:  # (h) a worker's SIGKILL to its run's last process gone, now beside the build before
        from bench import held

        report["held"] = h = held.run(
            int(os.environ.get("BENCH_HELD_RUNS", "5")),
            int(os.environ.get("BENCH_HELD_CLAUDE_RUNS", "3")),
            os.environ.get("BENCH_HELD_BEFORE"),
        )
        targets.append(held.print_report(h, say))

    def run_y() -> None:  # (y) export and import: peak RSS now beside the former whole-board path
        from bench import transfer

        sizes = [config["BENCH_TRANSFER_EVENTS"], 10 * config["BENCH_TRANSFER_EVENTS"]]
        report["transfer"] = x = transfer.run(sizes, config["BENCH_TRANSFER_EVENTS"])
        say(
            table(
                "(y) export and import, peak RSS of the process (MB), SQLite",
                transfer.HEADERS,
                transfer.rows(x),
            )
        )

    def run_v() -> None:  # (v) LangGraph's store on the board against LangGraph's own, on each database
        from bench import langgraph_store

        report["langgraph_store"] = v = profiled(config, "v", langgraph_store.run, config)
        say(
            table(
                f"(v) LangGraph store, {v['items']:,} items, median (min-max) of {v['rounds']} rounds of "
                f"{v['reps']} calls, µs; ratio: the peer's time / ours; PostgreSQL: {v['postgresql']}; "
                f"load {v['load_before']} -> {v['load_after']}",
                langgraph_store.HEADERS,
                langgraph_store.rows(v),
            )
        )
        for database, found in v["databases"].items():
            for what, ratio in found["ratios"].items():
                targets.append(
                    _target(
                        f"(v) BlackboardStore {what} / the peer's, {database}",
                        ratio["median"],
                        f">= {langgraph_store.TARGET}",
                        ratio["median"] >= langgraph_store.TARGET,
                    )
                )

    def run_k() -> None:  # (k) knowledge entries on a small and a huge board
        from bench import knowledge

        report["knowledge"] = k = profiled(config, "k", knowledge.run, config)
        rows = [
            [
                name,
                c["seed_s"],
                c["write_ms"],
                c["read_ms"],
                c["post_claim_complete_ms"],
                c["entries_topic_ms"],
                c["entries_author_ms"],
            ]
            for name, c in k["cases"].items()
        ]
        say(
            table(
                f"(k) knowledge entries, SQLite, medians of {k['reps']} (ms)",
                [
                    "board",
                    "seed s",
                    "write",
                    "read",
                    "post+claim+complete",
                    "entries --topic",
                    "entries --author",
                ],
                rows,
            )
        )
        big = k["cases"]["large entries and signals"]
        targets.extend(
            [
                _target(
                    "(k) entry write, 100k entries+signals / 10",
                    k["write_ratio"],
                    "<= 1.5",
                    k["write_ratio"] <= 1.5,
                ),
                _target(
                    "(k) entry read, 100k entries+signals / 10",
                    k["read_ratio"],
                    "<= 1.5",
                    k["read_ratio"] <= 1.5,
                ),
                _target(
                    "(k) signal command, board with 100k entries / without",
                    k["signal_command_ratio"],
                    "<= 1.1",
                    k["signal_command_ratio"] <= 1.1,
                ),
                _target(
                    "(k) entries --topic on 100k entries, ms",
                    big["entries_topic_ms"],
                    "<= 5",
                    big["entries_topic_ms"] <= 5,
                ),
                _target(
                    "(k) entries --author on 100k entries, ms",
                    big["entries_author_ms"],
                    "<= 5",
                    big["entries_author_ms"] <= 5,
                ),
            ]
        )

    def run_l() -> None:  # (l) events and status on a long log, from fresh processes
        from bench import log_reading

        report["log_reading"] = lg = profiled(config, "l", log_reading.run, config)
        rows = [[name, c["peak_mb"], c["wall_s"], c["cpu_s"]] for name, c in lg["cases"].items()]
        rows.append(
            [
                f"--json status (median of {len(lg['status_wall_s'])})",
                lg["status_peak_mb"],
                lg["status_median_s"],
                lg["status_cpu_median_s"],
            ]
        )
        rows.append(["--version (start-up alone)", "", lg["version_wall_s"], ""])
        say(
            table(
                f"(l) a log of {lg['events']:,} events on SQLite: each command in a fresh process",
                ["command", "peak MB", "wall s", "cpu s"],
                rows,
                f"    the former events held every event (and its JSON) at once: {lg['former_over_jsonl_peak']}x the\n"
                "    streamed --jsonl's peak; status counts with GROUP BYs over the read models, not a replay.\n"
                "    --version is start-up alone: read the wall times against it on a loaded machine.",
            )
        )
        jsonl = lg["cases"]["events --all --jsonl"]["peak_mb"]
        targets.extend(
            [
                _target(
                    f"(l) events --all --jsonl peak MB, {lg['events']:,} events",
                    jsonl,
                    f"<= {log_reading.TARGET_PEAK_MB}",
                    lg["pass_peak"],
                ),
                _target(
                    f"(l) status wall s, {lg['events']:,} events",
                    lg["status_median_s"],
                    f"<= {log_reading.TARGET_STATUS_S:g}",
                    lg["pass_status"],
                ),
            ]
        )

    def run_m() -> None:  # (m) a post through the Python API against `blackboard post`, taking turns
        from bench import api

        report["api"] = m = api.run(config["BENCH_API_POSTS"], config["BENCH_API_CLI_POSTS"])
        targets.append(
            _target(
                f"(m) Python API post, median ms (CLI post: {m.get('cli', {}).get('median_ms')} ms)",
                m["full"]["median_ms"],
                f"<= {api.TARGET_MS:g}",
                m["pass"],
            )
        )

    def run_t() -> None:  # (t) match of signals targeting auto over 25 and 1,000 agent files
        from bench import matching

        report["matching"] = mt = profiled(config, "t", matching.run, config)
        rows = [
            [
                c["agents"],
                c["files"],
                c["load_and_index_ms"],
                c["match_auto_ms"],
                c["match_declared_ms"],
                c["match_auto_cpu_ms"],
                c["text_scores_ms"],
                c["best_fit_of_first"],
            ]
            for c in mt["cases"].values()
        ]
        say(
            table(
                f"(t) match, SQLite, in process, medians of {mt['reps']} signals each with its own text (ms)",
                [
                    "agent files",
                    "files",
                    "load+index",
                    "match auto",
                    "match declared",
                    "match auto, CPU",
                    "text scores alone",
                    "best fit of the first",
                ],
                rows,
            )
        )
        big = max(mt["cases"].values(), key=lambda c: (c["agents"], c["match_auto_ms"]))
        targets.append(
            _target(
                f"(t) match auto over {big['agents']} agent files ({big['files']}), ms",
                big["match_auto_ms"],
                f"<= {matching.TARGET_MS:g}",
                mt["pass"],
            )
        )

    def run_x() -> None:  # (x) control: cancel to the handler's end; later: due to claim, idle statements
        from bench import control

        report["control"] = x = profiled(config, "x", control.run, config)
        targets.extend(print_control(x))

    def run_q() -> None:  # (q) how well auto picks: the labelled set, before and after matching read bodies
        from bench import matching_quality

        report["matching_quality"] = mq = profiled(config, "q", matching_quality.run)
        targets.append(matching_quality.print_report(mq, say, table))

    def run_z() -> None:  # (z) the claim path with limits configured (priorities, a key, a budget) vs none
        from bench import limits

        pg_url = os.environ.get("BENCH_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
        report["limits"] = z = limits.run(config["BENCH_LIMITS_SIGNALS"], config["BENCH_LIMITS_RUNS"], pg_url)
        targets.append(limits.print_report(z, say, table))

    def run_w() -> None:  # (w) AsyncBlackboard beside Blackboard: wake-up, a call, many waits at once
        from bench import asynchronous

        pg_url = os.environ.get("BENCH_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
        report["async_api"] = w = asynchronous.run(
            config["BENCH_ASYNC_ROUNDS"], config["BENCH_ASYNC_WAITS"], pg_url
        )
        asynchronous.print_report(w, say)

    def run_i() -> None:  # (i) search over 100,000 entries, SQLite and PostgreSQL, by kind of query
        from bench import search

        pg_url = os.environ.get("BENCH_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
        report["search"] = found = profiled(config, "i", search.run, config, pg_url)
        targets.extend(search.print_report(found, say, table))

    def run_o() -> None:  # (o) a command traced (OpenTelemetry) beside untraced
        from bench import tracing

        pg_url = os.environ.get("BENCH_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
        report["traces"] = o = tracing.run(
            config["BENCH_TRACES_SIGNALS"], config["BENCH_TRACES_PROCESSES"], pg_url
        )
        targets.append(tracing.print_report(o, say, table))

    def run_u() -> None:  # (u) 6 concurrent runs on a token budget; (n) a lapsed claim's slot freed
        from bench import budgets

        pg_url = os.environ.get("BENCH_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
        before, limit = (
            os.environ.get("BENCH_BUDGET_BEFORE"),
            float(os.environ.get("BENCH_LAPSE_LIMIT", "20")),
        )
        report["budgets"] = u = budgets.run(
            pg_url, before, limit, spend="u" in config.sections, lapse="n" in config.sections
        )
        targets.append(budgets.print_report(u, say))

    def run_rate() -> None:  # (rate) 8 runner slots under a shared rate limit against an API enforcing it
        from bench import rate_limits

        pg_url = os.environ.get("BENCH_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
        report["rate_limits"] = found = rate_limits.run(
            pg_url,
            float(os.environ.get("BENCH_RATE_SECONDS", "150")),
            int(os.environ.get("BENCH_RATE_RPM", "120")),
            int(os.environ.get("BENCH_RATE_TPM", "110000")),
        )
        targets.append(rate_limits.print_report(found, say))

    def run_j() -> None:  # (j) LangGraph checkpoints: reads on a thread of 10 vs one of 10,000 checkpoints
        from bench import checkpoints

        pg_url = os.environ.get("BENCH_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
        report["checkpoints"] = j = checkpoints.run(
            config["BENCH_CHECKPOINTS"], config["BENCH_CHECKPOINT_REPS"], pg_url
        )
        targets.append(checkpoints.print_report(j, say, table))

    def run_savers() -> None:  # (savers) BlackboardSaver beside SqliteSaver and PostgresSaver, alternating
        from bench import savers

        report["savers"] = sv = savers.run(config["BENCH_SAVER_ROUNDS"], config["BENCH_SAVER_CALLS"])
        say(
            table(
                f"(savers) LangGraph checkpointers, {sv['rounds']} alternating rounds of {sv['calls']} calls "
                f"(medians); load average {sv['load_average_before']} -> {sv['load_average_after']}",
                savers.HEADERS,
                savers.rows(sv),
            )
        )
        targets.extend(_target(*t) for t in savers.targets(sv))

    def run_stalls() -> None:  # (stalls) a stalled run: its stall detected, then its retry claimed
        from bench import stalls

        pg_url = os.environ.get("BENCH_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
        report["stalls"] = st = stalls.run(config["BENCH_STALLS"], config["BENCH_STALL_TIMEOUT_S"], pg_url)
        stalls.print_report(st, say)

    def run_resume() -> None:  # (resume) a retried attempt resumed beside restarted: turns and tokens saved
        from bench import resume

        report["resume"] = r = resume.run(config["BENCH_RESUME_STEPS"])
        resume.print_report(r, say)

    def run_web() -> None:  # (web) the web view on 10,000 signals beside 100, in Chromium
        from bench import web

        report["web"] = r = web.run(config)
        web.print_report(r, say)

    if "a" in config.sections or "b" in config.sections:
        section("a,b", run_ab)
    # g runs by default too, and is skipped when no server answers (an error when BENCH_SECTIONS names it)
    for name, run in (
        ("c", run_c),
        ("d", run_d),
        ("e", run_e),
        ("f", run_f),
        ("g", run_g),
        ("wake", run_wake),
        ("k", run_k),
        ("l", run_l),
        ("m", run_m),
        ("t", run_t),
        ("q", run_q),
        ("x", run_x),
        ("s", run_s),
        ("p", run_p),
        ("r", run_r),
        ("h", run_h),
        ("z", run_z),
        ("y", run_y),
        ("w", run_w),
        ("i", run_i),
        ("v", run_v),
        ("o", run_o),
        ("j", run_j),
        ("savers", run_savers),
        ("stalls", run_stalls),
        ("resume", run_resume),
        ("web", run_web),
    ):
        if name in config.sections:
            section(name, run)
    if "u" in config.sections or "n" in config.sections:  # one run measures both, in the same stores
        section("u,n", run_u)
    if "rate" in config.sections:
        section("rate", run_rate)

    report["load_average_at_end"] = os.getloadavg()
    report["targets"] = targets
    report["duration_s"] = round(time.perf_counter() - started, 1)
    if targets:
        say(
            table(
                "Targets",
                ["figure", "measured", "target", "verdict"],
                [[t["name"], t["measured"], t["target"], t["verdict"]] for t in targets],
            )
        )
    config.out.parent.mkdir(parents=True, exist_ok=True)
    config.out.write_text(json.dumps(report, indent=2, default=str) + "\n")
    say(
        f"\nwrote {config.out} in {report['duration_s']} s; load average at the end "
        f"{' '.join(f'{x:.1f}' for x in report['load_average_at_end'])} "
        "(the machine is shared: see docs/performance.md)"
    )
    if failed:
        raise SystemExit(f"sections that failed: {', '.join(failed)}")


def profiled(config: Config, name: str, fn: Callable[..., T], *args: Any) -> T:
    """With BENCH_PROFILE=1, run a section under cProfile (slower!) and keep its stats next to the JSON."""
    if not os.environ.get("BENCH_PROFILE"):
        return fn(*args)
    import cProfile
    import pstats

    profile = cProfile.Profile()
    result = profile.runcall(fn, *args)
    path = config.out.parent / f"profile-{name}.pstats"
    path.parent.mkdir(parents=True, exist_ok=True)
    profile.dump_stats(path)
    say(f"\n-- profile of section {name} (timings above are inflated by the profiler), kept in {path}")
    pstats.Stats(profile).sort_stats("cumulative").print_stats(25)
    return result


def _target(name: str, measured: float, target: str, ok: bool) -> dict[str, Any]:
    return {"name": name, "measured": measured, "target": target, "verdict": verdict(ok)}


def print_throughput(tp: dict[str, Any]) -> None:
    rows = []
    for mode in ("FULL", "NORMAL"):
        r = tp["ours"][mode]
        ps = r["per_second"]
        rows.append(
            [
                f"ours, synchronous={mode}",
                ps["post"],
                ps["claim"],
                ps["complete"],
                ps["overall"],
                r["cpu_ms_per_command"]["overall"],
                r["commands"],
                r["seconds"]["total"],
            ]
        )
    say(
        table(
            "(a) commands/s, one process, one board, SQLite file (WAL)",
            ["store", "post/s", "claim/s", "complete/s", "overall/s", "cpu ms/cmd", "commands", "seconds"],
            rows,
            "    claims and completions name only the signal id, so each also looks its board up in the read model",
        )
    )


def print_baseline(tp: dict[str, Any], config: Config) -> list[dict[str, Any]]:
    rows, targets = [], []
    ratios = tp["ratios_ours_over_theirs"]
    variants = [
        ("defaults_FULL", "FULL_defaults_size", "eventsourcing, all defaults"),
        ("tuned_FULL", "FULL", "eventsourcing, tuned"),
        ("tuned_NORMAL", "FULL_normal", "eventsourcing, tuned, NORMAL (patched)"),
    ]
    for key, ours_key, label in variants:
        theirs = tp["theirs"][key]
        mine = tp["ours"]["NORMAL" if ours_key == "FULL_normal" else ours_key]
        ratio = ratios[key]
        judged = key == "tuned_FULL"  # the target; the others are for information
        ok = ratio["overall"] >= TARGET_VS_ES_TUNED
        rows.append(
            [
                label,
                key.split("_")[1],
                theirs["signals"],
                mine["per_second"]["overall"],
                theirs["per_second"]["overall"],
                ratio["overall"],
                " / ".join(f"{ratio[k]:.2f}" for k in ("post", "claim", "complete")),
                f"{mine['cpu_ms_per_command']['overall']:.2f} / {theirs['cpu_ms_per_command']['overall']:.2f}",
                verdict(ok) if judged else "(info)",
            ]
        )
        if judged:
            targets.append(
                _target(
                    f"(b) ours/theirs commands/s at FULL vs {label}",
                    ratio["overall"],
                    f">= {TARGET_VS_ES_TUNED} (aim {AIM_VS_ES_TUNED})",
                    ok,
                )
            )
    settings = tp["theirs"]["defaults_FULL"]["settings"]
    say(
        table(
            "(b) ours vs eventsourcing 9.5 on the same workload, driven side by side; ratio = ours/theirs",
            [
                "baseline",
                "sync",
                "signals",
                "ours/s",
                "theirs/s",
                "ratio",
                "post/claim/complete",
                "cpu ms/cmd o/t",
                f"tuned >={TARGET_VS_ES_TUNED}",
            ],
            rows,
            f"    eventsourcing: PERSISTENCE_MODULE=eventsourcing.sqlite, SQLITE_DBNAME=<temp file>; it ran with\n"
            f"    journal_mode={settings['journal_mode']}, synchronous={settings['synchronous']} "
            "(it never sets it: SQLite's default), "
            "no snapshotting.\n"
            "    It has no setting for PRAGMA synchronous: the NORMAL row patches its connect inside the benchmark.\n"
            "    With all its defaults (no aggregate cache) it replays the whole board on every command, O(N) each,\n"
            f"    so that row runs at {config['BENCH_ES_DEFAULTS_N']} signals, beside ours at the same size.\n"
            "    tuned: AGGREGATE_CACHE_MAXSIZE=64, DEEPCOPY_FROM_AGGREGATE_CACHE=n (64 boards in process, no copy\n"
            "    per command); ours keeps no board in process and reads the rows each decision touches: the\n"
            "    strictest comparison.",
        )
    )
    return targets


def print_latency(lat: dict[str, Any]) -> list[dict[str, Any]]:
    """SQLite's figures (at the top level), then PostgreSQL's when the section ran there."""
    targets = print_latency_on(lat, "") if "boards" in lat else []
    pg = lat.get("postgresql")
    if pg and "skipped" in pg:
        say(f"\n(c) on PostgreSQL: skipped ({pg['skipped']})")
    elif pg:
        targets.extend(print_latency_on(pg, " on PostgreSQL"))
    return targets


def print_latency_on(lat: dict[str, Any], where: str) -> list[dict[str, Any]]:
    """`where`: "" for SQLite (its target names as they were), " on PostgreSQL"."""
    rows = []
    for label, b in lat["boards"].items():
        w = b["warm"]
        rows.append(
            [
                label,
                b["signals_seeded"],
                b["events_seeded"],
                b["seed_s"],
                b["seed_fold_s"],
                w["claim_plus_complete"]["median_ms"],
                w["claim_plus_complete"]["p95_ms"],
                w["claim"]["median_ms"],
                w["complete"]["median_ms"],
                b["first_command_s"] * 1000,
            ]
        )
    say(
        table(
            f"(c) latency in ms{where}, claim+complete of a fresh signal, {lat['reps']} repetitions"
            + ("" if where else ", synchronous=FULL"),
            [
                "board",
                "signals",
                "events",
                "seed s",
                "of which fold s",
                "warm med",
                "warm p95",
                "claim med",
                "compl med",
                "first cmd",
            ],
            rows,
            "    small: POSTED signals; large: signals that saw work (claims, renewals, completions, failures\n"
            "    and retries) and the entries written on the board, every event in the log counted.\n"
            "    seed s: the events appended 1000 per append, then folded into the read model by one\n"
            "    Projector.catch_up() (fold s), before anything is measured.  warm: one long-lived service.\n"
            "    first cmd: that service's first command (a post) on the board.",
        )
    )
    ok = lat["warm_ratio_median"] <= TARGET_WARM_RATIO
    say(
        f"    warm ratio large/small: median {lat['warm_ratio_median']}x, p95 {lat['warm_ratio_p95']}x "
        f"(target <= {TARGET_WARM_RATIO}x on the median): {verdict(ok)}"
    )
    targets = [
        _target(
            f"(c) warm latency ratio large/small (median){where}",
            lat["warm_ratio_median"],
            f"<= {TARGET_WARM_RATIO}",
            ok,
        )
    ]
    from bench.latency import TARGET_COLD_RATIO

    ratio = lat["cold_ratio"]
    rows = [
        [
            label,
            b["signals_seeded"],
            b["cold"]["command_ms_median"],
            b["cold"]["service_construction_ms_median"],
            b["cold"]["claim_ms_median"],
            b["cold"]["process_wall_ms_median"],
            b["cold"]["claim_statements"],
            b["cold"]["signals_loaded"],
            b["cold"]["events_replayed"],
            b["cold"]["board_version"],
            b["cold"].get("board_log_events", ""),
        ]
        for label, b in lat["boards"].items()
    ]
    rows.append(
        [
            "ratio large/small",
            "",
            ratio["command"],
            "",
            ratio["claim"],
            ratio["process_wall"],
            "",
            "",
            "",
            "",
            "",
        ]
    )
    ok = ratio["command"] <= TARGET_COLD_RATIO
    say(
        table(
            f"(c) cold command{where}: a fresh process (engine, service, one claim) on each board, taking turns; "
            f"median ms of {lat['cold_reps']}",
            [
                "board",
                "signals",
                "command",
                "engine+service",
                "claim",
                "process wall",
                "claim SQL stmts",
                "signals loaded",
                "events replayed",
                "board version",
                "log events",
            ],
            rows,
            "    `python -m bench.cold`: after its imports, the container builds the engine (schema check) and the\n"
            "    service, which claims one signal posted just before; process wall: the whole process, Python's\n"
            "    start-up and imports included, as the benchmark sees it.  What the claim read: the SQL statements\n"
            "    it ran (the board lookup, the unit of work's hold, state and rows, the append and its fold), the\n"
            "    signals its decision loaded from the read model, and the events it replayed (only while the read\n"
            "    model is behind the log); board version: the board's own stream; log events: every event of the\n"
            "    board in the log, its entries' streams included.",
        )
    )
    say(
        f"    cold command large/small{where}: {ratio['command']}x (target <= {TARGET_COLD_RATIO:g}x): {verdict(ok)}"
    )
    targets.append(
        _target(
            f"(c) cold command large/small (engine, service, one claim){where}",
            ratio["command"],
            f"<= {TARGET_COLD_RATIO:g}",
            ok,
        )
    )
    return targets


def print_rebuild(reb: dict[str, Any]) -> list[dict[str, Any]]:
    rows, targets = [], []
    for db in ("sqlite", "postgresql"):
        r = reb.get(db, {})
        if "events" not in r:
            continue
        rate = r["events_per_second"]
        ok = rate["after"] >= TARGET_REBUILD
        rows.append(
            [
                db,
                r["events"],
                "/".join(str(v) for v in r["events_by_type"].values()),
                rate["before"],
                rate["after"],
                r["ratio_after_over_before"],
                "/".join(str(r.get("cpu_us_per_event", {}).get(k, "-")) for k in ("before", "after")),
                f">= {TARGET_REBUILD:,}",
                verdict(ok),
                r["read_model_correct"],
                r["same_tables_both_paths"],
            ]
        )
        targets.append(
            _target(f"(d) rebuild events/s, {db} (after)", rate["after"], f">= {TARGET_REBUILD:,}", ok)
        )
        if "ratio_after_over_decode_only" in r:
            over = r["ratio_after_over_decode_only"]
            targets.append(
                _target(
                    f"(d) rebuild / decode-only read of the same events, {db} "
                    f"(decode-only {r['decode_only_events_per_second']:,} ev/s)",
                    over,
                    f">= {TARGET_REBUILD_OVER_DECODE}",
                    over >= TARGET_REBUILD_OVER_DECODE,
                )
            )
    say(
        table(
            "(d) rebuild of the read model (Projector.rebuild(resume=False)): before (pages of 5,000) and after "
            "(20,000), taking turns on one log",
            [
                "database",
                "events",
                "posted/claimed/completed",
                "before ev/s",
                "after ev/s",
                "after/before",
                "CPU µs/event before/after",
                "target",
                "verdict",
                "read model ok",
                "same rows",
            ],
            rows,
            "    before: pydantic events from SQLAlchemy rows, rows written by SQLAlchemy Core (the normal path);\n"
            "    after: the container's projector (rows on the driver's cursor, the one event decoder, the driver's\n"
            "    executemany; COPY on PostgreSQL). events/s: the best of each path's rounds; CPU: this process's\n"
            "    (not the PostgreSQL server's), the least round;\n"
            "    same rows: every table the fold writes, by both.",
        )
    )
    return targets


def print_control(x: dict[str, Any]) -> list[dict[str, Any]]:
    from bench.control import NEXT_DUE, TARGET_CANCEL_P99_MS, TARGET_LATER_P99_MS

    targets = []
    rows = []
    for db, r in x["cancel"].items():
        d = r["cancel_to_handler_end"]
        ok = x["pass"][f"cancel/{db}"]
        rows.append(
            [
                db,
                d["n"],
                d["p50_ms"],
                d["p90_ms"],
                d["p99_ms"],
                d["max_ms"],
                r["cancel_call"]["p50_ms"],
                r["all_cancelled"],
                f"<= {TARGET_CANCEL_P99_MS[db]:g}",
                verdict(ok),
            ]
        )
        targets.append(
            _target(
                f"(x) cancel -> handler's end p99 ms, {db}",
                d["p99_ms"],
                f"<= {TARGET_CANCEL_P99_MS[db]:g}",
                ok,
            )
        )
    if rows:
        say(
            table(
                "(x) cancel: a running handler (a `command`) in a worker process; ms from the cancel to its end",
                [
                    "database",
                    "cancels",
                    "p50",
                    "p90",
                    "p99",
                    "max",
                    "cancel call p50",
                    "CANCELLED",
                    "p99 target",
                    "verdict",
                ],
                rows,
                "    the cancel goes through BlackboardService in this process (what `blackboard cancel` calls);\n"
                "    the handler's end: its process gone or a zombie (/proc), polled every millisecond.",
            )
        )
    rows = []
    for db, r in x["later"].items():
        d, idle = r["due_to_claim"], r["idle_statements_per_s"]
        ok = x["pass"][f"later/{db}"]
        rows.append(
            [
                db,
                d["n"],
                d["p50_ms"],
                d["p99_ms"],
                d["max_ms"],
                r["claimed_early"],
                idle["before (idle, without the next-due query)"]["all"],
                idle["now, nothing waits"]["all"],
                idle["now, nothing waits"].get(NEXT_DUE, 0),
                idle["now, a signal waits for its time"]["all"],
                idle["now, a signal waits for its time"].get(NEXT_DUE, 0),
                verdict(ok),
            ]
        )
        targets.append(
            _target(f"(x) later: due -> claim p99 ms, {db}", d["p99_ms"], f"<= {TARGET_LATER_P99_MS:g}", ok)
        )
    if rows:
        say(
            table(
                "(x) later: signals posted with --not-before, one idle worker; ms from due to claim, and the idle "
                "worker's SQL statements per second",
                [
                    "database",
                    "signals",
                    "p50",
                    "p99",
                    "max",
                    "early",
                    "stmts/s before",
                    "now idle",
                    "rounds/s idle",
                    "now, one waits",
                    "rounds/s, one waits",
                    "verdict",
                ],
                rows,
                "    before: the idle worker's statements without the next-due query (what it asked before\n"
                "    --not-before existed); now idle: nothing waits; one waits: a signal due after the window.\n"
                "    rounds/s: the claim loop's idle rounds (one next-due query each; the goal: no more while\n"
                "    a signal waits); the worker's claim timeout is 3 s, so it sweeps (a round) every second.",
            )
        )
    return targets


def print_locking(lock: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for mode in ("deferred", "immediate"):
        r = lock[mode]
        rows.append(
            [
                mode,
                r["attempted"],
                r["succeeded"],
                r["database_is_locked"],
                r["other_errors"],
                r["rows_stored"],
                r["max_append_ms"],
                r["wall_s_including_process_start"],
            ]
        )
    say(
        table(
            f"(e) {lock['processes']} processes x {lock['appends_per_process']} appends on SQLite WAL, "
            f"busy_timeout {lock['busy_timeout_s']:g}s, read-then-write transactions, no retries",
            ["transactions", "attempted", "ok", "db locked", "other err", "rows", "max ms", "wall s"],
            rows,
            "    deferred: " + lock["deferred"]["how"] + "\n    immediate: " + lock["immediate"]["how"],
        )
    )
    lost = lock["immediate"]["database_is_locked"] + lock["immediate"]["other_errors"]
    return [_target("(e) appends lost with BEGIN IMMEDIATE", lost, "0", lost == 0)]


def print_workers(wk: dict[str, Any]) -> list[dict[str, Any]]:
    from bench.workers import TARGET_P99_MS, TARGET_RATIO

    rows = []
    for k, d in wk["drain"].items():
        rows.append(
            [
                k,
                d["signals"],
                d["drain_s"],
                d["signals_per_s"],
                d["startup_s"]["max"],
                d["first_claim_after_commit_ms"],
                d["claim_to_completed"].get("p50_ms", "-"),
                d["completed_to_next_claim"].get("p50_ms", "-"),
                d["cpu_ms_per_signal"],
                "/".join(str(c) for c in d["claims_per_worker"]),
                d["load_average_1min"][1],
            ]
        )
    extra = " ".join(x for x in (wk["sizes"]["BENCH_WORKER_ARGS"], wk["sizes"]["BENCH_WORKER_ENV"]) if x)
    extra = f" + {extra}" if extra else ""
    say(
        table(
            f"(f) drain: k `blackboard worker --agent bench-noop{extra}` processes, handler `true`, SQLite file, "
            "synchronous=FULL",
            [
                "workers",
                "signals",
                "drain s",
                "signals/s",
                "start-up s",
                "1st claim ms",
                "claim>done ms",
                "done>next claim ms",
                "cpu ms/signal",
                "claims per worker",
                "load",
            ],
            rows,
            '    the backlog appears in one transaction (events and rows) once every worker has logged "started" and\n'
            "    gone idle; drain s runs from that commit until the read model shows all COMPLETED.  start-up:\n"
            '    process start to "started" (slowest).\n'
            "    claim>done and done>next claim: medians from the event log (the handler and recording its outcome;\n"
            "    the worker's loop between two signals).  cpu: all workers and their handlers, per signal.",
        )
    )
    targets = []
    ratio = wk.get("ratio_4_over_1")
    if ratio is not None:
        ok = ratio >= TARGET_RATIO
        say(f"    4 workers / 1 worker: {ratio}x signals/s (target >= {TARGET_RATIO}): {verdict(ok)}")
        targets.append(_target("(f) drain signals/s, 4 workers / 1 worker", ratio, f">= {TARGET_RATIO}", ok))
    rows = []
    for k, w in wk["wakeup"].items():
        lat = w["post_to_claim"]
        rows.append(
            [
                k,
                w["signals"],
                lat["p50_ms"],
                lat["p90_ms"],
                lat["p99_ms"],
                lat["max_ms"],
                w["post_decided_to_append_start"]["p50_ms"],
                w["post_append_start_to_claim"]["p50_ms"],
                w["idle_cpu_percent_per_worker"],
                w["load_average_1min"][1],
                verdict(lat["p99_ms"] <= TARGET_P99_MS),
            ]
        )
        targets.append(
            _target(
                f"(f) wake-up post -> claim p99 ms, {k} idle worker(s)",
                lat["p99_ms"],
                f"<= {TARGET_P99_MS:g}",
                lat["p99_ms"] <= TARGET_P99_MS,
            )
        )
    if rows:
        gap = wk["sizes"]["BENCH_WAKEUP_GAP_MS"]
        say(
            table(
                f"(f) wake-up: signals posted one at a time ({gap} ms apart) through BlackboardService; "
                "ms from the post event's occurred_at to the claim event's",
                [
                    "idle workers",
                    "signals",
                    "p50",
                    "p90",
                    "p99",
                    "max",
                    "post>append",
                    "append>claim",
                    "idle cpu %/worker",
                    "load",
                    f"p99<={TARGET_P99_MS:g}",
                ],
                rows,
                "    post>append: the poster's own decide-to-append step (median); append>claim: from the post's\n"
                "    append starting to the worker's claim decision (median).\n"
                "    idle cpu: one CPU's share each idle worker\n"
                "    used over 2 s with nothing to do, before the posts.",
            )
        )
    return targets


if __name__ == "__main__":
    main()
