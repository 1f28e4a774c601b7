"""Flows in `blackboard ui` (docs/flows.md, docs/web.md), on SQLite and PostgreSQL: `/metrics` counts flows by
state and a running flow's steps by status, and the page shows each flow's steps as `flow status` does, live,
and as they stood at a past log position."""

from __future__ import annotations

import json

import pytest
from selenium.webdriver.support.ui import WebDriverWait

from tests.e2e.conftest import Cli, cli_with_agents
from tests.e2e.test_cli_flows import AGENTS, FLOW
from tests.e2e.test_ui_metrics import samples
from tests.e2e.web import UiServer, artifact, browser  # noqa: F401 - the browser fixture

SETTLES_WITHIN = 30.0  # a bound, never reached when things work


@pytest.fixture(params=["sqlite", "postgresql"])
def icli(request, make_cli, tmp_path_factory, tmp_path) -> Cli:
    made = cli_with_agents(request, make_cli, tmp_path_factory, tmp_path, "flow-ui", AGENTS)
    (tmp_path / "pages.md").write_text(FLOW, encoding="utf-8")
    made.ok("events", "--limit", "1")
    return made


def test_metrics_count_flows_by_state_and_a_running_flow_s_steps_by_status(icli):
    icli.ok("flow", "run", "pages.md", "--blackboard", "docs", "--flow-id", "going")
    icli.ok("flow", "run", "pages.md", "--blackboard", "docs", "--flow-id", "gone")
    icli.ok("cancel", "--flow", "gone", "--blackboard", "docs")
    icli("worker", "--agent", "doc-reader", "--board", "docs", "--once").expect(0)
    server = UiServer(icli).wait_ready()
    try:
        status, _, body = server.get("/metrics")
    finally:
        server.stop()
    assert status == 200, body
    found = samples(body.decode())

    def value(name: str, **labels: str) -> float | None:
        return found.get((name, tuple(sorted(labels.items()))))

    assert {
        s: value("blackboard_flows", board="docs", state=s) for s in ("running", "cancelled", "completed")
    } == {
        "running": 1,
        "cancelled": 1,
        "completed": 0,
    }
    going = {
        s: value("blackboard_flow_steps", board="docs", flow="going", status=s)
        for s in ("POSTED", "COMPLETED")
    }
    assert going == {"POSTED": 3, "COMPLETED": 1}
    assert value("blackboard_flow_steps", board="docs", flow="gone", status="CANCELLED") is None  # it ended


def flow_rows(driver) -> dict[str, tuple[str, list[str]]]:
    """Each flow the page shows: its state and its steps' chips ("read completed"), read in one script (the
    live stream redraws the table meanwhile)."""
    rows = driver.execute_script(
        "return [...document.querySelectorAll('#flows tr[data-flow]')].map((r) => [r.dataset.flow, "
        "r.dataset.state, [...r.querySelectorAll('.step')].map((c) => c.textContent)]);"
    )
    return {flow: (state, chips) for flow, state, chips in rows}


def as_cli_says(cli: Cli, flow_id: str) -> tuple[str, list[str]]:
    flow = cli.ok("flow", "status", flow_id, "--blackboard", "docs")
    return flow["state"], [f"{s['step_id']} {s['status'].lower()}" for s in flow["steps"]]


def test_the_page_shows_each_flow_s_steps_as_flow_status_does_live_and_at_a_past_position(icli, browser):
    icli.ok("flow", "run", "pages.md", "--blackboard", "docs", "--flow-id", "f-1")
    server = UiServer(icli).wait_ready()
    try:
        browser.get(f"{server.url}/?board=docs")
        WebDriverWait(browser, SETTLES_WITHIN).until(lambda d: "f-1" in flow_rows(d))
        before = as_cli_says(icli, "f-1")
        assert (
            flow_rows(browser)["f-1"]
            == before
            == ("running", ["read posted", "plan posted", "approve posted", "write posted"])
        )
        position = icli.ok("events", "--all")[-1]["position"]

        icli("worker", "--agent", "doc-reader", "--board", "docs", "--once").expect(0)
        icli.ok("cancel", "--flow", "f-1", "--blackboard", "docs")
        now = as_cli_says(icli, "f-1")
        WebDriverWait(browser, SETTLES_WITHIN).until(lambda d: flow_rows(d).get("f-1") == now)  # live
        browser.save_screenshot(str(artifact("ui-flows.png")))
        assert now == (
            "cancelled",
            ["read completed", "plan cancelled", "approve cancelled", "write cancelled"],
        )

        browser.execute_script(
            "const s = document.getElementById('slider'); s.value = arguments[0];"
            "s.dispatchEvent(new Event('input'));",
            position,
        )
        WebDriverWait(browser, SETTLES_WITHIN).until(
            lambda d: flow_rows(d).get("f-1") == before
        )  # as it stood
    finally:
        server.stop()
    assert json.loads(json.dumps(before))  # plain values
