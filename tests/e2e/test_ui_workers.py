"""The web view's Workers panel (docs/web.md, "Workers"), in a real headless Chromium, against real `blackboard
worker` processes of two agents on SQLite and PostgreSQL: one runs a command handler that waits until the test
releases it (a file appears), the other serves another board and runs nothing. The panel lists each with its
agent, host and pid, what it runs and for how long, its last beat; a worker stopped as a person stops it leaves
it. `GET /api/workers`, which the panel polls, is `status`'s worker document and more."""

from __future__ import annotations

import json
import re
import signal
import socket
from datetime import datetime
from itertools import pairwise
from typing import Any

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from tests.e2e.test_follow_runs import fcli, post, talker  # noqa: F401 - the fixture: workers' CLI
from tests.e2e.test_ui_page import csp_refusals
from tests.e2e.web import UiServer, browser, click, screenshot, settled  # noqa: F401 - the browser fixture
from tests.waiting import wait_until

COLUMNS = ("agent", "host:pid", "boards", "runs now", "for", "last beat")
OTHER = "ps-other"  # the board the idle worker serves (the signals are posted on ps-f)


def row(driver, proc) -> dict[str, str] | None:
    """The panel's row of the worker process `proc` (by its host:pid), column by column, read in one go (the
    panel redraws at each poll); None: no such row."""
    where = f"{socket.gethostname()}:{proc.call_pid}"
    table = driver.execute_script(
        "return [...document.querySelectorAll('#workers tr.worker')].map((r) => [...r.cells].map((c) => c.innerText));"
    )
    return next((dict(zip(COLUMNS, cells, strict=True)) for cells in table if cells[1] == where), None)


def seconds(age: str) -> int:
    """An age as the panel words it (3s, 4m05s), in seconds."""
    found = re.fullmatch(r"(?:(\d+)m)?(\d+)s", age)
    assert found, age
    return int(found[1] or 0) * 60 + int(found[2])


def start_two(cli) -> tuple[Any, Any]:
    """A worker of `talker`, which claims ps-f's signals and holds each until `go` appears, and one of
    `idler`, which serves only OTHER, where nothing is posted."""
    talker(cli, cli.cwd / "go", "talker")
    talker(cli, cli.cwd / "never", "idler")
    return cli.start("worker", "--agent", "talker"), cli.start("worker", "--agent", "idler", "--board", OTHER)


def stop(cli, proc) -> None:
    """SIGTERM, as a service manager (or a person's kill) stops a worker: it says it stopped, and ends 0."""
    proc.send_signal(signal.SIGTERM)
    assert cli.finish(proc).returncode == 0


def test_the_panel_lists_each_live_worker_what_it_runs_for_how_long_and_its_last_beat(fcli, browser):
    cli, driver = fcli, browser
    server = UiServer(cli).wait_ready()
    busy, idle = start_two(cli)
    try:
        sig = post(cli)
        driver.get(f"{server.url}/?board={OTHER}")  # the idle worker's board: the busy one runs ps-f's signal
        settled(driver, lambda d: row(d, busy) and row(d, idle))
        assert row(driver, busy)["agent"] == "talker" and row(driver, idle)["agent"] == "idler"
        assert (row(driver, busy)["boards"], row(driver, idle)["boards"]) == ("all", OTHER)

        # a signal of another board than the one shown says its board; its link turns the page to that board
        # and picks the signal, as its card does
        settled(driver, lambda d: row(d, busy)["runs now"] == f"{sig} on ps-f")
        click(driver, f'#workers a.run[data-signal="{sig}"]')
        settled(driver, lambda d: d.find_element(By.ID, "board").get_attribute("value") == "ps-f")
        settled(driver, lambda d: d.find_elements(By.CSS_SELECTOR, f'.card.selected[data-signal="{sig}"]'))
        settled(
            driver, lambda d: d.find_element(By.ID, "detail").text.startswith(f"{sig} · RESEARCH · CLAIMED")
        )

        # the busy one runs the signal (on the board shown: with its topic, as its card says it), for longer
        # at each poll; the idle one runs nothing
        runs = f"{sig} a topic"
        first = settled(driver, lambda d: (r := row(d, busy)) and r["runs now"] == runs and seconds(r["for"]))
        settled(driver, lambda d: seconds(row(d, busy)["for"]) > first)
        assert re.fullmatch(r"\d+s ago", row(driver, busy)["last beat"]), row(driver, busy)
        assert (row(driver, idle)["runs now"], row(driver, idle)["for"]) == ("nothing", "")
        assert cli.ok("show", sig)["status"] == "CLAIMED"
        screenshot(driver, "web-workers.png", "#workers-panel")

        # at an earlier log position the panel says it shows the workers as they are now
        driver.find_element(By.ID, "slider").send_keys(Keys.HOME)
        settled(driver, lambda d: "shown live only" in d.find_element(By.ID, "workers").text)
        assert row(driver, busy)["runs now"] == runs
        click(driver, "#live")
        settled(driver, lambda d: "shown live only" not in d.find_element(By.ID, "workers").text)

        (cli.cwd / "go").touch()  # the handler ends: the signal completes, the worker runs nothing
        settled(driver, lambda d: row(d, busy)["runs now"] == "nothing")
        assert cli.ok("show", sig)["status"] == "COMPLETED" and row(driver, busy)["for"] == ""

        stop(cli, idle)
        settled(driver, lambda d: row(d, idle) is None)
        assert row(driver, busy) is not None
        stop(cli, busy)
        settled(driver, lambda d: row(d, busy) is None)  # another test's worker may beat on a shared server
        assert csp_refusals(driver) == []
        polls = driver.execute_script(
            "return performance.getEntriesByType('resource').filter((e) => e.name.endsWith('/api/workers'))"
            ".map((e) => [e.startTime, e.responseEnd]);"
        )
        assert len(polls) > 2 and all(b[0] >= a[1] for a, b in pairwise(polls)), polls  # one at a time

        server.stop()  # the server gone: the panel says so, once, and goes on polling less often
        settled(driver, lambda d: d.find_element(By.ID, "workers").text.count("workers: unavailable") == 1)
    finally:
        server.stop()


