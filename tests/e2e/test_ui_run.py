"""A run, live, in the web view (docs/web.md, "A run, live"), in a real headless Chromium: a real worker runs the
anthropic runner against the local stand-in Messages API; the signal's detail shows the run's output as `show
--follow` prints it while it goes on; with the server's token a person nudges it (the stand-in sees the nudge in
the run's next request, the output shows it) and cancels it (CANCELLED, the worker stops the run), each through
the guard a gate's decision passes (web/decide.py); without the token there are no buttons and the writes answer
403. On a SQLite file and on PostgreSQL (the nudge tests' board: tests/runners/test_nudges.py)."""

from __future__ import annotations

import json
from typing import Any

from selenium.webdriver.common.by import By

from tests.e2e.test_ui_page import csp_refusals
from tests.e2e.web import UiServer, browser, click, screenshot, settled  # noqa: F401 - the browser fixture
from tests.runners.conftest import Board
from tests.runners.standins import stand_in
from tests.runners.test_nudges import NUDGE, SAID, Working, carrying, nboard  # noqa: F401 - the board fixture

TOKEN = "run-token-0123456789"
BOARD = "ps-1"  # where Board.post posts
ANTHROPIC = "runner: anthropic\nmodel: sonnet\n"
CLOSING = "result: failed: stopped: the signal was cancelled"  # the worker's last record of a cancelled run


def anthropic_env(url: str) -> dict[str, str]:
    return {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "sk-ant-test"}


def output(driver) -> list[str]:
    """The run's output as the page shows it, a line each (the element's text as it is, not as laid out)."""
    return driver.execute_script("return document.getElementById('output').textContent").splitlines()


def buttons(driver) -> list:
    return driver.find_elements(By.CSS_SELECTOR, "#run button.nudge, #run button.cancel")


def card_in(driver, status: str, signal_id: str) -> list:
    return driver.find_elements(
        By.CSS_SELECTOR, f'.column[data-status="{status}"] .card[data-signal="{signal_id}"]'
    )


