"""Retries (docs/control.md) through the real CLI and a real worker, on SQLite and PostgreSQL: a failed
attempt with attempts left puts the same signal back to POSTED until an attempt succeeds or the last one fails,
what waits on it waits for that final outcome, a handler asks for a retry with exit 75 or `retry_after`, and a
claim that lapses is a failed attempt too."""

from __future__ import annotations

import sys
from datetime import datetime

import pytest

from tests.e2e.conftest import Cli, assert_signal, cli_with_agents
from tests.waiting import wait_until

# A handler whose behaviour the topic picks: `flaky` fails its first two attempts, `ask` exits 75 once,
# `wait` asks for a retry in 1 s once, `broken` always fails; anything else succeeds. It says which attempt
# it was on (the signal document's `attempt`) and counts its own runs per signal.
HANDLER = """\
import json, pathlib, sys
doc = json.load(sys.stdin)
topic, attempt = doc["payload"]["topic"], doc["attempt"]
runs = pathlib.Path(f"runs-{doc['signal_id']}")
runs.write_text(str(int(runs.read_text()) + 1 if runs.exists() else 1))
if topic == "flaky" and attempt < 3:
    sys.exit(f"flaky attempt {attempt}")
if topic == "ask" and attempt < 2:
    sys.exit(75)
if topic == "wait" and attempt < 2:
    print(json.dumps({"retry_after": 1, "error": "the source said later"}))
    sys.exit(0)
if topic == "broken":
    sys.exit(f"still broken on attempt {attempt}")
print(json.dumps({"knowledge_items": [f"done on attempt {attempt}"]}))
"""

AGENT = f"""---
name: ps-flaky
capabilities: {{RESEARCH: 0.95}}
command: {sys.executable} handler.py
retries: {{max_attempts: 3, backoff: fixed, initial: 200ms, max: 1s, jitter: 0}}
---
Fails now and then.
"""


@pytest.fixture(params=["sqlite", "postgresql"])
def rcli(request, make_cli, tmp_path_factory, tmp_path) -> Cli:
    made = cli_with_agents(
        request,
        make_cli,
        tmp_path_factory,
        tmp_path,
        "retries",
        {"ps-flaky.md": AGENT, "handler.py": HANDLER},
    )
    made.ok("events", "--limit", "1")  # the schema exists before a worker starts
    return made


def final(cli: Cli, signal_id: str, timeout: float = 90) -> dict:
    return wait_until(
        lambda: (s := cli.ok("show", signal_id))["status"] in ("COMPLETED", "FAILED", "EXPIRED") and s,
        timeout=timeout,
        what=f"{signal_id} to end",
    )


def events_of(cli: Cli, signal_id: str) -> list[dict]:
    return [
        e
        for e in cli.ok("events", "--all")
        if e["data"].get("signal_id") == signal_id and e["event_type"].startswith("AgentSignal")
    ]


def test_a_handler_that_fails_twice_then_succeeds_completes_on_attempt_3_and_its_dependant_then_runs(rcli):
    flaky = rcli.post(ps="ps-r", entry="e-1", topic="flaky")
    after = rcli.post("--after", flaky["signal_id"], ps="ps-r", entry="e-2", topic="then this")
    worker = rcli.start("worker", "--agent", "ps-flaky", "--board", "ps-r")

    done = final(rcli, after["signal_id"])
    worker.terminate()
    rcli.finish(worker)

    first = assert_signal(rcli.ok("show", flaky["signal_id"]))
    assert done["status"] == "COMPLETED"
    assert first["status"] == "COMPLETED"
    assert (first["attempt"], first["max_attempts"]) == (3, 3)
    assert first["result"]["knowledge_items"] == ["done on attempt 3"]
    assert [a["attempt"] for a in first["attempts"]] == [1, 2]
    assert [a["error"] for a in first["attempts"]] == [
        "exit 1: flaky attempt 1",
        "exit 1: flaky attempt 2",
    ]
    assert all(a["claimed_by"] == "ps-flaky" and not a["expired"] for a in first["attempts"])
    for a in first["attempts"]:  # each retry waited its backoff (200 ms, no jitter)
        assert (
            datetime.fromisoformat(a["retry_at"]) - datetime.fromisoformat(a["ended_at"])
        ).total_seconds() == 0.2
    assert datetime.fromisoformat(done["claimed_at"]) >= datetime.fromisoformat(first["completed_at"])
    assert (rcli.agents_dir / f"runs-{flaky['signal_id']}").read_text() == "3"
    kinds = [e["event_type"] for e in events_of(rcli, flaky["signal_id"])]
    assert kinds == [
        "AgentSignalPosted",
        "AgentSignalClaimed",
        "AgentSignalAttemptFailed",
        "AgentSignalClaimed",
        "AgentSignalAttemptFailed",
        "AgentSignalClaimed",
        "AgentSignalCompleted",
    ]
    retried = next(
        e for e in events_of(rcli, flaky["signal_id"]) if e["event_type"] == "AgentSignalAttemptFailed"
    )
    assert (retried["data"]["claimed_by"], retried["data"]["reason"]) == (
        "ps-flaky",
        "exit 1: flaky attempt 1",
    )