def test_api_workers_is_status_s_worker_document_with_its_runs_and_ages(fcli):
    cli = fcli
    server = UiServer(cli).wait_ready()
    busy, idle = start_two(cli)
    try:
        sig = post(cli)

        def workers(query: str = "") -> dict[str, Any]:
            status, headers, body = server.get(f"/api/workers{query}")
            assert status == 200 and headers["content-type"] == "application/json", body
            return json.loads(body)

        def by_pid(answer: dict[str, Any]) -> dict[int, dict[str, Any]]:
            return {w["pid"]: w for w in answer["workers"]}

        ours = {busy.call_pid, idle.call_pid}
        answer = wait_until(  # ours by their pids (a worker another test left may still be beating its last)
            lambda: (a := workers()) and ours <= set(by_pid(a)) and by_pid(a)[busy.call_pid]["runs"] and a,
            what="both workers, the busy one running the signal",
        )
        shown = by_pid(answer)
        talking, idling = shown[busy.call_pid], shown[idle.call_pid]
        claimed = cli.ok("show", sig)
        [run] = talking["runs"]
        assert (run["signal_id"], run["blackboard_id"]) == (sig, "ps-f") and talking["running"] == [sig]
        assert run["claimed_at"] == claimed["claimed_at"] and claimed["status"] == "CLAIMED"
        at = datetime.fromisoformat(answer["at"])  # the server's clock: the ages are counted to it
        assert run["running_seconds"] == round(
            (at - datetime.fromisoformat(run["claimed_at"])).total_seconds(), 1
        )
        for w, agent, boards in ((talking, "talker", None), (idling, "idler", [OTHER])):
            assert (w["agent"], w["host"], w["boards"]) == (agent, socket.gethostname(), boards)
            assert w["worker_id"].startswith(f"{agent}/") and 0 <= w["last_beat_seconds"] < 30
        assert idling["runs"] == [] and idling["running"] == []

        # one shape with `status --json`'s workers: its fields, the same values (but for a newer beat)
        [board] = cli.ok("status", "--blackboard", "ps-f")
        [in_status] = board["workers"]  # the idle worker does not serve ps-f
        assert set(in_status) < set(talking)
        assert {k: v for k, v in in_status.items() if k != "last_beat_at"} == {
            k: talking[k] for k in in_status if k != "last_beat_at"
        }

        # ?board= keeps the workers that serve it: every board's, and its own
        assert set(by_pid(workers("?board=ps-f"))) == {busy.call_pid}
        assert set(by_pid(workers(f"?board={OTHER}"))) == {busy.call_pid, idle.call_pid}
        for bad, rule in (("%01", "control characters"), ("x" * 201, "at most 200 characters")):
            status, _, body = server.get(f"/api/workers?board={bad}")
            assert status == 400 and json.loads(body)["error"].startswith("board: "), body
            assert rule in json.loads(body)["error"]

        (cli.cwd / "go").touch()
        wait_until(lambda: by_pid(workers())[busy.call_pid]["runs"] == [], what="the run to end")
        stop(cli, idle)
        assert set(by_pid(workers())) == {busy.call_pid}  # stopped: gone at once, not after missed beats
        stop(cli, busy)
        assert workers()["workers"] == []
    finally:
        printed = server.stop()
    assert "Traceback" not in printed
