"""The web view's Spend and flow panel (docs/web.md "Spend and flow"), in a real headless Chromium, against a board
real workers drove (`blackboard worker` running command handlers that complete and fail signals, and an anthropic
runner against the local stand-in of the Messages API, whose runs cost), with a budget set: the finished counts are
what completed and failed, each agent's spend is what /metrics gives, the budget line is drawn, new work shows up
live, and the slider moved back shows fewer; /api/charts refuses a bad window or position naming it. On SQLite and
PostgreSQL."""

from __future__ import annotations

import json

import pytest
from selenium.webdriver.common.by import By

from tests.e2e.conftest import Cli, cli_with_agents
from tests.e2e.test_ui_metrics import samples
from tests.e2e.test_ui_page import csp_refusals
from tests.e2e.web import UiServer, browser, click, screenshot, settled  # noqa: F401 - the browser fixture
from tests.runners.standins import say, stand_in

BOARD = "ps-ch"
AGENTS = {
    "doer.md": "---\nname: doer\ncapabilities: {BUILD: 0.95}\ncommand: echo done\n---\nBuilds.\n",
    "breaker.md": "---\nname: breaker\ncapabilities: {TEST: 0.95}\ncommand: echo 'no luck' >&2; exit 1\n---\nFails.\n",
    "writer.md": "---\nname: writer\ncapabilities: {WRITE: 0.95}\nrunner: anthropic\nmodel: sonnet\n---\nYou write.\n",
}


@pytest.fixture(params=["sqlite", "postgresql"])
def charts_cli(request, make_cli, tmp_path_factory, tmp_path) -> Cli:
    made = cli_with_agents(request, make_cli, tmp_path_factory, tmp_path, "ui-charts", AGENTS)
    made.ok("db", "upgrade")
    return made


def run(cli: Cli, capability: str, agent: str, env: dict[str, str] | None = None) -> str:
    """Post a signal for `capability` and let a real worker of `agent` take it to its end."""
    signal_id = cli.post("--capability", capability, ps=BOARD, topic=f"{capability.lower()} it")["signal_id"]
    worker = cli.start("worker", "--agent", agent, "--once", env=env)
    assert cli.finish(worker).returncode == 0
    return signal_id


def answer(server: UiServer, query: str) -> tuple[int, dict]:
    status, _, body = server.get(f"/api/charts?{query}")
    return status, json.loads(body)


def legend(driver, chart: str) -> dict[str, str]:
    """The legend of a chart: each key's text by its status or agent."""
    keys = driver.find_elements(
        By.CSS_SELECTOR, f'#charts .chart-box:has(svg[data-chart="{chart}"]) .chart-key'
    )
    return {k.get_attribute("data-status") or k.get_attribute("data-agent") or k.text: k for k in keys}


def finished(driver) -> dict[str, int]:
    return {status: int(k.get_attribute("data-count")) for status, k in legend(driver, "finished").items()}


