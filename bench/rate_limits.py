"""(rate) Shared rate limits against an API that enforces its own (docs/control.md, "Rate limits").

A local stand-in of the Messages API (tests/runners/standins.py, `ApiLimit`) answers 429 past a fixed
requests-per-minute and tokens-per-minute, kept as a bucket refilled continuously (as Anthropic keeps its
own), and sends the rate-limit headers with every answer. One agent run by the anthropic runner names the same
limits in its `rate_limit`; a backlog larger than the run can drain is posted first. Eight runner slots then
take it: on SQLite 2 `blackboard worker` processes with `--concurrency 4`; on PostgreSQL 2 hosts simulated as 2
process groups, each of 2 processes with `--concurrency 2`. After BENCH_RATE_SECONDS
the workers are stopped and the stand-in's log of answers is read: after the first minute (from the first
call), the share of calls answered 429 (goal <= 1%) and the calls answered as a share of what the limit lets
through in that time (goal >= 90%). The binding limit is the tighter of the two: BENCH_RATE_RPM requests, or
BENCH_RATE_TPM tokens at CALL_TOKENS a call.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.common import started_workers, table, temp_dir, verdict

CALL_TOKENS = (1000, 100)  # input and output tokens of every answer
MAX_429_SHARE, MIN_THROUGHPUT = 0.01, 0.90
WARM_UP_S = 60.0  # the first minute is left out: the API's bucket and the window both start full
ANSWER_S = 0.05  # how long the stand-in takes to answer
AGENT = (
    "---\nname: writer\ncapabilities: {{SYNTHESIS: 0.9}}\nrunner: anthropic\nmodel: sonnet\n"
    "rate_limit: {{key: bench-api, requests_per_minute: {rpm}, tokens_per_minute: {tpm}}}\n---\nYou write.\n"
)
CLI = "import sys\nfrom blackboard.infrastructure.cli import main\nsys.exit(main())\n"


def run(pg_url: str | None, seconds: float, rpm: int, tpm: int) -> dict[str, Any]:
    per_minute = min(rpm, tpm / sum(CALL_TOKENS))
    report: dict[str, Any] = {
        "requests_per_minute": rpm,
        "tokens_per_minute": tpm,
        "call_tokens": sum(CALL_TOKENS),
        "calls_per_minute_allowed": round(per_minute, 2),
        "seconds": seconds,
        "stores": {},
    }
    with temp_dir("rate-limits") as where:
        report["stores"]["sqlite"] = _measure(
            where / "sqlite",
            f"sqlite:///{where / 'rate.db'}",
            seconds,
            rpm,
            tpm,
            groups=1,
            processes=2,
            slots=4,
        )
        if pg_url:
            from bench.postgres.databases import Databases

            try:
                dbs = Databases(pg_url)
                dbs.server_version()
            except Exception as exc:  # noqa: BLE001 - no server: SQLite's figures alone, and why
                print(f"   .. (rate): PostgreSQL skipped: {type(exc).__name__}: {exc}", file=sys.stderr)
            else:
                try:
                    url = dbs.sqlalchemy_url(dbs.create("rate_limits"))
                    report["stores"]["postgresql"] = _measure(
                        where / "pg", url, seconds, rpm, tpm, groups=2, processes=2, slots=2
                    )
                finally:
                    dbs.close()
    report["pass"] = all(
        s["share_429"] <= MAX_429_SHARE and s["throughput_share"] >= MIN_THROUGHPUT
        for s in report["stores"].values()
    )
    return report


def _measure(
    where: Path, url: str, seconds: float, rpm: int, tpm: int, groups: int, processes: int, slots: int
) -> dict[str, Any]:
    from tests.runners.standins import ApiLimit, StandIn, say, slow

    agents = where / "agents"
    agents.mkdir(parents=True)
    (agents / "writer.md").write_text(AGENT.format(rpm=rpm, tpm=tpm), encoding="utf-8")
    limit = ApiLimit(rpm, tpm)
    answer = slow(ANSWER_S, say("done", input_tokens=CALL_TOKENS[0], output_tokens=CALL_TOKENS[1]))
    api = StandIn(lambda body: answer, limit).start()
    env = {k: v for k, v in os.environ.items() if not k.startswith("BLACKBOARD_")}
    env |= {
        "BLACKBOARD_DB": url,
        "BLACKBOARD_AGENTS_DIR": str(agents),
        "BLACKBOARD_POST_TIMEOUT": "3600",
        "ANTHROPIC_BASE_URL": api.url,
        "ANTHROPIC_API_KEY": "sk-ant-bench",
    }
    per_minute = min(rpm, tpm / sum(CALL_TOKENS))
    _post(env, int(per_minute * (1 + seconds / 60) * 1.2) + 20)  # more than the run can drain
    workers: list[subprocess.Popen[str]] = []
    try:
        for _ in range(groups):  # each group a host of its own: a process group, its processes in it
            workers += _workers(env, where, processes, slots)
        time.sleep(seconds)
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
    answered = list(limit.answered)
    if not answered:
        raise RuntimeError("no call reached the stand-in")
    first = answered[0][0]
    measured = [status for at, status in answered if at - first >= WARM_UP_S and at - first <= seconds]
    window_s = max(0.0, min(seconds, answered[-1][0] - first) - WARM_UP_S)
    ok = sum(1 for s in measured if s == 200)
    refused = sum(1 for s in measured if s == 429)
    allowed = per_minute * window_s / 60
    return {
        "workers": f"{groups} x {processes} processes x --concurrency {slots}",
        "calls": len(answered),
        "calls_429": sum(1 for _, s in answered if s == 429),
        "measured_s": round(window_s, 1),
        "measured_calls": len(measured),
        "measured_429": refused,
        "share_429": refused / len(measured) if measured else 1.0,
        "throughput_share": ok / allowed if allowed else 0.0,
        "calls_per_minute": round(ok * 60 / window_s, 1) if window_s else 0.0,
    }


def _post(env: dict[str, str], count: int) -> None:
    code = (
        "import sys\n"
        "from blackboard.application.commands import PostSignal\n"
        "from blackboard.infrastructure.composition import settings\n"
        "from blackboard.infrastructure.composition.container import Container\n"
        "service = Container(config=settings.load({})).service()\n"
        "for n in range(int(sys.argv[1])):\n"
        "    service.post_signal(PostSignal(signal_type='SYNTHESIS', ps_id='ps-rate', entry_id=f'e-{n}',\n"
        "                                   topic=f'part {n}'))\n"
    )
    done = subprocess.run([sys.executable, "-c", code, str(count)], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"posting the backlog failed: {done.stderr.strip()[-800:]}")


def _workers(env: dict[str, str], cwd: Path, count: int, slots: int) -> list[subprocess.Popen[str]]:
    """`count` workers in one new process group (a host of their own), returned once each says it started; their
    logs drained on threads of their own (a full pipe would stall them)."""
    started = []
    leader: int | None = None
    for _ in range(count):
        proc = subprocess.Popen(
            [sys.executable, "-c", CLI, "worker", "--agent", "writer", "--concurrency", str(slots)],
            env=env,
            cwd=cwd,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            process_group=0 if leader is None else leader,  # the group's first leads it
        )
        leader = proc.pid if leader is None else leader
        started.append(proc)
    return started_workers(started, 120)


def print_report(report: dict[str, Any], say: Callable[[str], None]) -> dict[str, Any]:
    say(
        table(
            f"(rate) 8 runner slots against an API enforcing {report['requests_per_minute']} requests and "
            f"{report['tokens_per_minute']:,} tokens a minute ({report['call_tokens']:,} tokens a call: "
            f"{report['calls_per_minute_allowed']} calls a minute), the same rate_limit in the agent file",
            [
                "store",
                "workers",
                "calls",
                "429s",
                "after 1 min: s",
                "calls",
                "429 share",
                "calls/min",
                "x limit",
            ],
            [
                [
                    name,
                    s["workers"],
                    s["calls"],
                    s["calls_429"],
                    s["measured_s"],
                    s["measured_calls"],
                    f"{s['share_429']:.2%}",
                    s["calls_per_minute"],
                    round(s["throughput_share"], 3),
                ]
                for name, s in report["stores"].items()
            ],
            note=f"goal, after the first minute: 429s <= {MAX_429_SHARE:.0%} of calls, throughput >= "
            f"{MIN_THROUGHPUT:.0%} of the limit",
        )
    )
    stores = report["stores"].values()
    return {
        "name": "(rate) 429 share after the first minute; throughput / the limit (worst store)",
        "measured": (
            f"{max(s['share_429'] for s in stores):.2%}; {min(s['throughput_share'] for s in stores):.3f}"
            if stores
            else None
        ),
        "target": f"<= {MAX_429_SHARE:.0%}; >= {MIN_THROUGHPUT}",
        "verdict": verdict(report["pass"]),
    }


if __name__ == "__main__":
    found = run(
        os.environ.get("BENCH_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"),
        float(os.environ.get("BENCH_RATE_SECONDS", "150")),
        int(os.environ.get("BENCH_RATE_RPM", "120")),
        int(os.environ.get("BENCH_RATE_TPM", "110000")),
    )
    print_report(found, print)
