"""Later (docs/control.md): `post --not-before WHEN` through the real CLI and a real worker, on SQLite and
PostgreSQL: not claimable before then, not proposed by `next`, its post timeout counting from then, and a
worker that claimed nothing wakes when it comes due though nothing is appended then."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.e2e.conftest import QUICK_AGENT, Cli, assert_signal, cli_with_agents
from tests.waiting import wait_until


@pytest.fixture(params=["sqlite", "postgresql"])
def lcli(request, make_cli, tmp_path_factory, tmp_path) -> Cli:
    made = cli_with_agents(
        request, make_cli, tmp_path_factory, tmp_path, "later", {"ps-quick.md": QUICK_AGENT}
    )
    made.ok("events", "--limit", "1")  # the schema exists before a worker starts
    return made


def moment(text: str) -> datetime:
    return datetime.fromisoformat(text)


def test_a_signal_posted_for_later_is_not_claimable_nor_proposed_before_then_and_times_out_from_then(lcli):
    fast = {"BLACKBOARD_POST_TIMEOUT": "1"}
    later = lcli.post("--not-before", "1h", ps="ps-l", entry="e-1", env=fast)
    at = (datetime.now(UTC) + timedelta(hours=2)).replace(microsecond=0)
    iso = lcli.post("--not-before", at.isoformat(), ps="ps-l", entry="e-2", env=fast)

    assert moment(iso["not_before"]) == at
    assert moment(later["claimable_since"]) == moment(
        later["not_before"]
    )  # the post timeout counts from then
    assert moment(later["not_before"]) - moment(later["created_at"]) >= timedelta(minutes=59)
    refused = lcli("claim", later["signal_id"], "--agent", "ps-quick", env=fast).expect(3)
    assert "is not claimable before" in refused.stderr
    assert lcli.ok("next", "--blackboard", "ps-l")["next"] == []
    assert lcli.ok("expire", env=fast) == []  # 1 s post timeout, an hour to go: nothing is late
    assert "overdue_since" not in assert_signal(lcli.ok("show", later["signal_id"], env=fast))


@pytest.mark.parametrize("bad", ["soon", "-5m", "10 parsecs", "2026-13-40T00:00:00", "99999d"])
def test_a_time_that_does_not_parse_exits_2_naming_the_option_and_writes_nothing(lcli, bad):
    before = lcli.ok("events", "--all")

    refused = lcli(
        "post",
        "--type",
        "RESEARCH",
        "--ps-id",
        "ps-l",
        "--entry-id",
        "e-1",
        "--topic",
        "t",
        f"--not-before={bad}",  # `-5m` alone would read as an option
    ).expect(2)

    assert refused.stderr.startswith("blackboard: --not-before: must be")
    assert lcli.ok("events", "--all") == before


def test_a_worker_that_claimed_nothing_wakes_when_a_signal_comes_due(lcli):
    worker = lcli.start("worker", "--agent", "ps-quick", "--board", "ps-l")
    posted = lcli.post("--not-before", "8s", ps="ps-l", entry="e-1")  # the worker is idle by then: it waits

    done = wait_until(
        lambda: (s := lcli.ok("show", posted["signal_id"]))["status"] == "COMPLETED" and s,
        timeout=90,
        what="the worker to claim the signal once due",
    )

    assert moment(done["claimed_at"]) >= moment(posted["not_before"])
    worker.terminate()
    lcli.finish(worker)
