"""Runs you can watch (issue 36, item 4; docs/cli.md `show --follow`, docs/persistence.md "Run output"): a real
worker runs a command handler that prints lines, or an anthropic runner or the real Claude Code against the local
stand-in, and a
follower in another process (`blackboard show SIG --follow`, the Python API's `follow`, the MCP tool
`blackboard_follow` of a person's server, the web view in Chromium) sees its lines while it still runs (the
handler, or the stand-in, holds its end until the test has seen them), then the outcome; on SQLite and
PostgreSQL."""

from __future__ import annotations

import asyncio
import json
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.common.by import By

from blackboard import AsyncBlackboard, Blackboard, TimedOut
from blackboard.infrastructure.mcp.tools import every_tool
from blackboard.models import OutputLine, Signal
from tests.cli_server import start_blackboard
from tests.e2e.conftest import Cli, database_url
from tests.e2e.mcp_client import served
from tests.e2e.web import UiServer, browser, click, settled  # noqa: F401 - the browser fixture
from tests.runners.claude import claude_env
from tests.runners.conftest import RunnerCli
from tests.runners.standins import Turn, call, say, stand_in
from tests.waiting import wait_until

WITHIN = 60.0  # a bound for what a loaded machine does, never reached when things work


@pytest.fixture(params=["sqlite", "postgresql"])
def fcli(request, tmp_path_factory, tmp_path) -> Any:
    """The CLI on the database (its runner flavour: signals wait an hour for their worker), an agents folder
    of this test's own; stopped what it started at the end."""
    agents = tmp_path / "agents"
    agents.mkdir()
    made = RunnerCli(database_url(request, tmp_path_factory, "follow"), agents, tmp_path)
    made.ok("db", "upgrade")
    yield made
    made.close()


def talker(cli: Cli, go: Path, name: str = "talker") -> None:
    """A command handler that prints a line to each stream, waits for `go`, then prints more and ends."""
    script = (
        "echo 'reading sources'; echo 'looking at 3 files' >&2; "
        f"while [ ! -e {go} ]; do sleep 0.05; done; "
        "echo 'writing notes' >&2; echo '{\"knowledge_items\": [\"notes written\"]}'"
    )
    head = (
        f"name: {name}\ndescription: talks\ncapabilities: {{RESEARCH: 0.95}}\ncommand: {json.dumps(script)}\n"
    )
    (cli.agents_dir / f"{name}.md").write_text(f"---\n{head}---\nTalks.\n", encoding="utf-8")


def post(cli: Cli, *args: str) -> str:
    return cli.post(*args, ps="ps-f")["signal_id"]


