"""Priorities (docs/control.md): `post --priority P`, 0 (most urgent) to 4, default 2, in the claim order of
real workers and in `next`, on SQLite and PostgreSQL; a bad priority exits 2 naming the option, writing nothing."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import QUICK_AGENT, Cli, assert_signal, cli_with_agents


@pytest.fixture(params=["sqlite", "postgresql"])
def pcli(request, make_cli, tmp_path_factory, tmp_path) -> Cli:
    return cli_with_agents(
        request, make_cli, tmp_path_factory, tmp_path, "priorities", {"ps-quick.md": QUICK_AGENT}
    )


def post(cli: Cli, entry: str, *priority: str) -> dict:
    return cli.post(*(("--priority", *priority) if priority else ()), ps="ps-p", entry=entry, topic=entry)


def test_a_worker_claims_the_most_urgent_signal_first_even_behind_many_older_ones(pcli):
    older = [post(pcli, f"e-{n}")["signal_id"] for n in range(12)]  # more than a worker reads per round
    low = post(pcli, "e-20", "4")["signal_id"]
    urgent = post(pcli, "e-21", "P0")["signal_id"]
    soon = post(pcli, "e-22", "p1")["signal_id"]

    assert [pcli.ok("show", s)["priority"] for s in (older[0], low, urgent, soon)] == [2, 4, 0, 1]
    planned = [m["signal_id"] for m in pcli.ok("next", "--blackboard", "ps-p")["next"]]
    assert planned == [urgent, soon, *older, low]
    assert pcli("next", "--blackboard", "ps-p").expect(0).stdout.startswith(f"1. {urgent} P0 RESEARCH")

    handled = []
    for _ in range(3):
        pcli.ok("worker", "--agent", "ps-quick", "--once", "--board", "ps-p")
        handled.append(
            next(
                s
                for s in (urgent, soon, *older, low)
                if pcli.ok("show", s)["status"] == "COMPLETED" and s not in handled
            )
        )
    assert handled == [urgent, soon, older[0]]


@pytest.mark.parametrize("bad", ["5", "-1", "P7", "high", "1.5"])
def test_a_priority_outside_0_to_4_exits_2_naming_the_option_and_writes_nothing(pcli, bad):
    pcli.ok("events", "--limit", "1")
    before = pcli.ok("events", "--all")

    refused = pcli(
        "post",
        "--type",
        "RESEARCH",
        "--ps-id",
        "ps-p",
        "--entry-id",
        "e-1",
        "--topic",
        "t",
        "--priority",
        bad,
    ).expect(2)

    assert "--priority: Input should be" in refused.stderr  # the model's rule, as every interface words it
    assert pcli.ok("events", "--all") == before


def test_the_default_priority_is_2_and_retry_keeps_it(pcli):
    plain = post(pcli, "e-1")
    assert assert_signal(plain)["priority"] == 2
    urgent = post(pcli, "e-2", "0")["signal_id"]
    pcli.ok("claim", urgent, "--agent", "ps-quick")
    pcli.ok("fail", urgent, "--agent", "ps-quick", "--error", "flaky")
    assert pcli.ok("retry", urgent)["priority"] == 0
