"""`blackboard solve` through the real CLI: the packaged controller run by the `anthropic` runner against a local
stand-in for the Messages API (scripted decisions), a specialist that is a plain command handler, its worker a
real `blackboard worker` started and stopped by the run. On SQLite and PostgreSQL. No test calls a real model."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from typing import Any

import pytest

from tests.runners.conftest import Board, RunnerCli
from tests.runners.standins import say, stand_in

FINDER = """capabilities:
  - type: RESEARCH
    score: 0.95
description: Finds facts about a problem.
command: "cat > received.json; echo '{\\"knowledge_items\\": [\\"FOUND: the number is 42\\"]}'"
"""
WRITER = """capabilities:
  - type: SYNTHESIS
    score: 0.9
description: Writes things up.
command: "echo written"
"""
PROBLEM = "What is the number? " + "Context that makes this problem longer than a topic may be. " * 8


def decision(**fields: Any) -> str:
    return json.dumps(fields)


POST_FINDER = decision(
    action="post", agent="finder", capability="RESEARCH", topic="find the number", reason="finder finds facts"
)
SOLVED = decision(action="solved", answer="The number is 42.", reason="finder's entry says so")


@pytest.fixture(params=["sqlite", "postgresql"])
def solve_board(request, tmp_path) -> Iterator[Board]:
    agents, workdir = tmp_path / "agents", tmp_path / "work"
    agents.mkdir()
    workdir.mkdir()
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'board.db'}"
    else:
        request.getfixturevalue("pg_engine")  # emptied for this test
        url = request.getfixturevalue("pg_database_url")
    cli = RunnerCli(url, agents, workdir)
    board = Board(cli, agents, workdir)
    board.agent("finder", FINDER, "You find.")
    board.agent("writer", WRITER, "You write.")
    yield board
    cli.close()


def api_env(url: str) -> dict[str, str]:
    return {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "sk-ant-test"}


def solve(board: Board, url: str, *args: str, problem: str = PROBLEM):
    return board.cli(
        "--json", "solve", problem, "--blackboard", "ps-1", "--runner", "anthropic", *args, env=api_env(url)
    )


def started_pids(stderr: str) -> list[int]:
    found = re.search(r"\(pids ([0-9, ]+)\)", stderr)
    assert found, stderr
    return [int(p) for p in found[1].split(",")]


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_the_controller_posts_for_the_specialist_it_picks_then_its_answer_is_an_entry(solve_board):
    board = solve_board
    with stand_in([say(POST_FINDER), say(SOLVED)]) as api:
        done = solve(board, api.url, "--start-workers", "--max-iterations", "4").expect(0)
    run = done.json()
    assert (run["state"], run["iterations"], run["answer"]) == ("solved", 2, "The number is 42.")
    assert run["step_timeout"] == 300 and run["resumes"] == 0  # a step waits 300 s for a worker by default
    assert run["specialists"] == ["finder", "writer"] and run["without_workers"] == ["finder", "writer"]
    assert run["started_workers"] == ["finder", "writer"]
    [step] = run["steps"]
    assert (step["agent"], step["capability"], step["status"]) == ("finder", "RESEARCH", "COMPLETED")

    signal = board.show(step["signal_id"])
    assert signal["target_capabilities"] == ["RESEARCH"] and signal["claimed_by"] == "finder"
    assert signal["signal_type"] == "RESEARCH" and signal["posted_by"] == "controller"
    assert signal["payload"]["topic"] == "find the number"
    assert PROBLEM in signal["payload"]["prompt"]  # longer than a topic: it goes into the prompt
    assert signal["payload"]["context"]["solve_run"] == run["run_id"]

    entries = board.entries()
    answer = entries[f"solve/{run['run_id']}/answer"]
    assert (answer["value"], answer["author"], answer["entry_type"]) == (
        "The number is 42.",
        "controller",
        "final",
    )
    assert entries[f"solve/{run['run_id']}/problem"]["value"] == PROBLEM

    first, second = (c.body for c in api.model_calls)
    asked = first["messages"][0]["content"]
    assert PROBLEM.strip() in asked and "finder: Finds facts about a problem." in asked
    assert "RESEARCH (0.95)" in asked and "a worker is live" in asked
    assert "You are the controller of a blackboard" in first["system"]  # the packaged controller's body
    assert "tools" not in first  # the controller answers; it has no board tools
    assert "FOUND: the number is 42" in second["messages"][0]["content"]  # the step's result, read next

    events = board.cli.ok("events", "--blackboard", "ps-1")
    run_events = [e for e in events if e["stream_id"] == f"ps-1\x1e{run['run_id']}"]
    assert [e["event_type"] for e in run_events] == [
        "SolveStarted",
        "SolveStepPosted",
        "SolveStepEnded",
        "SolveSolved",
    ]
    assert run_events[0]["data"]["actor"] == "solve" and run_events[1]["data"]["actor"] == "controller"
    assert run_events[1]["data"]["reason"] == "finder finds facts"
    assert run_events[1]["data"]["usage"]["runner"] == "anthropic"

    assert all(gone(pid) for pid in started_pids(done.stderr))  # the workers it started are stopped
    assert "stopped the workers" in done.stderr
    assert board.cli.ok("status", "--blackboard", "ps-1")[0].get("workers", []) == []


def test_reaching_max_iterations_without_an_answer_is_exit_5_and_a_recorded_stop(solve_board):
    board = solve_board
    with stand_in([say(POST_FINDER), say(POST_FINDER)]) as api:
        done = solve(board, api.url, "--start-workers", "--max-iterations", "2", "--no-synthesis").expect(5)
    assert len(api.model_calls) == 2  # no best answer asked for (test_solve_board.py: when it is)
    assert "--max-iterations 2" in done.stderr and "without an answer" in done.stderr
    run = done.json()  # the run as it ended is still printed
    assert (run["state"], run["iterations"], run["answer"]) == ("stopped", 2, None)
    assert [s["status"] for s in run["steps"]] == ["COMPLETED", "COMPLETED"]
    assert f"solve/{run['run_id']}/answer" not in board.entries()
    shown = board.cli.ok("solve", "--status", run["run_id"], "--blackboard", "ps-1")
    assert shown == run
    assert all(gone(pid) for pid in started_pids(done.stderr))


def test_a_bad_controller_answer_is_a_failed_decision_and_the_controller_is_asked_again(solve_board):
    board = solve_board
    nobody = decision(action="post", agent="nobody", topic="t", reason="r")
    wrong_capability = decision(action="post", agent="finder", capability="SYNTHESIS", topic="t", reason="r")
    script = [say("I think finder should go."), say(nobody), say(wrong_capability), say(SOLVED)]
    with stand_in(script) as api:
        done = solve(board, api.url, "--max-iterations", "4").expect(0)
    run = done.json()
    assert run["state"] == "solved" and run["iterations"] == 4
    errors = [s["error"] for s in run["steps"]]
    assert "must be one JSON object" in errors[0]
    assert "agent must be one of the specialists (finder, writer), got 'nobody'" in errors[1]
    assert "capability must be one of finder's (RESEARCH), got 'SYNTHESIS'" in errors[2]
    assert all(s["signal_id"] is None for s in run["steps"])
    again = api.model_calls[1].body["messages"][0]["content"]
    assert "Your previous answer was refused: must be one JSON object" in again
    assert "no live worker for finder, writer" in done.stderr  # said, since it starts none
    events = board.cli.ok("events", "--blackboard", "ps-1")
    failed = [e for e in events if e["event_type"] == "SolveDecisionFailed"]
    assert [e["data"]["output"] for e in failed][:2] == ["I think finder should go.", nobody]
    assert not [e for e in events if e["event_type"] == "AgentSignalPosted"]


def test_a_rebuild_an_export_and_an_import_give_the_same_run_and_the_run_can_be_read_as_it_was(
    solve_board, tmp_path
):
    board = solve_board
    with stand_in([say(POST_FINDER), say(SOLVED)]) as api:
        run = solve(board, api.url, "--start-workers").expect(0).json()
    status = ("solve", "--status", run["run_id"], "--blackboard", "ps-1")
    before = (board.cli.ok(*status), board.entries(), board.cli.ok("signals", "--blackboard", "ps-1"))

    board.cli.ok("projection", "rebuild")
    assert (board.cli.ok(*status), board.entries(), board.cli.ok("signals", "--blackboard", "ps-1")) == before

    exported = tmp_path / "ps-1.json"
    exported.write_text(board.cli("export", "ps-1").expect(0).stdout, encoding="utf-8")
    elsewhere = RunnerCli(f"sqlite:///{tmp_path / 'other.db'}", board.agents, board.workdir)
    elsewhere("import", str(exported)).expect(0)
    assert elsewhere.ok(*status) == before[0]
    assert elsewhere.ok("solve", "--status", "--blackboard", "ps-1") == [before[0]]

    events = board.cli.ok("events", "--blackboard", "ps-1")
    posted = next(e["position"] for e in events if e["event_type"] == "SolveStepPosted")
    then = board.cli.ok(*status, "--at", str(posted))  # time travel: right after the step was posted
    assert (then["state"], then["steps"][0]["status"], then["answer"]) == ("running", None, None)


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (("",), "PROBLEM"),
        (("   \n",), "PROBLEM"),
        (("a problem", "--max-iterations", "0"), "--max-iterations"),
        (("a problem", "--max-iterations", "-3"), "--max-iterations"),
        (("a problem", "--controller", "nobody"), "--controller"),
        (("a problem", "--step-timeout", "0"), "--step-timeout"),
    ],
)
def test_bad_input_is_exit_2_naming_the_field_and_writes_nothing(board, args, field):
    board.agent("finder", FINDER, "You find.")
    done = board.cli("solve", *args, "--blackboard", "ps-1", "--runner", "anthropic").expect(2)
    assert done.stderr.startswith(f"blackboard: {field}"), done.stderr
    assert board.cli.ok("events") == []


def test_the_python_api_solves_as_the_cli_does_and_reads_a_run_back(tmp_path, monkeypatch):
    from blackboard import Blackboard, InvalidInput, TimedOut
    from blackboard.infrastructure.runners import api_loop

    agents = tmp_path / "agents"
    agents.mkdir()
    (agents / "finder.md").write_text(f"---\nname: finder\n{FINDER}---\nYou find.\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(api_loop, "_CLIENTS", {})  # a client made earlier in this process knows another URL
    with stand_in([say(POST_FINDER), say(SOLVED), say(POST_FINDER)]) as api:
        for name, value in api_env(api.url).items():
            monkeypatch.setenv(name, value)
        with Blackboard(f"sqlite:///{tmp_path / 'board.db'}", agents_dir=agents) as bb:
            with pytest.raises(InvalidInput, match="max_iterations"):
                bb.solve("a problem", blackboard_id="ps-1", max_iterations=0, runner="anthropic")
            run = bb.solve(PROBLEM, blackboard_id="ps-1", runner="anthropic", start_workers=True)
            assert (run.state, run.answer, run.steps[0].status) == (
                "solved",
                "The number is 42.",
                "COMPLETED",
            )
            assert bb.solve_status(run.run_id, blackboard_id="ps-1") == run
            with pytest.raises(TimedOut, match="--max-iterations 1"):
                bb.solve(
                    "again", blackboard_id="ps-1", runner="anthropic", start_workers=True, max_iterations=1
                )


def test_a_step_no_live_worker_fits_for_step_timeout_stops_the_run_with_exit_5_and_cancels_it(board):
    board.agent("finder", FINDER, "You find.")
    with stand_in([say(POST_FINDER)]) as api:
        done = board.cli(
            "--json",
            "solve",
            "a problem",
            "--blackboard",
            "ps-1",
            "--runner",
            "anthropic",
            "--step-timeout",
            "1",
            env=api_env(api.url),
        ).expect(5)
    run = done.json()
    assert run["state"] == "stopped" and run["steps"][0]["status"] == "CANCELLED"  # it leaves no work behind
    assert (
        "had no live worker that fits it for 1s" in run["reason"]
        and "no live worker for finder" in done.stderr
    )


def test_the_packaged_controller_runs_in_the_real_claude_code_with_no_board_server_and_answers_in_json(
    board, tmp_path
):
    from tests.runners.claude import claude_env
    from tests.runners.test_claude_code_runner import text_of

    board.agent("finder", FINDER, "You find.")
    with stand_in([say(POST_FINDER), say(f"```json\n{SOLVED}\n```")]) as api:
        done = board.cli(
            "--json",
            "solve",
            PROBLEM,
            "--blackboard",
            "ps-1",
            "--start-workers",
            env=claude_env(api.url, tmp_path),
        ).expect(0)
    run = done.json()
    assert (run["state"], run["runner"], run["answer"]) == ("solved", "claude-code", "The number is 42.")
    first = api.model_calls[0].body
    assert "You are the controller of a blackboard" in text_of(first["system"])
    assert {t["name"] for t in first["tools"]} == {"Read", "Grep", "Glob"}  # the file's, and no board server
    assert PROBLEM.strip() in text_of(first["messages"][0]["content"])
    assert first["model"] == "claude-sonnet-5-5"
    events = board.cli.ok("events", "--blackboard", "ps-1")
    posted = next(e for e in events if e["event_type"] == "SolveStepPosted")
    assert posted["data"]["usage"]["runner"] == "claude-code" and posted["data"]["usage"]["session_id"]
    transcript = board.workdir / "artifacts" / "transcripts" / f"{run['run_id']}-1.jsonl"
    assert posted["data"]["usage"]["transcript_path"] == str(transcript) and transcript.stat().st_size > 0
    assert all(gone(pid) for pid in started_pids(done.stderr))


def test_ctrl_c_records_the_stop_and_leaves_no_started_worker_behind(board):
    import signal
    import time

    slow_finder = FINDER.replace(
        "cat > received.json;", "cat > received.json; sleep 59.73;"
    )  # a duration nothing else on the machine sleeps
    board.agent("finder", slow_finder, "You find.")
    with stand_in([say(POST_FINDER)]) as api:
        proc = board.cli.start(
            "solve",
            "a problem",
            "--blackboard",
            "ps-1",
            "--runner",
            "anthropic",
            "--start-workers",
            env=api_env(api.url),
        )
        deadline = time.monotonic() + 60
        while not any(e["event_type"] == "AgentSignalClaimed" for e in board.cli.ok("events")):
            assert time.monotonic() < deadline and proc.poll() is None, "the step was never claimed"
            time.sleep(0.2)
        proc.send_signal(signal.SIGINT)
        done = board.cli.finish(proc)
    assert done.returncode == 130, done
    [stopped] = [e for e in board.cli.ok("events") if e["event_type"] == "SolveStopped"]
    assert stopped["data"]["reason"] == "interrupted"
    assert all(gone(pid) for pid in started_pids(done.stderr))  # the worker, and the handler it ran
    assert not [p for p in _commands() if "sleep 59.73" in p]


def _commands() -> list[str]:
    from tests.runners.claude import processes

    return [cmdline for cmdline, _, state in processes().values() if state != "Z"]


def test_an_unknown_run_is_exit_4_and_a_board_without_runs_lists_none(board):
    board.agent("finder", FINDER, "You find.")
    board.post("finder")
    refused = board.cli("solve", "--status", "solve-00000000", "--blackboard", "ps-1").expect(4)
    assert "no solve run solve-00000000 on blackboard ps-1" in refused.stderr
    assert board.cli.ok("solve", "--status", "--blackboard", "ps-1") == []
    assert (
        board.cli("solve", "--status", "--blackboard", "ps-1").expect(0).stdout.strip()
        == "no solve run on ps-1"
    )
