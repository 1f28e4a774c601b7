"""The web view's gates in a real headless Chromium (docs/web.md): the open gates are listed; approve and
reject buttons appear only when `blackboard ui` runs with a token and the page was opened with it, and the
server accepts a decision only with that token in its header and from its own origin."""

from __future__ import annotations

import json

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from tests.e2e.conftest import Cli, database_url
from tests.e2e.test_ui_page import csp_refusals
from tests.e2e.web import UiServer, artifact, browser, click  # noqa: F401 - the browser fixture

SETTLES_WITHIN = 30.0  # a bound, never reached when things work
TOKEN = "gate-token-0123456789"


@pytest.fixture(params=["sqlite", "postgresql"])
def gate_cli(request, make_cli, tmp_path_factory, tmp_path) -> Cli:
    made = make_cli(database_url(request, tmp_path_factory, "ui-gates"), tmp_path)
    made.ok("db", "upgrade")
    return made


def gate(cli: Cli, entry: str) -> str:
    return cli.post("--gate", type="DECISION", ps="ps-g", entry=entry, topic=f"decide {entry}")["signal_id"]


def row(driver, signal_id: str) -> list:
    return driver.find_elements(By.CSS_SELECTOR, f'#gates tr.gate[data-gate="{signal_id}"]')


def test_with_a_token_a_person_approves_and_rejects_gates_on_the_page(gate_cli, browser):
    cli, driver = gate_cli, browser
    first, second = gate(cli, "e-1"), gate(cli, "e-2")
    after = cli.post("--after", first, ps="ps-g", entry="e-3")["signal_id"]
    server = UiServer(cli, "--token", TOKEN).wait_ready({"X-Blackboard-Token": TOKEN})
    try:
        driver.get(f"{server.url}/?board=ps-g&token={TOKEN}")
        WebDriverWait(driver, SETTLES_WITHIN).until(
            lambda d: (
                row(d, first) and row(d, second) and d.find_elements(By.CSS_SELECTOR, "#gates button.approve")
            )
        )
        driver.save_screenshot(str(artifact("ui-gates-open.png")))
        driver.find_element(By.ID, "decider").send_keys("alice")
        one = f'#gates tr.gate[data-gate="{first}"]'
        driver.find_element(By.CSS_SELECTOR, f"{one} input.gate-text").send_keys("numbers checked")
        click(driver, "button.approve", inside=one)

        WebDriverWait(driver, SETTLES_WITHIN).until(lambda d: not row(d, first))
        approved = cli.ok("show", first)
        assert (approved["status"], approved["decided_by"], approved["decision_note"]) == (
            "COMPLETED",
            "alice",
            "numbers checked",
        )
        assert cli.ok("show", after)["waiting_for"] == []

        two = f'#gates tr.gate[data-gate="{second}"]'
        click(driver, "button.reject", inside=two)  # no reason yet
        WebDriverWait(driver, SETTLES_WITHIN).until(
            lambda d: "reason" in d.find_element(By.ID, "gate-message").text
        )
        assert cli.ok("show", second)["status"] == "POSTED"
        driver.find_element(By.CSS_SELECTOR, f"{two} input.gate-text").send_keys("not this week")
        click(driver, "button.reject", inside=two)

        WebDriverWait(driver, SETTLES_WITHIN).until(lambda d: not row(d, second))
        rejected = cli.ok("show", second)
        assert (
            rejected["status"] == "FAILED"
            and rejected["result"]["error"] == "rejected by alice: not this week"
        )
        driver.save_screenshot(str(artifact("ui-gates.png")))
        assert csp_refusals(driver) == []

        # the same token, but a cookie alone, or another origin: refused, nothing written
        third = gate(cli, "e-4")
        body = json.dumps({"by": "mallory"})
        cookie = {"Cookie": f"blackboard_ui_token={TOKEN}", "Origin": server.url}
        elsewhere = {"X-Blackboard-Token": TOKEN, "Origin": "http://evil.example"}
        for headers in (cookie, elsewhere, {"X-Blackboard-Token": TOKEN}):
            status, _, _ = server.post(f"/api/gates/{third}/approve", body, headers)
            assert status == 403, headers
        assert cli.ok("show", third)["status"] == "POSTED"
        status, _, _ = server.post(f"/api/gates/{third}/approve", body, {"Origin": server.url})
        assert status == 401  # no token at all: the token gate answers first
    finally:
        server.stop()


