"""A person's nudge reaches a running agent at its next turn (docs/agents.md, "Nudges"): a real worker runs the
anthropic or openai runner (the official SDKs) or the real Claude Code against the stand-in, and the nudge,
sent while the run works (through the CLI, the Python API or the MCP person's server), is in the next request
the model is sent, as a user message; the transcript records it; on a SQLite file and on PostgreSQL."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from typing import Any

import anyio
import pytest

from blackboard import Blackboard
from tests.e2e.conftest import database_url
from tests.e2e.mcp_client import served
from tests.runners.claude import claude_env
from tests.runners.conftest import Board, RunnerCli
from tests.runners.standins import Turn, call, say, slow, stand_in
from tests.waiting import wait_until

NUDGE = "NUDGE-TEXT: the tests are in tests/unit, start there"
SAID = f"[a nudge from alice, sent while you work] {NUDGE}"
PATIENCE = 400  # turns the stand-in gives a run to get its nudge before it answers without one


@pytest.fixture(params=["sqlite", "postgresql"])
def nboard(request, tmp_path, tmp_path_factory) -> Iterator[Board]:
    agents, workdir = tmp_path / "agents", tmp_path / "work"
    agents.mkdir()
    workdir.mkdir()
    cli = RunnerCli(database_url(request, tmp_path_factory, "nudges"), agents, workdir)
    yield Board(cli, agents, workdir)
    cli.close()


class Working:
    """The stand-in's answers: a board tool called again and again (a run at work, a quarter second a turn)
    until a request carries the nudge, then the final answer (or, `answers` False, more work: a run left to be
    cancelled). `first` is set at the first model call, `nudged` at the first that carries the nudge."""

    def __init__(self, tool: str, signal_id: str, answers: bool = True) -> None:
        self.tool, self.signal_id, self.answers = tool, signal_id, answers
        self.first, self.nudged = threading.Event(), threading.Event()
        self.turns = 0

    def __call__(self, body: dict[str, Any]) -> Turn:
        self.first.set()
        self.turns += 1
        if NUDGE in json.dumps(body.get("messages")):
            self.nudged.set()
            if self.answers:
                return say("DONE AFTER THE NUDGE")
        if self.turns > PATIENCE:
            return say("NO NUDGE CAME")
        return slow(0.25, call(self.tool, {"signal_id": self.signal_id}))


def run_and_nudge(board: Board, agent: str, env: dict[str, str], tool: str, nudge: Callable[[str], None]):
    signal_id = board.post(agent)["signal_id"]
    working = Working(tool, signal_id)
    with stand_in(working) as api:
        worker = board.cli.start("worker", "--agent", agent, "--once", env=env(api.url))
        assert working.first.wait(120), "the run's first model call never came"
        nudge(signal_id)
        board.cli.finish(worker).expect(0)
        calls = [r.body for r in api.model_calls]
    return board.show(signal_id), calls


def carrying(calls: list[dict[str, Any]]) -> list[int]:
    return [i for i, body in enumerate(calls) if NUDGE in json.dumps(body.get("messages"))]


def assert_recorded(board: Board, done: dict[str, Any], runner: str) -> None:
    """The run ended with the answer to the nudge; the log has the nudge and the claim's runner; the transcript
    records the nudge, and `show --transcript` prints it."""
    assert (done["status"], done["result"]["knowledge_items"]) == ("COMPLETED", ["DONE AFTER THE NUDGE"])
    events = board.cli.ok("events", "--all")
    (nudged,) = [e for e in events if e["event_type"] == "AgentSignalNudged"]
    assert (nudged["data"]["signal_id"], nudged["data"]["nudged_by"], nudged["data"]["text"]) == (
        done["signal_id"],
        "alice",
        NUDGE,
    )
    assert nudged["data"]["attempt"] == 1
    (claimed,) = [e for e in events if e["event_type"] == "AgentSignalClaimed"]
    assert claimed["data"]["runner"] == runner
    (record,) = [r for r in board.transcript(done) if r["type"] == "nudge"]
    assert (record["by"], record["text"]) == ("alice", NUDGE)
    shown = board.cli("show", done["signal_id"], "--transcript").expect(0).stdout.splitlines()
    assert f"  nudge from alice: {NUDGE}" in shown


def test_a_nudge_by_the_cli_reaches_an_anthropic_run_as_text_after_its_tool_results(nboard):
    nboard.agent("writer", "runner: anthropic\nmodel: sonnet\n", "Write.")
    env = lambda url: {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "sk-ant-test"}  # noqa: E731

    def nudge(signal_id: str) -> None:
        nboard.cli("nudge", signal_id, NUDGE, "--by", "alice").expect(0)

    done, calls = run_and_nudge(nboard, "writer", env, "blackboard_show", nudge)

    first = carrying(calls)[0]
    assert first > 0 and first == len(calls) - 1  # given at a turn after the first; answered at once
    last = calls[first]["messages"][-1]
    assert last["role"] == "user"
    kinds = [block["type"] for block in last["content"]]
    assert kinds == ["tool_result", "text"]  # the Messages API: the tool results first in the user turn
    assert last["content"][1]["text"] == SAID
    assert json.dumps(calls[first]).count(NUDGE) == 1  # given once
    assert_recorded(nboard, done, "anthropic")


def test_a_nudge_by_the_python_api_reaches_an_openai_run_as_a_user_message_after_the_tool_messages(nboard):
    nboard.agent("analyst", "runner: openai\nmodel: gpt-4o\n", "Analyse.")
    env = lambda url: {"OPENAI_BASE_URL": f"{url}/v1", "OPENAI_API_KEY": "sk-test"}  # noqa: E731

    def nudge(signal_id: str) -> None:
        with Blackboard(nboard.cli.db_url, agents_dir=nboard.agents) as bb:
            assert bb.nudge(signal_id, NUDGE, by="alice").status == "CLAIMED"

    done, calls = run_and_nudge(nboard, "analyst", env, "blackboard_show", nudge)

    first = carrying(calls)[0]
    assert first > 0 and first == len(calls) - 1
    messages = calls[first]["messages"]
    assert [m["role"] for m in messages[-2:]] == ["tool", "user"]
    assert messages[-1]["content"] == SAID
    assert json.dumps(calls[first]).count(NUDGE) == 1
    assert_recorded(nboard, done, "openai")


def test_a_nudge_by_the_mcp_person_s_server_reaches_claude_code_at_its_next_request(nboard, tmp_path):
    nboard.agent("reviewer", "description: Reviews.\nmodel: sonnet\n", "Review.")

    def nudge(signal_id: str) -> None:
        async def by_mcp() -> dict[str, Any]:
            async with served(nboard.cli) as person:
                return await person.call("blackboard_nudge", signal_id=signal_id, text=NUDGE, by="alice")

        assert anyio.run(by_mcp)["status"] == "CLAIMED"

    done, calls = run_and_nudge(
        nboard,
        "reviewer",
        lambda url: claude_env(url, tmp_path),
        "mcp__blackboard__blackboard_show",
        nudge,
    )

    first = carrying(calls)[0]
    assert first > 0 and first == len(calls) - 1
    last = calls[first]["messages"][-1]
    assert last["role"] == "user" and NUDGE in json.dumps(last)  # Claude Code gives it with its next request
    assert SAID in json.dumps(last, ensure_ascii=False)
    assert_recorded(nboard, done, "claude-code")


def test_a_nudge_claude_code_takes_as_it_writes_its_answer_is_answered_in_a_turn_more_and_counted(
    nboard, tmp_path
):
    """Claude Code answers a nudge that came with its final answer in a turn more, with a result of its own:
    the run's outcome is the last result, and its usage counts both turns."""
    nboard.agent("reviewer", "description: Reviews.\nmodel: sonnet\n", "Review.")
    signal_id = nboard.post("reviewer")["signal_id"]
    transcript = nboard.workdir / "artifacts" / "transcripts" / f"{signal_id}.jsonl"
    first = threading.Event()

    def answer(body: dict[str, Any]) -> Turn:
        if NUDGE in json.dumps(body.get("messages")):
            return say("DONE AFTER THE NUDGE")
        first.set()  # the answer waits until the nudge was written to Claude Code's input
        wait_until(
            lambda: transcript.exists() and '"type": "nudge"' in transcript.read_text(), 120, "the nudge"
        )
        return say("AN ANSWER BEFORE THE NUDGE")

    with stand_in(answer) as api:
        worker = nboard.cli.start(
            "worker", "--agent", "reviewer", "--once", env=claude_env(api.url, tmp_path)
        )
        assert first.wait(120), "the run's first model call never came"
        nboard.cli("nudge", signal_id, NUDGE, "--by", "alice").expect(0)
        nboard.cli.finish(worker).expect(0)
        calls = [r.body for r in api.model_calls]

    done = nboard.show(signal_id)
    assert carrying(calls) == [1] and len(calls) == 2
    assert_recorded(nboard, done, "claude-code")
    usage = done["usage"]
    assert (usage["turns"], usage["input_tokens"], usage["output_tokens"]) == (2, 200, 40)
    results = [r for r in nboard.transcript(done) if r["type"] == "result"]
    assert [r["result"] for r in results] == ["AN ANSWER BEFORE THE NUDGE", "DONE AFTER THE NUDGE"]
