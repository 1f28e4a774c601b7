"""How a claude-code run fails, through the real worker and the real Claude Code CLI against the stand-in:
an API error, a run past its timeout, the budget spent, max_turns reached, the worker stopped mid-run, and
the signal ended by another hand. A stopped run leaves no process behind (its process group and the board's
server are gone), and nothing it would have sent afterwards is recorded."""

from __future__ import annotations

import signal as signals
import time
from pathlib import Path

from tests.runners.claude import claude_env, environ, live_in_group, processes
from tests.runners.standins import call, fail, say, slow, stand_in

REVIEWER = "description: Reviews.\ntools: Read\nmodel: sonnet\n"
LATE_WRITE = call("mcp__blackboard__blackboard_write", {"key": "notes/late", "value": "sent after the stop"})


def until(condition, seconds: float = 60.0, every: float = 0.1):
    deadline = time.monotonic() + seconds
    while not (found := condition()):
        assert time.monotonic() < deadline, "the condition did not hold in time"
        time.sleep(every)
    return found


def the_run(signal_id: str, home: Path) -> tuple[int, int] | None:
    """(Claude Code's pid, which is its process group; the board server's pid) once both are up. Its
    Claude Code is the one whose HOME is this test's: other tests run Claude Code at the same time."""
    table = processes()
    claude = [
        pid
        for pid, (line, group, _) in table.items()
        if "--agents=" in line and " -p " in line and group == pid and home_of(pid) == str(home)
    ]
    server = [
        pid for pid, (line, _, _) in table.items() if f"mcp --agent reviewer --signal {signal_id}" in line
    ]
    return (claude[0], server[0]) if claude and server else None


def home_of(pid: int) -> str | None:
    try:
        return environ(pid).get("HOME")
    except OSError:  # gone meanwhile
        return None


def gone(pid: int) -> bool:
    state = processes().get(pid)
    return state is None or state[2] == "Z"


def test_an_api_error_fails_the_signal_with_claude_code_s_message_and_the_usage(board, tmp_path):
    board.agent("reviewer", REVIEWER, "Review.")
    signal = board.post("reviewer")
    with stand_in([fail(500, "api_error", "the stand-in broke")]) as api:
        board.cli("worker", "--agent", "reviewer", "--once", env=claude_env(api.url, tmp_path)).expect(0)

    done = board.show(signal["signal_id"])
    assert done["status"] == "FAILED"
    assert done["result"]["error"].startswith("Claude Code reported an error (API status 500): ")
    assert "the stand-in broke" in done["result"]["error"]
    assert done["usage"]["runner"] == "claude-code" and done["usage"]["transcript_path"]


def test_the_smaller_budget_is_claude_code_s_and_spending_it_fails_the_signal(board, tmp_path):
    board.agent("reviewer", REVIEWER + "max_budget_usd: 1\n", "Review.")
    signal = board.post("reviewer", "--budget-usd", "0.01")
    script = [call("Read", {"file_path": "x"}, input_tokens=200_000, output_tokens=1000), say("never")]
    with stand_in(script) as api:
        board.cli("worker", "--agent", "reviewer", "--once", env=claude_env(api.url, tmp_path)).expect(0)

    done = board.show(signal["signal_id"])
    assert done["status"] == "FAILED" and len(api.model_calls) == 1
    assert (
        done["result"]["error"].startswith("budget spent: $")
        and "of $0.01 before the final answer" in done["result"]["error"]
    )
    assert done["usage"]["cost_usd"] > 0.01


def test_max_turns_reached_fails_the_signal(board, tmp_path):
    board.agent("reviewer", REVIEWER + "max_turns: 2\n", "Review.")
    signal = board.post("reviewer")
    with stand_in([call("Read", {"file_path": "x"})] * 5) as api:
        board.cli("worker", "--agent", "reviewer", "--once", env=claude_env(api.url, tmp_path)).expect(0)

    done = board.show(signal["signal_id"])
    assert done["result"]["error"] == "max_turns reached: 2 turn(s) without a final answer"


def test_a_run_past_its_timeout_is_killed_with_its_whole_tree_and_records_nothing_afterwards(board, tmp_path):
    board.agent("reviewer", REVIEWER + "timeout: 8\n", "Review.")
    signal = board.post("reviewer", "--write-key", "notes/*")
    with stand_in([slow(15, LATE_WRITE), say("never")]) as api:
        worker = board.cli.start("worker", "--agent", "reviewer", env=claude_env(api.url, tmp_path))
        claude, server = until(lambda: the_run(signal["signal_id"], tmp_path))
        until(lambda: board.show(signal["signal_id"])["status"] == "FAILED")
        assert not live_in_group(claude) and gone(server)  # no process left behind
        time.sleep(10)  # past the slow answer: had anything survived, its write would land now
        worker.send_signal(signals.SIGTERM)
        board.cli.finish(worker).expect(0)

    done = board.show(signal["signal_id"])
    assert done["result"]["error"] == "timed out after 8s (the agent file's timeout)"
    assert "notes/late" not in board.entries()
    assert (done["usage"]["runner"], done["usage"]["turns"]) == (
        "claude-code",
        0,
    )  # stopped before any answer


def test_a_worker_stopped_mid_run_ends_the_run_after_its_grace_and_leaves_nothing_behind(board, tmp_path):
    board.agent("reviewer", REVIEWER, "Review.")
    signal = board.post("reviewer", "--write-key", "notes/*")
    with stand_in([slow(20, LATE_WRITE), say("never")]) as api:
        worker = board.cli.start(
            "worker", "--agent", "reviewer", "--grace", "1", env=claude_env(api.url, tmp_path)
        )
        claude, server = until(lambda: the_run(signal["signal_id"], tmp_path))
        until(lambda: api.model_calls)  # Claude Code is waiting for its answer
        worker.send_signal(signals.SIGTERM)
        stopped = board.cli.finish(worker, timeout=30).expect(0)
        assert not live_in_group(claude) and gone(server)
        time.sleep(20)  # past the slow answer

    done = board.show(signal["signal_id"])
    assert done["result"]["error"] == "stopped: the worker is shutting down and its grace period is over"
    assert "notes/late" not in board.entries()
    assert "grace period over" in stopped.stderr


def test_a_signal_ended_by_another_hand_stops_its_run_at_once(board, tmp_path):
    board.agent("reviewer", REVIEWER, "Review.")
    signal = board.post("reviewer", "--write-key", "notes/*")
    with stand_in([slow(20, LATE_WRITE), say("never")]) as api:
        worker = board.cli.start("worker", "--agent", "reviewer", env=claude_env(api.url, tmp_path))
        claude, server = until(lambda: the_run(signal["signal_id"], tmp_path))
        token = environ(server)["BLACKBOARD_CLAIM_TOKEN"]
        board.cli.ok(
            "fail", signal["signal_id"], "--agent", "reviewer", "--token", token, "--error", "called off"
        )
        until(lambda: not live_in_group(claude), 10)
        # Claude Code's board server ends with it (on a loaded machine, just after)
        until(lambda: gone(server), 10)
        worker.send_signal(signals.SIGTERM)
        board.cli.finish(worker).expect(0)

    done = board.show(signal["signal_id"])
    assert (done["status"], done["result"]["error"]) == ("FAILED", "called off")
    assert "notes/late" not in board.entries()