def test_without_a_token_the_gates_are_listed_with_no_buttons_and_a_decision_is_refused(gate_cli, browser):
    cli, driver = gate_cli, browser
    first = gate(cli, "e-1")
    server = UiServer(cli).wait_ready()
    try:
        driver.get(f"{server.url}/?board=ps-g")
        WebDriverWait(driver, SETTLES_WITHIN).until(
            lambda d: "connected" in d.find_element(By.ID, "connection").text and row(d, first)
        )
        assert not driver.find_elements(By.CSS_SELECTOR, "#gates button")
        assert not driver.find_elements(By.ID, "decider")

        answer = driver.execute_async_script(
            """
            const done = arguments[arguments.length - 1];
            fetch(`/api/gates/${arguments[0]}/approve`, {method: "POST", headers: {"Content-Type": "application/json"},
                  body: JSON.stringify({by: "alice"})})
              .then(async (r) => done([r.status, await r.text()]));
            """,
            first,
        )
        assert answer[0] == 403 and "read-only" in answer[1]
        assert cli.ok("show", first)["status"] == "POSTED"
        assert csp_refusals(driver) == []
    finally:
        server.stop()


def test_a_decision_s_origin_is_one_the_server_was_given_never_one_its_host_header_names(gate_cli):
    """The approve route used to take `scheme://Host` as its own origin, so a request naming any Host with the
    matching Origin passed; now the Origin must be one of the server's own as configured (web/hosts.py)."""
    cli = gate_cli
    first, second, third = gate(cli, "e-1"), gate(cli, "e-2"), gate(cli, "e-3")
    body, token = json.dumps({"by": "mallory"}), {"X-Blackboard-Token": TOKEN}
    server = UiServer(cli, "--token", TOKEN).wait_ready(token)
    try:
        port = server.port
        for headers, status in [
            # a Host it was not given, with the Origin that Host would make: the Host check answers first
            ({"Host": "evil.example", "Origin": "http://evil.example"}, 400),
            ({"Host": f"evil.example:{port}", "Origin": f"http://evil.example:{port}"}, 400),
            # its own Host, another origin (or none a browser would name)
            ({"Host": f"127.0.0.1:{port}", "Origin": "http://127.0.0.1:9999"}, 403),
            ({"Host": f"127.0.0.1:{port}", "Origin": f"https://127.0.0.1:{port}"}, 403),
            ({"Host": f"127.0.0.1:{port}", "Origin": "null"}, 403),
        ]:
            answer = server.post(f"/api/gates/{first}/approve", body, {**token, **headers})
            assert answer[0] == status, (headers, answer)
        assert cli.ok("show", first)["status"] == "POSTED"
        answer = server.post(  # a page opened as localhost deciding through 127.0.0.1: both its own
            f"/api/gates/{first}/approve",
            body,
            {**token, "Host": f"127.0.0.1:{port}", "Origin": f"http://localhost:{port}"},
        )
        assert answer[0] == 200 and cli.ok("show", first)["status"] == "COMPLETED", answer
    finally:
        server.stop()

    allowing = ("--allow-host", "board.example.com", "--allow-host", "https://proxy.example.org")
    server = UiServer(cli, "--token", TOKEN, *allowing).wait_ready(token)
    try:
        port = server.port
        for headers in [  # a name it was given, on another port or scheme than configured
            {"Host": f"board.example.com:{port}", "Origin": "http://board.example.com:9999"},
            {"Host": "proxy.example.org", "Origin": "http://proxy.example.org"},
        ]:
            answer = server.post(f"/api/gates/{second}/approve", body, {**token, **headers})
            assert answer[0] == 403, (headers, answer)
        assert cli.ok("show", second)["status"] == "POSTED"
        for (
            signal_id,
            headers,
        ) in [  # its own: a name given, on its port; an origin given whole (a TLS proxy's)
            (second, {"Host": f"board.example.com:{port}", "Origin": f"http://board.example.com:{port}"}),
            (third, {"Host": "proxy.example.org", "Origin": "https://proxy.example.org"}),
        ]:
            answer = server.post(f"/api/gates/{signal_id}/approve", body, {**token, **headers})
            assert answer[0] == 200 and cli.ok("show", signal_id)["status"] == "COMPLETED", (headers, answer)
    finally:
        server.stop()