class Follower:
    """`blackboard show SIG --follow ARGS` in a process of its own, its lines read as it prints them."""

    def __init__(self, cli: Cli, *args: str) -> None:
        self.proc = start_blackboard(
            list(args), cli.environment(), cli.cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append(line.rstrip("\n"))

    def printed(self, *texts: str) -> bool:
        return all(any(t in line for line in self.lines) for t in texts)

    def end(self) -> tuple[int, list[str], str]:
        try:
            code = self.proc.wait(timeout=WITHIN)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
        self._reader.join(WITHIN)
        assert self.proc.stderr is not None
        stderr = self.proc.stderr.read()
        assert "Traceback" not in stderr, stderr
        return code, self.lines, stderr


def index(lines: list[str], text: str) -> int:
    return next(i for i, line in enumerate(lines) if text in line)


def test_show_follow_prints_a_handler_s_lines_as_they_come_then_the_outcome(fcli):
    cli, go = fcli, fcli.cwd / "go"
    talker(cli, go)
    sig = post(cli)
    worker = cli.start("worker", "--agent", "talker", "--once")
    follower = Follower(cli, "show", sig, "--follow")  # another process than the worker's
    wait_until(
        lambda: follower.printed("reading sources", "stderr: looking at 3 files"),
        WITHIN,
        "the follower to print the handler's first lines",
    )
    assert cli.ok("show", sig)["status"] == "CLAIMED"  # seen while the run goes on (it waits for `go`)
    assert follower.proc.poll() is None
    go.touch()
    code, lines, _ = follower.end()
    assert code == 0, lines
    # each stream in its order (the two pipes are read side by side), every line before the outcome
    assert index(lines, "reading sources") < index(lines, "stderr: writing notes"), lines
    result = index(lines, '{"knowledge_items": ["notes written"]}')
    assert max(result, index(lines, "stderr: writing notes")) < index(lines, "COMPLETED by talker"), lines
    assert cli.finish(worker).returncode == 0


def test_show_follow_json_lines_the_exit_codes_of_wait_and_going_on_after_a_cursor(fcli):
    cli = fcli
    script = "echo 'tried once'; echo 'no sources found' >&2; exit 1"
    head = f"name: failing\ncapabilities: {{RESEARCH: 0.95}}\ncommand: {json.dumps(script)}\n"
    (cli.agents_dir / "failing.md").write_text(f"---\n{head}---\nFails.\n", encoding="utf-8")
    sig = post(cli)
    worker = cli.start("worker", "--agent", "failing", "--once")
    followed = cli("--json", "show", sig, "--follow")
    assert followed.returncode == 3, followed.stderr  # as `wait`: it ended FAILED
    assert "the signal ended FAILED" in followed.stderr
    *lines, outcome = [json.loads(line) for line in followed.stdout.splitlines()]
    assert sorted((line["stream"], line["text"]) for line in lines) == [
        ("stderr", "no sources found"),
        ("stdout", "tried once"),
    ]
    assert [line["cursor"] for line in lines] == ["1:1", "1:2"]
    assert (outcome["signal_id"], outcome["status"]) == (sig, "FAILED")
    assert cli.finish(worker).returncode == 0

    after = cli("--json", "show", sig, "--follow", "--after", lines[0]["cursor"])
    assert after.returncode == 3
    assert [json.loads(line).get("text") for line in after.stdout.splitlines()][:-1] == [lines[1]["text"]]

    waiting = post(cli)  # its worker is gone: it waits (for an hour)
    timed_out = cli("show", waiting, "--follow", "--timeout", "0.5")
    assert timed_out.returncode == 5 and timed_out.stdout == "", timed_out
    assert cli("show", "sig-00000000", "--follow").returncode == 4
    bad = cli("show", sig, "--follow", "--after", "one")
    assert bad.returncode == 2 and "--after" in bad.stderr and "ATTEMPT:SEQUENCE" in bad.stderr, bad.stderr
    alone = cli("show", sig, "--after", "1:1")
    assert alone.returncode == 2 and "--after" in alone.stderr and "--follow" in alone.stderr, alone.stderr
    both = cli("show", sig, "--follow", "--transcript")
    assert both.returncode == 2 and "--transcript" in both.stderr, both.stderr


def test_a_follow_goes_on_through_a_retry_each_attempt_s_lines_in_turn(fcli):
    cli, tried = fcli, fcli.cwd / "tried"
    script = (
        f"if [ -e {tried} ]; then echo 'second attempt' >&2; echo '{{\"knowledge_items\": [\"ok\"]}}'; "
        f"else touch {tried}; echo 'first attempt' >&2; echo '{{\"retry_after\": 0}}'; fi"
    )
    head = f"name: flaky\ncapabilities: {{RESEARCH: 0.95}}\ncommand: {json.dumps(script)}\n"
    (cli.agents_dir / "flaky.md").write_text(f"---\n{head}---\nFails once.\n", encoding="utf-8")
    sig = post(cli, "--max-attempts", "2")
    worker = cli.start("worker", "--agent", "flaky")
    try:
        followed = cli("--json", "show", sig, "--follow", "--timeout", str(WITHIN))
    finally:
        worker.terminate()
        cli.finish(worker)
    assert followed.returncode == 0, followed.stderr
    *lines, outcome = [json.loads(line) for line in followed.stdout.splitlines()]
    assert [(line["attempt"], line["text"]) for line in lines if "attempt" in line["text"]] == [
        (1, "first attempt"),
        (2, "second attempt"),
    ]
    assert [line["cursor"] for line in lines] == ["1:1", "1:2", "2:1", "2:2"]  # in order
    assert (outcome["status"], outcome["attempt"]) == ("COMPLETED", 2)


class Held:
    """The stand-in's script: a tool call first, then the final answer held until the test lets it go."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.calls = 0

    def __call__(self, body: dict[str, Any]) -> Turn:
        self.calls += 1
        if self.calls == 1:
            return call("blackboard_write", {"key": "notes/draft", "value": "a first draft"})
        self.release.wait(WITHIN)
        return say("FINAL ANSWER")


def test_the_python_api_follows_an_anthropic_run_through_a_real_worker(fcli):
    cli = fcli
    (cli.agents_dir / "writer.md").write_text(
        "---\nname: writer\ncapabilities: {RESEARCH: 0.95}\nrunner: anthropic\nmodel: sonnet\n---\nYou write.\n",
        encoding="utf-8",
    )
    sig = post(cli, "--topic", "summarise X")
    held = Held()
    with stand_in(held) as api, Blackboard(cli.db_url, agents_dir=cli.agents_dir) as board:
        env = {"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "sk-ant-test"}
        worker = cli.start("worker", "--agent", "writer", "--once", env=env)
        seen: list[OutputLine | Signal] = []
        follow = threading.Thread(target=lambda: seen.extend(board.follow(sig, timeout=WITHIN * 2)))
        follow.start()
        try:
            wait_until(
                lambda: any(isinstance(i, OutputLine) and "tool blackboard_write" in i.line for i in seen),
                WITHIN,
                "the follower to see the run's tool call",
            )
            assert board.show(sig).status == "CLAIMED" and not any(isinstance(i, Signal) for i in seen)
        finally:
            held.release.set()
        follow.join(WITHIN * 2)
        assert cli.finish(worker).returncode == 0
    *lines, outcome = seen
    assert isinstance(outcome, Signal) and outcome.status == "COMPLETED"
    assert all(isinstance(line, OutputLine) and line.stream == "transcript" for line in lines)
    shown = [line.line for line in lines]
    assert shown[0].startswith("request: model claude-sonnet") and sig in shown[0], shown[0]
    assert shown[-1] == "result: succeeded: FINAL ANSWER"
    assert "message" not in shown, shown  # the conversation kept for a later attempt is no step of the run
    assert json.loads(lines[-1].text)["type"] == "result"  # `text`: the record as the transcript holds it
    # the same lines as the worker's transcript file, in the one rendering `show --transcript` uses
    transcript = cli("show", sig, "--transcript").expect(0).stdout.splitlines()[1:]
    assert [t.strip() for t in transcript] == shown
    with Blackboard(cli.db_url, agents_dir=cli.agents_dir) as board:
        again = list(board.follow(sig, after=lines[-2].cursor))
        assert [i.line for i in again[:-1]] == [shown[-1]] and again[-1].status == "COMPLETED"
        with pytest.raises(TimedOut):
            list(board.follow(post(cli), timeout=0.3))  # its worker is gone: it waits

    async def follow_async() -> list[OutputLine | Signal]:
        async with AsyncBlackboard(cli.db_url, agents_dir=cli.agents_dir) as board:
            return [item async for item in board.follow(sig)]

    *async_lines, async_outcome = asyncio.run(follow_async())  # the same, awaited
    assert [line.line for line in async_lines] == shown and async_outcome.status == "COMPLETED"


def test_show_follow_prints_a_claude_code_run_s_steps_as_they_come(fcli, tmp_path):
    cli = fcli
    (cli.agents_dir / "reviewer.md").write_text(
        "---\nname: reviewer\ncapabilities: {RESEARCH: 0.95}\ntools: Read, Grep\nmodel: sonnet\n---\nYou review.\n",
        encoding="utf-8",
    )
    sig = post(cli, "--topic", "review the auth change")
    release = threading.Event()
    answered: list[Turn] = [
        call("mcp__blackboard__blackboard_write", {"key": "notes/review", "value": "two bugs"})
    ]

    def answer(body: dict[str, Any]) -> Turn:
        if answered:
            return answered.pop()
        release.wait(WITHIN)  # the final answer waits until the follower printed the run's first steps
        return say("REVIEW DONE: two bugs found")

    with stand_in(answer) as api:
        worker = cli.start("worker", "--agent", "reviewer", "--once", env=claude_env(api.url, tmp_path))
        follower = Follower(cli, "show", sig, "--follow")
        try:
            wait_until(
                lambda: follower.printed(
                    "system init: model claude-sonnet",
                    'assistant: calls mcp__blackboard__blackboard_write({"key"',
                ),
                WITHIN,
                "the follower to print Claude Code's first steps",
            )
            assert cli.ok("show", sig)["status"] == "CLAIMED"
        finally:
            release.set()
        code, lines, _ = follower.end()
        assert cli.finish(worker).returncode == 0
    assert code == 0, lines
    result = index(lines, "result success: ")
    assert lines[result].endswith("REVIEW DONE: two bugs found")
    assert index(lines, "system init") < result < index(lines, "COMPLETED by reviewer")


def test_the_mcp_tool_of_a_person_s_server_pages_a_run_s_output_and_an_agent_s_server_has_none(fcli):
    cli, go = fcli, fcli.cwd / "go"
    talker(cli, go)
    sig = post(cli)
    worker = cli.start("worker", "--agent", "talker", "--once")

    async def follow() -> tuple[list[dict[str, Any]], dict[str, Any], str]:
        async with served(cli) as person:
            tools = {t.name for t in (await person.session.list_tools()).tools}
            assert "blackboard_follow" in tools
            lines: list[dict[str, Any]] = []
            after = ""
            while not any(line["text"] == "looking at 3 files" for line in lines):
                page = await person.call("blackboard_follow", signal_id=sig, after=after, timeout_seconds=5)
                lines += page["lines"]
                after = page["after"]
                assert page["outcome"] is None
            status = cli.ok("show", sig)["status"]  # the run still goes on: it waits for `go`
            go.touch()
            outcome = None
            while outcome is None:
                page = await person.call("blackboard_follow", signal_id=sig, after=after, timeout_seconds=5)
                lines += page["lines"]
                after, outcome = page["after"], page["outcome"]
            refused, _ = await person.refused("blackboard_follow", signal_id=sig, after="one")
            assert "after" in refused and "ATTEMPT:SEQUENCE" in refused, refused
        async with served(cli, "--agent", "talker") as agent:
            tools = {t.name for t in (await agent.session.list_tools()).tools}
            assert "blackboard_follow" not in tools  # a person's server's only
        assert "blackboard_follow" not in every_tool(False, bound=True)  # nor a run's bound session's
        return lines, outcome, status

    lines, outcome, status = asyncio.run(follow())
    assert status == "CLAIMED"
    by_stream = {s: [line["text"] for line in lines if line["stream"] == s] for s in ("stdout", "stderr")}
    assert by_stream == {
        "stdout": ["reading sources", '{"knowledge_items": ["notes written"]}'],
        "stderr": ["looking at 3 files", "writing notes"],
    }
    assert {line["line"] for line in lines if line["stream"] == "stderr"} == {
        "stderr: looking at 3 files",
        "stderr: writing notes",
    }
    assert [line["sequence"] for line in lines] == [1, 2, 3, 4]
    assert (outcome["signal_id"], outcome["status"]) == (sig, "COMPLETED")
    assert cli.finish(worker).returncode == 0


def test_the_web_view_shows_a_signal_s_output_live(fcli, browser):
    cli, driver, go = fcli, browser, fcli.cwd / "go"
    talker(cli, go)
    sig = post(cli)
    server = UiServer(cli).wait_ready()
    worker = cli.start("worker", "--agent", "talker", "--once")
    try:
        status, _, body = server.get("/api/output?after=1:0")
        assert status == 400 and b"signal" in body
        status, _, body = server.get(f"/api/output?signal={sig}&after=one")
        assert status == 400 and b"after" in body and b"ATTEMPT:SEQUENCE" in body
        assert server.get("/api/output?signal=sig-00000000")[0] == 404
        driver.get(f"{server.url}/?board=ps-f")
        click(driver, f'.card[data-signal="{sig}"]')

        def output(d: Any) -> str:
            return d.find_element(By.ID, "output").text

        settled(
            driver, lambda d: "reading sources" in output(d) and "stderr: looking at 3 files" in output(d)
        )
        assert cli.ok("show", sig)["status"] == "CLAIMED"
        assert "writing notes" not in output(driver)
        go.touch()
        settled(driver, lambda d: "stderr: writing notes" in output(d))
        settled(
            driver,
            lambda d: d.find_elements(
                By.CSS_SELECTOR, f'.column[data-status="COMPLETED"] .card[data-signal="{sig}"]'
            ),
        )
        shown = output(driver).splitlines()
        assert shown.index("reading sources") < shown.index("stderr: writing notes")
        assert cli.finish(worker).returncode == 0
    finally:
        server.stop()
