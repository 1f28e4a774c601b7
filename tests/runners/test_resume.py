"""Resume instead of restart (docs/agents.md, "Resume instead of restart"), through real workers, the real
CLI and the real Claude Code CLI (the pinned version) against the local stand-in of the Messages API, on
SQLite and PostgreSQL: a claude-code run's next attempt, after the first failed or its worker was killed,
continues the same conversation (`claude --resume`), and the stand-in sees the earlier turns in its first
request; where the session's files cannot be reached (another host) it starts afresh, unless the hosts share
BLACKBOARD_CLAUDE_SESSIONS. The API runners continue from the recorded messages. The signal's document (the
CLI's and the Python API's) says `resumed_from` per attempt, and each attempt's cost is counted once."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from blackboard import Blackboard
from blackboard.application.runners import session_of
from tests.runners.claude import claude_env, processes
from tests.runners.standins import Request, call, say, slow, stand_in
from tests.waiting import wait_until

BOARD = "mcp__blackboard__"
RETRIED = "retries: {max_attempts: 2, initial: 0}\n"
RESUMER = "description: Works in steps.\ntools: Read\nmodel: sonnet\nmax_turns: 2\n" + RETRIED
# Claude Code 2.1.332's price of claude-sonnet-5-5 for one of the stand-in's answers (100 tokens in, 20 out)
ONE_ANSWER_USD = 0.0004


def said(request: Request) -> str:
    """Everything a model request's conversation holds, as text."""
    return json.dumps(request.body["messages"])


def session_holds(home: Path, session_id: str, text: str) -> bool:
    """Whether Claude Code's session file of that id, under `home`, holds `text` yet."""
    return any(
        text in f.read_text(errors="replace") for f in home.glob(f".claude/projects/*/{session_id}.jsonl")
    )


def first_of_attempt_2(api) -> Request:
    return next(r for r in api.model_calls if "This is attempt 2" in said(r))


def test_a_failed_attempt_s_claude_code_session_is_continued_by_the_next_attempt(both_board, tmp_path):
    """Attempt 1 writes step 1 to the board, then runs out of turns; attempt 2 resumes its session: its first
    request holds the signal's prompt and step 1's call and result, and it answers at once."""
    board = both_board
    board.agent("resumer", RESUMER, "You work in steps.")
    sig = board.post("resumer", "--write-key", "notes/*", topic="STEPPED-WORK")["signal_id"]
    script = [
        call(BOARD + "blackboard_write", {"key": "notes/step1", "value": "one"}),
        call(BOARD + "blackboard_write", {"key": "notes/step2", "value": "two"}),
        say("DONE after step 2"),
    ]
    with stand_in(script) as api:
        env = claude_env(api.url, tmp_path / "home")
        board.cli("worker", "--agent", "resumer", "--once", env=env)
        assert board.show(sig)["attempt"] == 2  # attempt 1 ran out of turns: retried
        board.cli("worker", "--agent", "resumer", "--once", env=env).expect(0)

    resumed = first_of_attempt_2(api)
    assert "STEPPED-WORK" in said(resumed) and "notes/step1" in said(resumed)  # the earlier turns
    assert said(resumed).count("STEPPED-WORK") == 1  # the signal is not told again
    assert len(api.model_calls) == 3  # attempt 2 redid nothing
    done = board.show(sig)
    assert (done["status"], done["result"]["knowledge_items"]) == ("COMPLETED", ["DONE after step 2"])
    assert done["attempts"][0]["resumed_from"] is None  # attempt 1 started afresh
    assert done["usage"]["resumed_from"] == session_of(sig, 1)
    assert done["usage"]["session_id"] == session_of(sig, 2)
    # each attempt's cost once: Claude Code's total for the resumed session counts attempt 1's again
    assert done["usage"]["cost_usd"] == pytest.approx(3 * ONE_ANSWER_USD)
    transcripts = Path(done["usage"]["transcript_path"]).parent
    assert done["usage"]["transcript_path"].endswith(f"{sig}.attempt-2.jsonl")
    assert (transcripts / f"{sig}.jsonl").is_file()  # attempt 1's, where every run's was before
    assert f"resumed from {session_of(sig, 1)}" in board.cli("show", sig).expect(0).stdout
    with Blackboard(board.cli.db_url, agents_dir=board.agents) as bb:  # the Python API's document
        shown = bb.show(sig)
    assert shown.usage is not None and shown.usage.resumed_from == session_of(sig, 1)
    assert shown.attempts[0].resumed_from is None