def test_the_charts_show_what_real_workers_finished_and_spent_against_the_budget(charts_cli, browser):
    cli, driver = charts_cli, browser
    cli.ok("budget", BOARD, "--usd", "0.5")
    server = UiServer(cli).wait_ready()
    try:
        built = [run(cli, "BUILD", "doer"), run(cli, "BUILD", "doer")]
        broken = run(cli, "TEST", "breaker")
        before_the_writer = json.loads(server.get("/api/boards")[2])["position"]
        with stand_in([say("notes written", input_tokens=20_000, output_tokens=2_000)]) as api:
            env = {"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "sk-ant-test"}
            written = run(cli, "WRITE", "writer", env)
        shown = {s["signal_id"]: s["status"] for s in cli.ok("signals", "--blackboard", BOARD)}
        assert [shown[s] for s in (*built, broken, written)] == ["COMPLETED"] * 2 + ["FAILED", "COMPLETED"]

        # the endpoint: each status counted once, the claim waits of the signals claimed, spend as /metrics says
        status, charts = answer(server, f"board={BOARD}&window=60")
        assert status == 200, charts
        assert len(charts["buckets"]) == 60 and charts["bucket_seconds"] == 60
        assert sum(charts["finished"]["COMPLETED"]) == 3 and sum(charts["finished"]["FAILED"]) == 1
        assert sum(charts["claim_wait"]["claimed"]) == 4
        assert all(p is None or p >= 0 for p in charts["claim_wait"]["p90"])
        metrics = samples(server.get("/metrics")[2].decode())
        cost = metrics[("blackboard_runner_cost_usd_total", (("agent", "writer"), ("board", BOARD)))]
        (writer,) = charts["spend"]["agents"]
        assert writer["agent"] == "writer" and writer["total_usd"] == pytest.approx(cost) and cost > 0
        assert writer["usd"][-1] == pytest.approx(cost) and writer["total_tokens"] == 22_000
        assert charts["spend"]["budget"] == {"usd": 0.5, "tokens": None}
        assert len(answer(server, f"board={BOARD}&window=1440")[1]["buckets"]) == 120  # wider buckets

        driver.get(f"{server.url}/?board={BOARD}")
        settled(driver, lambda d: finished(d) == {"COMPLETED": 3, "FAILED": 1})
        spend = settled(driver, lambda d: legend(d, "spend").get("writer"))
        assert float(spend.get_attribute("data-total-usd")) == pytest.approx(cost)
        assert f"${cost:.4f}" in spend.text
        budget = driver.find_element(By.CSS_SELECTOR, 'svg[data-chart="spend"] line.budget')
        assert float(budget.get_attribute("data-budget")) == 0.5
        assert driver.find_elements(By.CSS_SELECTOR, 'svg[data-chart="spend"] path[data-agent="writer"]')
        assert driver.find_elements(By.CSS_SELECTOR, 'svg[data-chart="wait"] path[data-series="p90"]')
        assert "4 claimed" in legend(driver, "wait")["4 claimed"].text

        # live: a worker's new completion shows up without a reload
        run(cli, "BUILD", "doer")
        settled(driver, lambda d: finished(d) == {"COMPLETED": 4, "FAILED": 1})
        click(driver, 'button[data-window="15"]')
        settled(
            driver,
            lambda d: (
                "on" in d.find_element(By.CSS_SELECTOR, 'button[data-window="15"]').get_attribute("class")
            ),
        )
        settled(driver, lambda d: finished(d) == {"COMPLETED": 4, "FAILED": 1})
        screenshot(driver, "web-charts.png", "#charts-panel")

        # the slider back to before the writer ran: the board as it was, fewer finished, nothing spent yet
        driver.execute_script(
            "const s = document.getElementById('slider'); s.value = arguments[0]; s.dispatchEvent(new Event('input'));",
            before_the_writer,
        )
        settled(driver, lambda d: finished(d) == {"COMPLETED": 2, "FAILED": 1})
        settled(
            driver,
            lambda d: (
                "no data in this window" in d.find_element(By.CSS_SELECTOR, 'svg[data-chart="spend"]').text
            ),
        )
        assert driver.find_elements(
            By.CSS_SELECTOR, 'svg[data-chart="spend"] line.budget'
        )  # set before: still drawn
        _, then = answer(server, f"board={BOARD}&window=15&at={before_the_writer}")
        assert (
            sum(then["finished"]["COMPLETED"]) == 2
            and then["spend"]["agents"] == []
            and then["at"] == before_the_writer
        )
        click(driver, "#live")
        settled(driver, lambda d: finished(d) == {"COMPLETED": 4, "FAILED": 1})
        assert csp_refusals(driver) == []
    finally:
        server.stop()


def test_the_endpoint_refuses_a_bad_window_or_position_naming_it_and_goes_on(charts_cli):
    cli = charts_cli
    cli.post(ps=BOARD)
    server = UiServer(cli).wait_ready()
    try:
        for window in ("0", "10081", "abc", "1.5", "-3"):
            status, refused = answer(server, f"board={BOARD}&window={window}")
            assert status == 400, refused
            assert refused["error"].startswith("window: must be a whole number of minutes from 1 to 10080"), (
                refused
            )
        status, refused = answer(server, f"board={BOARD}&at=-1")
        assert status == 400 and refused["error"].startswith("at:"), refused
        status, refused = answer(server, "window=15")
        assert status == 400 and refused["error"].startswith("board:"), refused
        status, charts = answer(server, f"board={BOARD}")  # the default window: an hour
        assert status == 200 and charts["window"] == 60 and charts["spend"]["budget"] is None
        assert charts["spend"]["agents"] == [] and sum(charts["claim_wait"]["claimed"]) == 0
    finally:
        assert "Traceback" not in server.stop()