def test_a_person_with_the_token_follows_a_run_nudges_it_and_cancels_it(nboard: Board, browser):
    cli, driver = nboard.cli, browser
    nboard.agent("writer", ANTHROPIC, "Write.")
    signal_id = nboard.post("writer")["signal_id"]
    by_hand = nboard.post("writer", topic="claimed by hand")["signal_id"]
    cli.ok("claim", by_hand, "--agent", "writer")  # CLAIMED, but no runner's run: it cannot take a nudge
    working = Working("blackboard_show", signal_id, answers=False)  # works until it is cancelled
    server = UiServer(cli, "--token", TOKEN).wait_ready({"X-Blackboard-Token": TOKEN})
    with stand_in(working) as api:
        worker = cli.start("worker", "--agent", "writer", "--once", env=anthropic_env(api.url))
        try:
            assert working.first.wait(120), "the run's first model call never came"
            driver.get(f"{server.url}/?board={BOARD}&token={TOKEN}")
            click(driver, f'.card[data-signal="{signal_id}"]')
            # its output as it comes: the run's request, then its tool calls, while it is CLAIMED
            settled(
                driver,
                lambda d: (
                    (output(d) or [""])[0].startswith("request: model claude-sonnet")
                    and sum("tool blackboard_show" in line for line in output(d)) >= 2
                    and buttons(d)
                ),
            )
            assert cli.ok("show", signal_id)["status"] == "CLAIMED"

            name = driver.find_element(By.CSS_SELECTOR, "#run input.run-name")
            name.clear()
            name.send_keys("alice")
            driver.find_element(By.CSS_SELECTOR, "#run input.nudge-text").send_keys(NUDGE)
            click(driver, "#run button.nudge")
            settled(
                driver, lambda d: f"{signal_id} nudged by alice" in d.find_element(By.ID, "run-message").text
            )
            assert working.nudged.wait(120), "the stand-in never saw the nudge"
            # the output shows it as `show --transcript` words it, and the run goes on working after it
            said = f"nudge from alice: {NUDGE}"
            settled(
                driver,
                lambda d: (
                    said in output(d)
                    and any("tool blackboard_show" in line for line in output(d)[output(d).index(said) :])
                ),
            )
            assert driver.find_element(By.CSS_SELECTOR, "#run input.nudge-text").get_attribute("value") == ""
            assert cli.ok("show", signal_id)["status"] == "CLAIMED"
            driver.execute_script(
                "document.getElementById('detail').scrollIntoView()"
            )  # all of it in the window
            screenshot(driver, "web-run.png", "#detail")

            driver.find_element(By.CSS_SELECTOR, "#run input.cancel-reason").send_keys("the plan changed")
            click(driver, "#run button.cancel")
            settled(driver, lambda d: card_in(d, "CANCELLED", signal_id))
            settled(
                driver,
                lambda d: f"{signal_id} cancelled by alice" in d.find_element(By.ID, "run-message").text,
            )
            # a signal no longer CLAIMED takes neither (the live stream may bring an older record of it first)
            settled(driver, lambda d: not buttons(d) and card_in(d, "CANCELLED", signal_id))
            assert cli.finish(worker).returncode == 0  # the worker stopped the run and, --once, ended
            calls = [r.body for r in api.model_calls]
        finally:
            if worker.poll() is None:
                worker.kill()
    try:
        cancelled = cli.ok("show", signal_id)
        assert (cancelled["status"], cancelled["result"]["error"]) == (
            "CANCELLED",
            "cancelled by alice: the plan changed",
        )
        # the nudge reached the run as `blackboard nudge`'s does: text after the tool results of its next request
        first = carrying(calls)[0]
        assert first > 0
        last = calls[first]["messages"][-1]
        assert [block["type"] for block in last["content"]] == ["tool_result", "text"]
        assert last["content"][1]["text"] == SAID
        events = [e for e in cli.ok("events", "--all") if e["data"].get("signal_id") == signal_id]
        (nudged,) = [e for e in events if e["event_type"] == "AgentSignalNudged"]
        assert (nudged["data"]["nudged_by"], nudged["data"]["text"]) == ("alice", NUDGE)

        # the page's lines are `show --follow`'s, each worded by the server as it words them for every follower
        followed = cli("--json", "show", signal_id, "--follow")
        assert followed.returncode == 3, followed.stderr  # it ended CANCELLED
        *lines, outcome = [json.loads(line) for line in followed.stdout.splitlines()]
        assert outcome["status"] == "CANCELLED"
        settled(driver, lambda d: d.find_element(By.ID, "output").get_attribute("data-ended") == "true")
        shown, printed = output(driver), [line["line"] for line in lines]
        assert said in shown and shown == printed[: len(shown)], (shown, printed)
        # A follower that is there when the cancel lands ends at the outcome, and the worker writes the end of
        # the run after it (its turn under way, refused by the board, and its closing record): `show --follow`
        # started then misses them the same way (docs/web.md, "A run, live"); a board call in flight when the run
        # was stopped may be refused after its closing record is written: only such refusals come after it (on a
        # loaded machine the closing record was once not kept at all; the change's closing note says so)
        closing = [n for n, line in enumerate(printed) if line.startswith(CLOSING)]
        late = printed[closing[-1] + 1 :] if closing else []
        assert all(line.startswith("tool ") and " refused: " in line for line in late), printed
        assert said not in printed[len(shown) :], printed

        # the board's rules answer as the CLI's family; the body's fields are named as the body names them
        own = {"X-Blackboard-Token": TOKEN, "Origin": server.url}

        def post(path: str, body: dict[str, Any], headers: dict[str, str] = own) -> tuple[int, str]:
            status, _, answer = server.post(path, json.dumps(body), headers)
            return status, json.loads(answer)["error"] if status != 200 else ""

        nudge = {"by": "alice", "text": "one more thing"}
        status, error = post(f"/api/signals/{signal_id}/nudge", nudge)
        assert status == 409 and "CANCELLED" in error, error
        status, error = post(f"/api/signals/{by_hand}/nudge", nudge)
        assert status == 409 and "cannot take a nudge: it is no runner's run" in error, error
        assert post("/api/signals/sig-00000000/cancel", {"by": "alice"})[0] == 404
        status, error = post(f"/api/signals/{by_hand}/nudge", {"by": "alice"})
        assert status == 400 and error.startswith("text"), error
        status, error = post(f"/api/signals/{by_hand}/cancel", {"by": " "})
        assert status == 400 and error.startswith("by"), error
        status, error = post(f"/api/signals/{by_hand}/cancel", {"by": "alice", "reason": 7})
        assert status == 400 and error.startswith("reason"), error
        status, error = post(f"/api/signals/{by_hand}/nudge", {"by": "x" * 300, "text": "t"})
        assert status == 400 and error.startswith("by"), error
        # the guard of a gate's decision: the token in the header, from one of the server's own origins
        for headers in (
            {"Cookie": f"blackboard_ui_token={TOKEN}", "Origin": server.url},
            {"X-Blackboard-Token": TOKEN, "Origin": "http://evil.example"},
        ):
            assert post(f"/api/signals/{by_hand}/cancel", {"by": "mallory"}, headers)[0] == 403, headers
        assert cli.ok("show", by_hand)["status"] == "CLAIMED"
        assert post(f"/api/signals/{by_hand}/cancel", {"by": "alice"}) == (200, "")  # no reason: the CLI's
        assert cli.ok("show", by_hand)["result"]["error"] == "cancelled by alice: no reason given"
        assert csp_refusals(driver) == []
    finally:
        server.stop()


