"""The web view's cards say which limit holds a POSTED signal back (docs/web.md, "Cards"), in a real headless
Chromium against boards real `blackboard worker` processes work: its board's budget spent, a concurrency key
another signal holds, a rate limit whose shared window has no room. Each card says exactly what `blackboard
next --json` gives as the signal's reason (and `show` prints), and the reason goes once the limit lets the
signal through (the key's holder completes, the budget is raised: the workers then claim it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.conftest import QUICK_AGENT, Cli, cli_with_agents
from tests.e2e.test_cli_limits import record_a_run
from tests.e2e.test_ui_cards import card_text, shown
from tests.e2e.test_ui_page import csp_refusals
from tests.e2e.web import UiServer, browser, screenshot, settled  # noqa: F401 - the browser fixture
from tests.waiting import wait_until

LIMITS, SPENT = "ps-limits", "ps-spent"  # a board of keys and rate limits; a board whose budget is spent
KEY, RATE = "review-api", "model-api"


def keyed(release: Path) -> str:
    """A reviewer under a concurrency key of max 1, whose run lasts until the test creates `release`."""
    return (
        f"---\nname: ps-keyed\ncapabilities: {{REVIEW: 0.9}}\n"
        f'command: "while [ ! -e {release} ]; do sleep 0.1; done"\n'
        f"concurrency: {{key: {KEY}, max: 1}}\n---\nOne review at a time.\n"
    )


LIMITED = (  # an analyst under a rate limit of one request a minute: one claim fills its window
    "---\nname: ps-limited\ncapabilities: {ANALYSIS: 0.9}\ncommand: echo done\n"
    f"rate_limit: {{key: {RATE}, requests_per_minute: 1}}\n---\nUnder one API's rate limit.\n"
)


@pytest.fixture(params=["sqlite", "postgresql"])
def rcli(request, make_cli, tmp_path_factory, tmp_path) -> Cli:
    agents = {
        "ps-quick.md": QUICK_AGENT,
        "ps-keyed.md": keyed(tmp_path / "release"),
        "ps-limited.md": LIMITED,
    }
    return cli_with_agents(request, make_cli, tmp_path_factory, tmp_path, "ui-reasons", agents)


def text(driver, signal_id: str) -> str:
    """The card's text, read afresh should the page redraw it meanwhile."""
    return settled(driver, lambda d: card_text(d, signal_id))


def reasons(cli: Cli) -> dict[str, str]:
    """Each held signal's reason, as `blackboard next --json` gives it (every board)."""
    planned = cli.ok("next")
    kinds = ("waiting_for_a_budget", "waiting_for_a_concurrency_key", "waiting_for_a_rate_limit")
    return {m["signal_id"]: m["reason"] for kind in kinds for m in planned[kind]}


