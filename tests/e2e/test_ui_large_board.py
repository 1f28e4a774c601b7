"""The page on a board of 10,000 signals (docs/web.md, "Large boards"), in a real headless Chromium: each column
says its full count but holds at most a window of cards, "show more" adds the next ones, the labels filter
searches every signal (one far outside the window is found), the timeline says it shows the most recent ones,
the event log shows the newest records, and a signal a real `blackboard worker` runs shows up live. The board
is made in seconds through the aggregate (bench/web_board.py: 7,000 COMPLETED, 1,500 FAILED, 700 POSTED, 800
CLAIMED). How fast it draws is the benchmark's (`make bench`, section web; docs/performance.md), not asserted
here."""

from __future__ import annotations

import json

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from bench.seeding import signal_id
from bench.web_board import build
from blackboard.infrastructure.composition import settings
from blackboard.infrastructure.composition.container import Container
from tests.e2e.conftest import Cli, cli_with_agents
from tests.e2e.test_ui_page import csp_refusals
from tests.e2e.web import UiServer, browser, click, screenshot, settled  # noqa: F401 - the browser fixture

SIGNALS = 10_000
WINDOW = 50  # cards a column shows at first (app.js CARDS), and each "show more" adds
BY_STATUS = {"POSTED": 700, "CLAIMED": 800, "COMPLETED": 7000, "FAILED": 1500}
REVIEWER = """---
name: ps-live-reviewer
capabilities: {REVIEW: 0.95}
command: echo reviewed
---
Reviews at once (the seeded signals are RESEARCH: it leaves them be).
"""


@pytest.fixture(params=["sqlite", "postgresql"])
def large_cli(request, make_cli, tmp_path_factory, tmp_path) -> Cli:
    made = cli_with_agents(
        request, make_cli, tmp_path_factory, tmp_path, "ui-large", {"ps-live-reviewer.md": REVIEWER}
    )
    made.ok("db", "upgrade")
    container = Container(config=settings.load({}, env=made.environment()))
    try:
        assert build(container.engine(), "ps-large", SIGNALS)["by_status"] == BY_STATUS
    finally:
        container.engine().dispose()
    return made


def counts(driver) -> dict[str, int]:
    return {
        c.get_attribute("data-status"): int(c.find_element(By.CSS_SELECTOR, ".count").text)
        for c in driver.find_elements(By.CSS_SELECTOR, "#columns .column")
    }


def cards(driver, status: str) -> list[str]:
    return [
        c.get_attribute("data-signal")
        for c in driver.find_elements(By.CSS_SELECTOR, f'.column[data-status="{status}"] .card')
    ]


def test_a_board_of_ten_thousand_signals_is_windowed(large_cli, browser):
    cli, driver = large_cli, browser
    oldest = signal_id(3, 0)  # COMPLETED first of all, labelled m000: newest first, far outside the window
    server = UiServer(cli).wait_ready()
    try:
        driver.get(f"{server.url}/?board=ps-large")
        settled(driver, lambda d: counts(d) == {**dict.fromkeys(counts(d), 0), **BY_STATUS})
        # the event log: the newest records (27,800 of them: the page loads the last 10,000 of the log)
        head = json.loads(server.get("/api/boards")[2])["position"]
        # read afresh until they hold: the page may redraw once more as it settles (a panel's width)
        newest = "#events tr[data-position]"
        settled(
            driver,
            lambda d: int(d.find_element(By.CSS_SELECTOR, newest).get_attribute("data-position")) == head,
        )
        for status, n in BY_STATUS.items():
            button = f'.column[data-status="{status}"] .more'
            settled(driver, lambda d, status=status: len(cards(d, status)) == WINDOW)
            settled(
                driver,
                lambda d, button=button, n=n: (
                    d.find_element(By.CSS_SELECTOR, button).text == f"show {WINDOW} more of {n - WINDOW:,}"
                ),
            )
        # the newest completed first (the oldest far outside the window); the POSTED ones most urgent (P0) first
        settled(driver, lambda d: (c := cards(d, "COMPLETED"))[0] == signal_id(3, 9969) and oldest not in c)
        first_posted = '.column[data-status="POSTED"] .card'
        settled(driver, lambda d: "P0" in d.find_element(By.CSS_SELECTOR, first_posted).text)
        # a long column scrolls on its own: at its end, the button for the next cards
        completed = '.column[data-status="COMPLETED"]'
        driver.execute_script(
            f"const c = document.querySelector('{completed}'); c.scrollTop = c.scrollHeight;"
        )
        screenshot(driver, "web-large.png", "#columns")

        click(driver, ".more", inside='.column[data-status="COMPLETED"]')
        settled(driver, lambda d: len(cards(d, "COMPLETED")) == 2 * WINDOW)
        settled(driver, lambda d: counts(d)["COMPLETED"] == 7000)

        # the filter searches all 10,000: the oldest signal's own label finds it
        driver.find_element(By.ID, "label-filter").send_keys("m000")
        settled(driver, lambda d: cards(d, "COMPLETED") == [oldest])
        settled(driver, lambda d: (n := counts(d)) == {**dict.fromkeys(n, 0), "COMPLETED": 1})
        driver.find_element(By.ID, "label-filter").send_keys(Keys.BACKSPACE * 4)
        settled(driver, lambda d: counts(d)["COMPLETED"] == 7000)

        note = "the most recent 200 of 10,000 signals; the columns list them all"
        settled(driver, lambda d: d.find_element(By.ID, "timeline-window").text == note)

        # live: a real worker runs a new signal; its card shows up first among the completed
        live = cli.post(type="REVIEW", ps="ps-large", entry="e-10001", topic="a live review")["signal_id"]
        settled(driver, lambda d: counts(d)["POSTED"] == 701)  # P2: behind the window of the more urgent
        # (its sweep judges the seeded claims by a day: on a slow machine they stay CLAIMED, as counted)
        day = {"BLACKBOARD_CLAIM_TIMEOUT": "86400"}
        cli("worker", "--agent", "ps-live-reviewer", "--board", "ps-large", "--once", env=day).expect(0)
        settled(driver, lambda d: cards(d, "COMPLETED")[:1] == [live] and counts(d)["COMPLETED"] == 7001)
        settled(driver, lambda d: counts(d)["POSTED"] == 700)
        assert csp_refusals(driver) == []
    finally:
        server.stop()
