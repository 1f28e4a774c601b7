"""Queued work does not expire behind a busy worker (issue 22): workers announce themselves, and a POSTED
signal's post timeout runs only while no live worker fits it. Real `blackboard worker` processes with
short timeouts (a 2 s post timeout, a 5 s handler, beats every second), on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.e2e.conftest import Cli, database_url
from tests.waiting import wait_until

POST_TIMEOUT = 2.0
ENV = {
    "BLACKBOARD_POST_TIMEOUT": f"{POST_TIMEOUT:g}",
    "BLACKBOARD_BEAT_INTERVAL": "1",  # stale after 3 missed beats: 3 s
    "BLACKBOARD_CLAIM_TIMEOUT": "120",
}
SLOW = """---
name: ps-slow
description: Takes {seconds} seconds over each signal.
capabilities: {{RESEARCH: 0.95}}
command: sleep {seconds}; echo done
timeout: 60
---
Slow work.
"""
REVIEWER = """---
name: ps-reviewer
capabilities: {REVIEW: 0.95}
command: echo reviewed
---
Reviews; no worker of it runs in these tests.
"""


@pytest.fixture(params=["sqlite", "postgresql"])
def pcli(request, make_cli, tmp_path_factory, tmp_path) -> Cli:
    url = database_url(request, tmp_path_factory, "presence")
    agents = tmp_path / "agents"
    agents.mkdir()
    (agents / "ps-slow.md").write_text(SLOW.format(seconds=5), encoding="utf-8")
    (agents / "ps-hang.md").write_text(
        SLOW.format(seconds=30).replace("ps-slow", "ps-hang"), encoding="utf-8"
    )
    (agents / "ps-reviewer.md").write_text(REVIEWER, encoding="utf-8")
    cli = make_cli(url, tmp_path, agents)
    cli.ok("events", "--limit", "1")  # the schema exists before the worker starts
    return cli


def post(cli: Cli, entry: str, signal_type: str = "RESEARCH", capability: str | None = None) -> str:
    targets = ["--capability", capability] if capability else []
    args = ["post", "--type", signal_type, "--ps-id", "ps-q", "--entry-id", entry, "--topic", entry, *targets]
    return cli.ok(*args, env=ENV)["signal_id"]


def show(cli: Cli, sig: str) -> dict:
    return cli.ok("show", sig, env=ENV)


def at(text: str) -> datetime:
    return datetime.fromisoformat(text)


def post_two(cli: Cli) -> tuple[str, str]:
    """Two RESEARCH signals posted at once, in the order the worker claims them (the first claimed first)."""
    calls = {
        entry: (
            [
                "--json",
                "post",
                "--type",
                "RESEARCH",
                "--ps-id",
                "ps-q",
                "--entry-id",
                entry,
                "--topic",
                entry,
            ],
            ENV,
        )
        for entry in ("e-1", "e-2")
    }
    sigs = [json.loads(f.result().expect(0).stdout)["signal_id"] for f in cli.many(calls).values()]
    first = wait_until(
        lambda: next((s for s in sigs if show(cli, s)["status"] != "POSTED"), None), what="the first claim"
    )
    return first, next(s for s in sigs if s != first)


def live_workers(cli: Cli) -> Callable[[], bool]:
    """Whether `status` shows a live worker (in its text: there may be no board yet)."""
    return lambda: "live workers" in cli("status", env=ENV).expect(0).stdout


def test_a_queued_signal_waits_while_the_only_worker_that_fits_it_is_busy(pcli):
    signals = [post(pcli, "e-1"), post(pcli, "e-2")]  # queued before the worker starts, as a backlog is
    worker = pcli.start("worker", "--agent", "ps-slow", env=ENV)
    first = wait_until(
        lambda: next((s for s in signals if show(pcli, s)["status"] != "POSTED"), None),
        what="the first claim",
    )
    second = next(s for s in signals if s != first)

    wait_past_post_timeout(pcli, second)  # it has waited past the post timeout, behind the busy worker
    swept = pcli.ok("expire", env=ENV)  # a sweep by hand, from another process
    done = wait_until(
        lambda: (s := show(pcli, second))["status"] in ("COMPLETED", "EXPIRED") and s,
        timeout=60,
        what="the second",
    )
    worker.send_signal(signal.SIGTERM)
    pcli.finish(worker).expect(0)

    assert swept == [] and show(pcli, first)["status"] == "COMPLETED"
    assert done["status"] == "COMPLETED", done["result"]
    assert (at(done["claimed_at"]) - at(done["claimable_since"])).total_seconds() > POST_TIMEOUT


def wait_past_post_timeout(cli: Cli, sig: str) -> None:
    """Until the signal has been claimable for longer than the post timeout (by this host's clock)."""
    since = at(show(cli, sig)["claimable_since"])
    time.sleep(max(0.0, POST_TIMEOUT + 0.5 - (datetime.now(UTC) - since).total_seconds()))


def test_status_lists_each_live_worker_and_what_it_runs_until_it_stops(pcli):
    worker = pcli.start("worker", "--agent", "ps-hang", "--grace", "0", env=ENV)
    wait_until(live_workers(pcli), what="the worker's first beat")
    sig = post(pcli, "e-1")

    busy = wait_until(
        lambda: (o := pcli.ok("status", env=ENV)) and o[0]["workers"][0]["running"] and o, what="a beat"
    )
    worker.send_signal(signal.SIGTERM)
    pcli.finish(worker).expect(0)
    after = pcli.ok("status", env=ENV)

    [board] = busy
    [live] = board["workers"]
    assert (live["agent"], live["running"], live["boards"]) == ("ps-hang", [sig], None)
    assert (live["host"], live["pid"]) == (socket.gethostname(), worker.call_pid)
    assert "ps-hang" in board["live_workers"]
    assert after[0]["workers"] == [] and after[0]["live_workers"] == []  # stopped: no longer live


def test_a_signal_no_live_worker_fits_still_expires_on_time(pcli):
    worker = pcli.start("worker", "--agent", "ps-slow", env=ENV)  # live, idle, and fits RESEARCH only
    sig = post(pcli, "e-9", signal_type="REVIEW")  # ps-reviewer fits it, but runs nowhere

    ended = wait_until(
        lambda: (s := show(pcli, sig))["status"] != "POSTED" and s, timeout=30, what="the expiry by the sweep"
    )
    worker.send_signal(signal.SIGTERM)
    pcli.finish(worker).expect(0)

    assert ended["status"] == "EXPIRED"
    assert ended["result"]["error"] == (
        f"not claimed within {POST_TIMEOUT:g}s of becoming claimable; no live worker fits it since it "
        f"became claimable at {at(ended['claimable_since']).isoformat()}"
    )
    waited = (at(ended["completed_at"]) - at(ended["claimable_since"])).total_seconds()
    assert POST_TIMEOUT <= waited < POST_TIMEOUT + 10  # by the next sweeps, not held by the live worker


def test_a_killed_worker_stops_counting_once_its_beats_go_stale(pcli):
    worker = pcli.start("worker", "--agent", "ps-hang", "--grace", "0", env=ENV)
    wait_until(live_workers(pcli), what="the worker's first beat")
    first, second = post_two(pcli)
    wait_past_post_timeout(pcli, second)
    held = pcli.ok("expire", env=ENV)  # past its post timeout, but a live worker fits it

    handlers = children(worker.call_pid)
    os.kill(worker.call_pid, signal.SIGKILL)  # no stop said: its row goes stale after 3 missed beats
    worker.wait()
    for pid in handlers:  # its handler's process group, which a killed worker leaves behind
        os.killpg(pid, signal.SIGKILL)
    killed_at = time.monotonic()
    ended = wait_until(lambda: pcli.ok("expire", env=ENV), timeout=30, what="the expiry once it went stale")
    waited = time.monotonic() - killed_at
    overview = pcli.ok("status", env=ENV)

    assert held == [] and [s["signal_id"] for s in ended] == [second]
    reason = ended[0]["result"]["error"]
    assert reason.startswith(
        f"not claimed within {POST_TIMEOUT:g}s of becoming claimable; the last worker that fits it, "
        f"ps-hang on {socket.gethostname()}:{worker.call_pid}, stopped beating at "
    ), reason
    assert waited >= POST_TIMEOUT  # its post timeout ran only once the worker had gone stale
    assert overview[0]["workers"] == [] and show(pcli, first)["status"] == "CLAIMED"  # its lease runs on


def children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (Linux's /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def test_a_worker_serving_one_board_does_not_hold_signals_of_another(pcli):
    worker = pcli.start("worker", "--agent", "ps-hang", "--board", "elsewhere", "--grace", "0", env=ENV)
    sig = post(pcli, "e-1")  # on board ps-q, which the live worker does not serve

    ended = wait_until(lambda: pcli.ok("expire", env=ENV), timeout=30, what="the expiry")
    worker.send_signal(signal.SIGTERM)
    pcli.finish(worker).expect(0)

    assert [s["signal_id"] for s in ended] == [sig] and "no live worker fits it" in ended[0]["result"][
        "error"
    ]


def test_a_claim_past_the_earliest_deadline_goes_through_while_a_live_worker_fits(pcli):
    """The decision-time deadline check keeps the sweeper's rule: a claim by hand of a signal queued
    behind a busy worker that fits it is not refused as expired."""
    worker = pcli.start("worker", "--agent", "ps-hang", "--grace", "0", env=ENV)
    wait_until(live_workers(pcli), what="the worker's first beat")
    first, second = post_two(pcli)
    wait_past_post_timeout(pcli, second)

    claimed = pcli.ok("claim", second, "--agent", "ps-slow", env=ENV)
    worker.send_signal(signal.SIGTERM)
    pcli.finish(worker).expect(0)

    assert claimed["status"] == "CLAIMED" and claimed["claimed_by"] == "ps-slow"
    assert (at(claimed["claimed_at"]) - at(claimed["claimable_since"])).total_seconds() > POST_TIMEOUT


def test_status_text_lists_live_workers_and_what_each_runs(pcli):
    worker = pcli.start("worker", "--agent", "ps-hang", "--grace", "0", env=ENV)
    wait_until(live_workers(pcli), what="the worker's first beat")
    first = post(pcli, "e-1")
    text = wait_until(
        lambda: next((t for t in [pcli("status", env=ENV).stdout] if first in t), None), what="a beat"
    )
    worker.send_signal(signal.SIGTERM)
    pcli.finish(worker).expect(0)

    lines = text.splitlines()
    workers = lines[lines.index("live workers") :]  # the second table's title
    row = next(line for line in workers if "ps-hang" in line)
    assert f"{socket.gethostname()}:{worker.call_pid}" in row and f"{first} (ps-q)" in row and " all " in row