def test_each_card_says_which_limit_holds_it_as_next_says_it_until_it_no_longer_does(rcli, browser):
    cli, driver, release = rcli, browser, rcli.cwd / "release"
    # a board whose runs spent its budget: 1,500 tokens of 1,500
    record_a_run(cli, SPENT, 0.01, 1500)
    assert (
        cli.ok("budget", SPENT, "--tokens", "1500")["reached"] == "budget reached: 1500 of 1500 tokens spent"
    )
    budgeted = cli.post(type="RESEARCH", ps=SPENT, entry="e-1", topic="write the weekly report")["signal_id"]
    # a key of max 1 the worker's run holds: the other review waits for it
    holder = cli.post(type="REVIEW", ps=LIMITS, entry="e-1", topic="review the parser change")["signal_id"]
    keyed_out = cli.post(type="REVIEW", ps=LIMITS, entry="e-2", topic="review the docs change")["signal_id"]
    reviewer = cli.start("worker", "--agent", "ps-keyed")
    quick = cli.start("worker", "--agent", "ps-quick")
    wait_until(lambda: cli.ok("show", holder)["status"] == "CLAIMED", what="the first claim", interval=0.2)
    # a rate limit of one request a minute, its window filled by a claim
    rated = [
        cli.post(type="ANALYSIS", ps=LIMITS, entry=f"e-{n}", topic="analyse the error logs")["signal_id"]
        for n in (3, 4)
    ]
    cli.ok("claim", rated[0], "--agent", "ps-limited")

    said = reasons(cli)
    assert said[keyed_out] == f"waits: 1 signal(s) already claimed under concurrency key {KEY} (max 1)"
    assert said[rated[1]] == f"waiting: rate limit {RATE}"
    assert said[budgeted] == "budget reached: 1500 of 1500 tokens spent"
    for signal_id in (keyed_out, rated[1], budgeted):  # `show` words the same hold
        assert said[signal_id] in cli("show", signal_id).expect(0).stdout

    server = UiServer(cli).wait_ready()
    try:
        driver.get(f"{server.url}/?board={LIMITS}")
        settled(driver, lambda d: shown(d, keyed_out, "POSTED", said[keyed_out]))
        settled(driver, lambda d: shown(d, rated[1], "POSTED", said[rated[1]]))
        settled(driver, lambda d: shown(d, holder, "CLAIMED"))
        # the worker that fits is live: only the key's hold is said; no worker of the analyst: both are
        assert "worker that fits" not in text(driver, keyed_out)
        assert "a worker that fits: ANALYSIS" in text(driver, rated[1])
        assert "concurrency key" not in text(driver, rated[1])
        # a signal posted now: its live record carries its hold
        later = cli.post(type="REVIEW", ps=LIMITS, entry="e-5", topic="review the release notes")["signal_id"]
        assert reasons(cli)[later] == said[keyed_out]
        settled(driver, lambda d: shown(d, later, "POSTED", said[keyed_out]))
        screenshot(driver, "web-cards.png", "#columns")

        # the holder's run ends: the worker claims the others in turn, and their cards say no hold
        release.touch()
        for signal_id in (keyed_out, later):
            settled(driver, lambda d, s=signal_id: shown(d, s, "COMPLETED"))
            assert "concurrency key" not in text(driver, signal_id)
        assert shown(driver, rated[1], "POSTED", said[rated[1]])
        assert csp_refusals(driver) == []

        # the board whose budget is spent, then raised: the quick worker takes its signal
        driver.get(f"{server.url}/?board={SPENT}")
        settled(driver, lambda d: shown(d, budgeted, "POSTED", said[budgeted]))
        assert "worker that fits" not in text(driver, budgeted)
        cli.ok("budget", SPENT, "--tokens", "100000")
        settled(driver, lambda d: shown(d, budgeted, "COMPLETED"))
        assert "budget reached" not in text(driver, budgeted)
        assert csp_refusals(driver) == []
    finally:
        server.stop()
        for proc in (reviewer, quick):
            proc.terminate()
        for proc in (reviewer, quick):
            cli.finish(proc)


ESTIMATED = (  # a runner agent whose run reserves 600 tokens of its board's budget at its claim
    "---\nname: ps-estimated\ncapabilities: {RESEARCH: 0.9}\nrunner: anthropic\nmodel: sonnet\n"
    "estimate: {tokens: 600}\n---\nWrites.\n"
)
API = {"ANTHROPIC_API_KEY": "sk-test"}  # its runner can start (no run starts: no worker here)


@pytest.fixture(params=["sqlite", "postgresql"])
def reserving_cli(request, make_cli, tmp_path_factory, tmp_path) -> Cli:
    agents = {"ps-estimated.md": ESTIMATED}
    return cli_with_agents(request, make_cli, tmp_path_factory, tmp_path, "ui-reserve", agents)


def test_a_signal_posted_while_the_page_is_open_is_planned_behind_the_earlier_ones(reserving_cli, browser):
    """A post that arrives live is planned among its board's POSTED signals, as `next` plans it: the earlier
    post's run reserves first, so the new one's does not fit a budget of 1,000 tokens."""
    cli, driver = reserving_cli, browser
    cli.ok("budget", "ps-r", "--tokens", "1000")
    first = cli.post(type="RESEARCH", ps="ps-r", entry="e-1", topic="first")["signal_id"]
    server = UiServer(cli, env=API).wait_ready()
    try:
        driver.get(f"{server.url}/?board=ps-r")
        settled(driver, lambda d: shown(d, first, "POSTED"))
        second = cli.post(type="RESEARCH", ps="ps-r", entry="e-2", topic="second")["signal_id"]
        said = {m["signal_id"]: m["reason"] for m in cli.ok("next", env=API)["waiting_for_a_budget"]}
        assert first not in said and "this run reserves 600 tokens" in said[second], said
        settled(driver, lambda d: shown(d, second, "POSTED", said[second]))
        assert "reserves" not in text(driver, first)
    finally:
        server.stop()