def test_without_the_token_a_run_shows_its_output_with_no_buttons_and_its_writes_are_refused(nboard, browser):
    cli, driver = nboard.cli, browser
    nboard.agent("writer", ANTHROPIC, "Write.")
    signal_id = nboard.post("writer")["signal_id"]
    cli.ok("claim", signal_id, "--agent", "writer")
    read_only = UiServer(cli).wait_ready()
    with_token = UiServer(cli, "--token", TOKEN).wait_ready({"X-Blackboard-Token": TOKEN})
    try:
        for url, hint in (
            (f"{read_only.url}/?board={BOARD}", False),
            (f"{with_token.url}/?board={BOARD}", True),
        ):
            driver.get(url if not hint else f"{url}&token={TOKEN}")
            if hint:  # the server has a token, but this tab was opened without it (it keeps only the cookie)
                kept = "return sessionStorage.getItem('blackboard-token')"
                settled(driver, lambda d: d.execute_script(kept) == TOKEN)  # the page started, took it
                driver.execute_script("sessionStorage.clear()")
                driver.get(url)
            click(driver, f'.card[data-signal="{signal_id}"]')
            settled(driver, lambda d: output(d) == ["(waiting for output)"])
            assert not buttons(driver) and not driver.find_elements(By.CSS_SELECTOR, "#run input")
            shown = driver.find_element(By.ID, "run").text
            assert ("Open the page with ?token=T to nudge or cancel this run." in shown) is hint, shown

        answer = driver.execute_async_script(
            """
            const done = arguments[arguments.length - 1];
            fetch(`${arguments[0]}/api/signals/${arguments[1]}/cancel`, {method: "POST",
                  headers: {"Content-Type": "application/json"}, body: JSON.stringify({by: "alice"})})
              .then(async (r) => done([r.status, await r.text()]));
            """,
            "",
            signal_id,
        )
        assert answer[0] == 403, answer  # this tab's server (the one with a token) without it in the header
        for path in (f"/api/signals/{signal_id}/nudge", f"/api/signals/{signal_id}/cancel"):
            status, _, body = read_only.post(
                path, json.dumps({"by": "alice", "text": "t"}), {"Origin": read_only.url}
            )
            assert status == 403 and b"read-only" in body and b"nudges and cancels runs" in body, body
        assert cli.ok("show", signal_id)["status"] == "CLAIMED"
        assert csp_refusals(driver) == []
    finally:
        read_only.stop()
        with_token.stop()
