"""Waiting that ends, and work that waits for its worker (issue 32, defects 6 and 7): real `blackboard`
processes on SQLite and PostgreSQL, with no worker and no `blackboard expire` running unless a test starts one.

- `wait` sees the signal's deadline as the board decides it: a post timeout of its own, the default one, a
  lapsed claim; it ends EXPIRED (exit 3) there, not at its own `--timeout`.
- A signal no live worker fits waits for one by default, says so, and a worker started later completes it.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.e2e.conftest import QUICK_AGENT, Cli, assert_signal, cli_with_agents
from tests.waiting import wait_until

LATE = 25.0  # seconds: a generous bound on "about 3 s" for a loaded machine (the wait's own timeout is 30)
OLD_POST_TIMEOUT = 30  # seed 003's default, which expired a signal posted before its worker started
SLOW_ANALYST = """---
name: ps-slow
capabilities: {ANALYSIS: 0.95}
command: sleep 60; echo done
timeout: 60
---
Analyses, slowly: what it fits queues behind it.
"""


@pytest.fixture(params=["sqlite", "postgresql"])
def wcli(request, make_cli, tmp_path_factory, tmp_path) -> Cli:
    agents = {"ps-quick.md": QUICK_AGENT, "ps-slow.md": SLOW_ANALYST}
    cli = cli_with_agents(request, make_cli, tmp_path_factory, tmp_path, "waits", agents)
    cli.ok("events", "--limit", "1")  # the schema exists before the timed calls
    return cli


def expired_by(cli: Cli, signal_id: str) -> list[str]:
    """The actors of the AgentSignalExpired events of the signal."""
    return [
        e["metadata"]["actor"]
        for e in cli.ok("events")
        if e["event_type"] == "AgentSignalExpired" and e["data"]["signal_id"] == signal_id
    ]


# -- waits end at the deadline ---------------------------------------------------------------------------
def test_a_wait_ends_expired_at_its_signal_s_post_timeout_with_no_worker_and_no_sweeper(wcli):
    posted = wcli.post("--timeout", "3")
    assert posted["timeout_s"] == 3

    started = time.monotonic()
    waited = wcli("--json", "wait", posted["signal_id"], "--timeout", "30").expect(3)
    took = time.monotonic() - started

    ended = assert_signal(waited.json())
    assert ended["status"] == "EXPIRED", ended
    assert ended["result"]["error"].startswith("not claimed within 3s of becoming claimable")
    assert "timed out" not in waited.stderr
    assert 2.5 <= took < LATE, f"the wait took {took:.1f}s"
    assert expired_by(wcli, posted["signal_id"]) == ["waiter"]  # the wait had the board record it


def test_blackboard_post_timeout_keeps_seed_003_s_rule_for_a_signal_without_a_timeout_of_its_own(wcli):
    old_rule = {"BLACKBOARD_POST_TIMEOUT": "2"}  # 30 in seed 003; small here
    posted = wcli.post(env=old_rule)  # no timeout of its own: the default applies

    waited = wcli("--json", "wait", posted["signal_id"], "--timeout", "30", env=old_rule).expect(3)

    assert waited.json()["status"] == "EXPIRED"
    assert "not claimed within 2s of becoming claimable" in waited.json()["result"]["error"]


def test_a_sweep_expires_a_signal_past_its_own_post_timeout_and_leaves_one_without_waiting(wcli):
    own = wcli.post("--timeout", "1", entry="e-1")["signal_id"]
    waits = wcli.post(entry="e-2")["signal_id"]

    swept = wait_until(lambda: wcli.ok("expire"), 30, "the sweep to find the signal past its timeout")

    assert [s["signal_id"] for s in swept] == [own] and swept[0]["status"] == "EXPIRED"
    assert expired_by(wcli, own) == ["expiry-sweeper"]
    assert assert_signal(wcli.ok("show", waits))["status"] == "POSTED"


def test_the_wait_s_own_timeout_still_ends_it_first_with_exit_5(wcli):
    posted = wcli.post("--timeout", "1h")

    waited = wcli("wait", posted["signal_id"], "--timeout", "1").expect(5)

    assert "timed out after 1s" in waited.stderr
    assert assert_signal(wcli.ok("show", posted["signal_id"]))["status"] == "POSTED"


def test_a_lapsed_claim_with_attempts_left_keeps_the_wait_going_until_the_last_attempt_lapses(wcli):
    fast_claims = {"BLACKBOARD_CLAIM_TIMEOUT": "1"}
    signal_id = wcli.post("--max-attempts", "2")["signal_id"]
    wcli.ok("claim", signal_id, "--agent", "ps-quick", env=fast_claims)
    waiting = wcli.start("--json", "wait", signal_id, "--timeout", "60", env=fast_claims)

    # its first claim lapses: the wait has the board put it back, POSTED for its second attempt, and waits on
    def second_attempt() -> dict[str, Any] | None:
        shown = wcli.ok("show", signal_id)
        return shown if shown["attempt"] == 2 else None

    again = wait_until(second_attempt, 30, "the first claim to lapse")
    assert again["status"] == "POSTED" and again["attempts"][0]["expired"] is True
    assert waiting.poll() is None, "the wait ended before the final outcome"
    wait_until(  # once its backoff has passed (a refused claim writes nothing)
        lambda: wcli("claim", signal_id, "--agent", "ps-quick", env=fast_claims).returncode == 0,
        30,
        "the second attempt to be claimable",
    )

    ended = wcli.finish(waiting)

    assert ended.returncode == 3, ended.stderr
    assert assert_signal(ended.json())["status"] == "EXPIRED"
    assert "did not finish within the claim timeout of 1s" in ended.json()["result"]["error"]


# -- work waits for its worker ---------------------------------------------------------------------------
def test_work_posted_before_its_worker_waits_says_so_and_the_worker_started_later_completes_it(wcli):
    posted = wcli(
        "--json", "post", "--type", "RESEARCH", "--ps-id", "ps-1", "--entry-id", "e-1", "--topic", "t"
    )
    document = assert_signal(posted.expect(0).json())
    signal_id = document["signal_id"]
    said = f"{signal_id} is waiting for a worker that fits: RESEARCH; none is live"
    assert said in posted.stderr and "blackboard worker --agent ps-quick" in posted.stderr
    assert any(said in w for w in document["warnings"])
    assert document["waiting"] == "a worker that fits: RESEARCH"
    assert "waiting for a worker that fits: RESEARCH" in wcli("show", signal_id).expect(0).stdout
    assert assert_signal(wcli.ok("show", signal_id))["waiting"] == "a worker that fits: RESEARCH"
    [move] = wcli.ok("next")["next"]
    assert (move["signal_id"], move["waiting"]) == (signal_id, "a worker that fits: RESEARCH")
    [board] = wcli.ok("status")
    assert board["waiting_for_workers"] == {"RESEARCH": 1}
    assert "waiting for a worker that fits" in wcli("status").expect(0).stdout

    # seed 003's 30 s pass, and a sweep runs (as another agent's worker makes every few seconds)
    since = datetime.fromisoformat(document["claimable_since"])
    wait_until(
        lambda: datetime.now(UTC) > since + timedelta(seconds=OLD_POST_TIMEOUT + 1), 60, "30 s to pass"
    )
    assert wcli.ok("expire") == []
    assert assert_signal(wcli.ok("show", signal_id))["status"] == "POSTED"

    wcli("worker", "--agent", "ps-quick", "--once").expect(0)

    done = assert_signal(wcli.ok("show", signal_id))
    assert (done["status"], done["claimed_by"]) == ("COMPLETED", "ps-quick")
    assert "waiting" not in done


def test_a_signal_queued_behind_a_busy_worker_that_fits_it_is_not_said_to_wait(wcli):
    worker = wcli.start("worker", "--agent", "ps-slow", "--grace", "0")  # stops its run when stopped
    try:
        running = wcli.post(type="ANALYSIS", entry="e-1")["signal_id"]
        wait_until(lambda: wcli.ok("show", running)["status"] == "CLAIMED", 30, "the worker to claim")
        queued = wcli.post(type="ANALYSIS", entry="e-2")  # behind the busy worker, which fits it
        waiting = wcli.post(type="RESEARCH", entry="e-3")  # no live worker fits it

        assert "waiting" not in queued and "waiting" not in assert_signal(
            wcli.ok("show", queued["signal_id"])
        )
        assert "waiting for" not in wcli("show", queued["signal_id"]).expect(0).stdout
        assert (
            assert_signal(wcli.ok("show", waiting["signal_id"]))["waiting"] == "a worker that fits: RESEARCH"
        )
        [board] = wcli.ok("status")
        assert board["waiting_for_workers"] == {"RESEARCH": 1}
        moves = {m["signal_id"]: m for m in wcli.ok("next")["next"]}
        assert "waiting" not in moves[queued["signal_id"]] and "waiting" in moves[waiting["signal_id"]]
    finally:
        worker.terminate()
        wcli.finish(worker)