def test_a_handler_asks_for_a_retry_with_exit_75_or_retry_after(rcli):
    ask = rcli.post(ps="ps-r", entry="e-1", topic="ask")
    wait = rcli.post(ps="ps-r", entry="e-2", topic="wait")
    worker = rcli.start("worker", "--agent", "ps-flaky", "--board", "ps-r")

    asked, waited = final(rcli, ask["signal_id"]), final(rcli, wait["signal_id"])
    worker.terminate()
    rcli.finish(worker)

    assert (asked["status"], asked["attempt"]) == ("COMPLETED", 2)
    assert asked["attempts"][0]["error"].startswith("exit 75 (asked for a retry)")
    assert (waited["status"], waited["attempt"]) == ("COMPLETED", 2)
    failed = waited["attempts"][0]
    assert failed["error"] == "handler output: asked for a retry in 1s: the source said later"
    wait_s = (
        datetime.fromisoformat(failed["retry_at"]) - datetime.fromisoformat(failed["ended_at"])
    ).total_seconds()
    assert wait_s == 1.0  # its retry_after, not the backoff's 200 ms


def test_the_last_attempt_failing_fails_the_signal_and_what_waits_on_it_expires(rcli):
    broken = rcli.post(
        "--max-attempts", "2", ps="ps-r", entry="e-1", topic="broken"
    )  # the post wins: 2, not 3
    after = rcli.post("--after", broken["signal_id"], ps="ps-r", entry="e-2", topic="never")
    assert (broken["attempt"], broken["max_attempts"]) == (1, 2)
    worker = rcli.start("worker", "--agent", "ps-flaky", "--board", "ps-r")

    ended = final(rcli, broken["signal_id"])
    dependant = final(rcli, after["signal_id"])
    worker.terminate()
    rcli.finish(worker)

    assert (ended["status"], ended["attempt"], ended["max_attempts"]) == ("FAILED", 2, 2)
    assert ended["result"]["error"] == "exit 1: still broken on attempt 2"
    assert [a["error"] for a in ended["attempts"]] == ["exit 1: still broken on attempt 1"]
    assert dependant["status"] == "EXPIRED"
    assert broken["signal_id"] in dependant["result"]["error"]
    assert (
        rcli("--json", "wait", broken["signal_id"], "--timeout", "5").expect(3).json()["status"] == "FAILED"
    )


def test_a_claim_that_lapses_with_attempts_left_goes_back_to_posted_and_is_done_later(rcli):
    quick = {"BLACKBOARD_CLAIM_TIMEOUT": "0.5"}
    posted = rcli.post(ps="ps-r", entry="e-1", topic="anything")
    rcli.ok("claim", posted["signal_id"], "--agent", "ps-flaky", env=quick)  # a worker that then died

    swept = wait_until(lambda: rcli.ok("expire", env=quick), timeout=30, what="the lapsed claim to be swept")

    assert [(s["signal_id"], s["status"], s["attempt"]) for s in swept] == [
        (posted["signal_id"], "POSTED", 2)
    ]
    again = assert_signal(rcli.ok("show", posted["signal_id"]))
    assert again["claimed_by"] is None and again["not_before"] is not None
    assert again["attempts"][0]["expired"] is True
    assert "did not finish within the claim timeout" in again["attempts"][0]["error"]
    worker = rcli.start("worker", "--agent", "ps-flaky", "--board", "ps-r")
    done = final(rcli, posted["signal_id"])
    worker.terminate()
    rcli.finish(worker)
    assert (done["status"], done["attempt"]) == ("COMPLETED", 2)
    assert done["result"]["knowledge_items"] == ["done on attempt 2"]


@pytest.mark.parametrize("bad", ["0", "-1", "1001", "three"])
def test_max_attempts_that_makes_no_sense_exits_2_naming_the_option_and_writes_nothing(rcli, bad):
    before = rcli.ok("events", "--all")

    refused = rcli(
        "post",
        "--type",
        "RESEARCH",
        "--ps-id",
        "ps-r",
        "--entry-id",
        "e-1",
        "--topic",
        "t",
        f"--max-attempts={bad}",
    ).expect(2)

    assert (
        "--max-attempts: " in refused.stderr
    )  # the command model's rule (docs/architecture.md, "One validation layer")
    assert any(
        rule in refused.stderr
        for rule in ("greater than or equal to 1", "less than or equal to 1000", "valid integer")
    ), refused.stderr
    assert rcli.ok("events", "--all") == before


def test_replay_rebuild_time_travel_export_and_import_carry_the_failed_attempts(rcli, make_cli, tmp_path):
    quick = {"BLACKBOARD_CLAIM_TIMEOUT": "0.5"}
    posted = rcli.post("--max-attempts", "3", ps="ps-t", entry="e-1", topic="anything")
    rcli.ok("claim", posted["signal_id"], "--agent", "ps-flaky", env=quick)
    wait_until(lambda: rcli.ok("expire", env=quick), timeout=30, what="the lapsed claim to be swept")
    retried = rcli.ok("show", posted["signal_id"])
    failed_at = next(e for e in rcli.ok("events", "--all") if e["event_type"] == "AgentSignalAttemptFailed")

    assert failed_at["data"]["expired"] is True and failed_at["data"]["claimed_by"] == "ps-flaky"
    before = rcli.ok("show", posted["signal_id"], "--at", str(failed_at["position"] - 1))
    assert (before["status"], before["attempt"], before["attempts"]) == ("CLAIMED", 1, [])
    as_it_was = {
        k: v for k, v in retried.items() if k != "waiting"
    }  # a mark of now: live workers, not history
    assert retried["waiting"] == "a worker that fits: RESEARCH"
    assert rcli.ok("show", posted["signal_id"], "--at", str(failed_at["position"])) == as_it_was
    rcli.ok("projection", "rebuild")
    assert rcli.ok("show", posted["signal_id"]) == retried
    rcli("export", "ps-t", "--output", str(tmp_path / "board.json")).expect(0)
    target = make_cli(f"sqlite:///{tmp_path / 'target.db'}", tmp_path, rcli.agents_dir)
    target.ok("import", str(tmp_path / "board.json"))
    assert target.ok("show", posted["signal_id"]) == retried