def test_a_killed_worker_s_claude_code_session_is_continued_by_the_next_attempt(both_board, tmp_path):
    """The worker dies (SIGKILL) while attempt 1 waits for its second answer: nothing is recorded, its claim
    runs out; attempt 2 finds the session by its id all the same and continues it."""
    board = both_board
    board.agent("resumer", RESUMER, "You work in steps.")
    sig = board.post("resumer", "--write-key", "notes/*", topic="STEPPED-WORK")["signal_id"]
    script = [
        call(BOARD + "blackboard_write", {"key": "notes/step1", "value": "one"}),
        slow(300, say("never heard")),
        say("DONE after the kill"),
    ]
    with stand_in(script) as api:
        env = claude_env(api.url, tmp_path / "home")
        worker = board.cli.start(
            "worker", "--agent", "resumer", "--once", env={**env, "BLACKBOARD_CLAIM_TIMEOUT": "9"}
        )
        wait_until(lambda: len(api.model_calls) == 2, timeout=120, what="attempt 1's second call")
        wait_until(  # Claude Code wrote step 1's result to its session file (a loaded machine may lag)
            lambda: session_holds(tmp_path / "home", session_of(sig, 1), "notes/step1"),
            timeout=60,
            what="attempt 1's session file to hold step 1",
        )
        os.kill(worker.call_pid, signal.SIGKILL)
        worker.communicate(timeout=60)  # its starter says the kill its own way: nothing to read there
        wait_until(  # its keeper takes Claude Code with it
            lambda: not [line for line, _, state in processes().values() if sig in line and state != "Z"],
            timeout=60,
            what="attempt 1's processes to end",
        )
        short = {"BLACKBOARD_CLAIM_TIMEOUT": "3"}
        wait_until(
            lambda: board.cli.ok("expire", env=short) is not None and board.show(sig)["attempt"] == 2,
            timeout=60,
            what="attempt 1's lapsed claim to be retried",
        )
        board.cli("worker", "--agent", "resumer", "--once", env=env).expect(0)

    resumed = first_of_attempt_2(api)
    assert "STEPPED-WORK" in said(resumed) and "notes/step1" in said(resumed)
    done = board.show(sig)
    assert (done["status"], done["result"]["knowledge_items"]) == ("COMPLETED", ["DONE after the kill"])
    assert done["attempts"][0]["expired"] and done["attempts"][0]["resumed_from"] is None
    assert done["usage"]["resumed_from"] == session_of(sig, 1)
    assert done["usage"]["cost_usd"] == pytest.approx(ONE_ANSWER_USD)  # attempt 2's one answer alone


@pytest.mark.parametrize("shared", [False, True], ids=["apart", "shared-sessions"])
def test_a_session_on_another_host_is_continued_only_through_the_shared_folder(both_board, tmp_path, shared):
    """Attempt 2 runs as another host (another HOME, so another Claude Code config): without
    BLACKBOARD_CLAUDE_SESSIONS it cannot reach attempt 1's session and starts afresh, `resumed_from` null;
    with the folder shared by both it continues it."""
    board = both_board
    board.agent("resumer", RESUMER, "You work in steps.")
    sig = board.post("resumer", "--write-key", "notes/*", topic="STEPPED-WORK")["signal_id"]
    script = [
        call(BOARD + "blackboard_write", {"key": "notes/step1", "value": "one"}),
        call(BOARD + "blackboard_write", {"key": "notes/step2", "value": "two"}),
        say("DONE"),
    ]
    sessions = {"BLACKBOARD_CLAUDE_SESSIONS": str(tmp_path / "shared")} if shared else {}
    with stand_in(script) as api:
        host_a = {**claude_env(api.url, tmp_path / "home-a"), **sessions}
        board.cli("worker", "--agent", "resumer", "--once", env=host_a)
        assert board.show(sig)["attempt"] == 2
        host_b = {**claude_env(api.url, tmp_path / "home-b"), **sessions}
        board.cli("worker", "--agent", "resumer", "--once", env=host_b).expect(0)

    last = api.model_calls[-1]
    done = board.show(sig)
    assert done["status"] == "COMPLETED"
    if shared:
        assert "This is attempt 2" in said(last) and "notes/step1" in said(last)
        assert done["usage"]["resumed_from"] == session_of(sig, 1)
        assert (tmp_path / "shared" / f"{session_of(sig, 2)}.jsonl").is_file()  # kept for a third attempt
    else:
        assert "notes/step1" not in said(last) and "STEPPED-WORK" in said(last)  # afresh: the signal again
        assert done["usage"]["resumed_from"] is None


@pytest.mark.parametrize("runner", ["anthropic", "openai"])
def test_an_api_runner_s_next_attempt_continues_from_the_recorded_messages(both_board, runner):
    """Attempt 1 writes step 1, then runs out of turns; attempt 2's first request carries attempt 1's
    messages (the prompt, the call, its result) and the note to go on, and costs its own call alone."""
    board = both_board
    frontmatter = (
        f"runner: {runner}\nmodel: {'sonnet' if runner == 'anthropic' else 'gpt-5.5'}\nmax_turns: 2\n"
    )
    board.agent("stepper", frontmatter + RETRIED, "You work in steps.")
    sig = board.post("stepper", "--write-key", "notes/*", topic="STEPPED-WORK")["signal_id"]
    script = [
        call("blackboard_write", {"key": "notes/step1", "value": "one"}),
        call("blackboard_write", {"key": "notes/step2", "value": "two"}),
        say("DONE"),
    ]
    with stand_in(script) as api:
        env = (
            {"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "sk-ant-test"}
            if runner == "anthropic"
            else {"OPENAI_BASE_URL": f"{api.url}/v1", "OPENAI_API_KEY": "sk-test"}
        )
        board.cli("worker", "--agent", "stepper", "--once", env=env)
        first = board.show(sig)
        assert first["attempt"] == 2 and "max_turns reached" in first["attempts"][0]["error"]
        board.cli("worker", "--agent", "stepper", "--once", env=env).expect(0)

    _, two, three = api.model_calls
    # attempt 1's conversation as its last request sent it (the prompt, step 1's call and its result) ...
    earlier = [m for m in two.body["messages"] if m.get("role") != "system"]
    continued = [m for m in three.body["messages"] if m.get("role") != "system"]
    assert "notes/step1" in json.dumps(earlier)
    # ... is where attempt 2's first request starts, told to go on
    assert continued[:-1] == earlier and "This is attempt 2" in json.dumps(continued[-1])
    done = board.show(sig)
    assert (done["status"], done["attempt"]) == ("COMPLETED", 2)
    assert done["usage"]["resumed_from"] == session_of(sig, 1)
    assert done["usage"]["turns"] == 3  # 2 of attempt 1, 1 of attempt 2: none counted twice
    with Blackboard(board.cli.db_url, agents_dir=board.agents) as bb:
        assert bb.show(sig).usage.resumed_from == session_of(sig, 1)
