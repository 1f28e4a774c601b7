"""Deadlines hold with no worker and no `blackboard expire` running: real processes, tiny timeouts.

`show` and `signals` mark a signal past its deadline that nothing has expired yet; the next command on
it records the expiry (exit 3, saying when); the sweeper then finds nothing left.
"""

from __future__ import annotations

import time
from typing import Any

from tests.e2e.conftest import Cli, assert_signal, assert_signals

FAST = {"BLACKBOARD_POST_TIMEOUT": "0.3", "BLACKBOARD_CLAIM_TIMEOUT": "0.3"}
FAST_CLAIM = {"BLACKBOARD_CLAIM_TIMEOUT": "0.3"}  # a claim must be taken in time first
LIMIT = 60.0  # seconds to wait for a deadline of 0.3 s to pass, however slow the machine


def overdue(cli: Cli, signal_id: str, env: dict[str, str] = FAST) -> dict[str, Any]:
    """`show` until it marks the signal overdue (waiting on the condition, not a fixed sleep)."""
    deadline = time.monotonic() + LIMIT
    while time.monotonic() < deadline:
        document = assert_signal(cli.ok("show", signal_id, env=env))
        if "overdue_since" in document:
            return document
        time.sleep(0.05)
    raise AssertionError(f"{signal_id} never shown overdue")


def expired_events(cli: Cli, signal_id: str) -> list[dict[str, Any]]:
    return [
        e
        for e in cli.ok("events")
        if e["event_type"] == "AgentSignalExpired" and e["data"]["signal_id"] == signal_id
    ]


def test_a_signal_past_its_post_timeout_is_marked_then_expired_by_the_claim_that_finds_it(cli):
    signal = cli.post(env=FAST)
    document = overdue(cli, signal["signal_id"])
    assert document["status"] == "POSTED"  # marked, not yet expired: showing writes nothing
    assert expired_events(cli, signal["signal_id"]) == []
    listed = assert_signals(cli.ok("signals", env=FAST))
    assert listed[0]["overdue_since"] == document["overdue_since"]
    text = cli("signals", env=FAST).expect(0).stdout
    assert "OVERDUE since" in text

    refused = cli("claim", signal["signal_id"], "--agent", "ps-researcher", env=FAST).expect(3)

    assert f"{signal['signal_id']} is EXPIRED: it expired at " in refused.stderr
    assert "not claimed within 0.3s" in refused.stderr
    assert len(expired_events(cli, signal["signal_id"])) == 1
    shown = assert_signal(cli.ok("show", signal["signal_id"], env=FAST))
    assert shown["status"] == "EXPIRED" and "overdue_since" not in shown
    assert cli.ok("expire", env=FAST) == []  # the sweeper has nothing left to do


def test_a_claim_past_its_timeout_cannot_be_completed(cli):
    signal = cli.post(env=FAST_CLAIM)
    cli.ok("claim", signal["signal_id"], "--agent", "ps-researcher", env=FAST_CLAIM)
    overdue(cli, signal["signal_id"], FAST_CLAIM)

    refused = cli("complete", signal["signal_id"], "--agent", "ps-researcher", env=FAST_CLAIM).expect(3)

    assert "ps-researcher did not finish within the claim timeout of 0.3s" in refused.stderr
    assert len(expired_events(cli, signal["signal_id"])) == 1
    again = cli(
        "fail", signal["signal_id"], "--agent", "ps-researcher", "--error", "late", env=FAST_CLAIM
    ).expect(3)
    assert "is EXPIRED: it expired at" in again.stderr
    assert len(expired_events(cli, signal["signal_id"])) == 1  # recorded once


def test_a_signal_within_its_deadline_is_not_marked(cli):
    signal = cli.post()  # the tests' default post timeout (tests/e2e/conftest.py), minutes away

    shown = assert_signal(cli.ok("show", signal["signal_id"]))

    assert shown["status"] == "POSTED" and "overdue_since" not in shown
    assert "OVERDUE" not in cli("show", signal["signal_id"]).expect(0).stdout


def test_the_python_api_marks_an_overdue_signal_as_the_cli_does(tmp_path, agents_dir):
    from blackboard import Blackboard
    from tests.waiting import wait_until

    with Blackboard(f"sqlite:///{tmp_path / 'api.db'}", agents_dir=agents_dir, post_timeout=0.3) as api:
        posted = api.post("RESEARCH", "ps-late", "e-1", "nobody takes it")
        wait_until(lambda: "overdue_since" in api.show(posted.signal_id).model_dump(mode="json"), timeout=30)
        listed = api.signals(blackboard_id="ps-late").model_dump(mode="json")
        assert (
            listed[0]["overdue_since"] == api.show(posted.signal_id).model_dump(mode="json")["overdue_since"]
        )
        assert "overdue_since" not in api.show(posted.signal_id, at=1).model_dump(
            mode="json"
        )  # time travel: as it was
