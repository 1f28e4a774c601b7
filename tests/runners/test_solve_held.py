"""`blackboard solve` runs that stay held: a controller answer of any size, depth or content is a refused decision;
a step no worker fits ends the run, saying why; a solve killed mid-step is `orphaned` and `solve --resume` finishes
it; Ctrl-C and SIGTERM cancel the open step (or, with --keep-step, leave it for a resume); a stalled solve whose
run was taken up elsewhere leaves it alone. Real `blackboard solve` and `blackboard worker` processes, real
SIGKILL and SIGSTOP; the controllers are commands (no model), so no test calls a model."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import BLACKBOARD
from tests.runners.conftest import Board, RunnerCli
from tests.waiting import wait_until

FAST_BEAT = {"BLACKBOARD_BEAT_INTERVAL": "0.3"}  # a killed solve looks orphaned within a second
PROBLEM = "What is the number?"


def finder(gate: Path | None = None, score: float = 0.95) -> str:
    """A command specialist: it waits for `gate` (a file) to exist, if given (two minutes at most: a test
    that fails first leaves no handler behind), then finds the number."""
    wait = f"for i in $(seq 2400); do [ -f {gate} ] && break; sleep 0.05; done; " if gate else ""
    return (
        f"capabilities:\n  - type: RESEARCH\n    score: {score}\ndescription: Finds facts.\n"
        f'command: "cat > /dev/null; {wait}echo \'{{\\"knowledge_items\\": [\\"FOUND 42\\"]}}\'"\n'
    )


@pytest.fixture
def gate(tmp_path) -> Iterator[Path]:
    """The file a gated specialist waits for; there at the end of the test, whatever happened."""
    path = tmp_path / "go"
    yield path
    path.touch()


# A controller with rules: ask finder once, then answer with its first finding (docs/agents.md's example).
FIRST_FINDING = """import json, re, sys
prompt = sys.stdin.read()
found = re.findall(r"^   result: (.*)$", prompt, re.MULTILINE)
if found:
    print(json.dumps({"action": "solved", "answer": found[0], "reason": "finder found it"}))
else:
    print(json.dumps({"action": "post", "agent": "finder", "capability": "RESEARCH", "topic": "find the number",
                      "reason": "nothing is known yet"}))
"""


def controller(board: Board, name: str, script: str) -> Path:
    folder = board.workdir / "controllers"
    folder.mkdir(exist_ok=True)
    (folder / f"{name}.py").write_text(script, encoding="utf-8")
    path = folder / f"{name}.md"
    path.write_text(
        f"---\nname: {name}\ndescription: a controller with rules\ncommand: {sys.executable} {name}.py\n---\n",
        encoding="utf-8",
    )
    return path


@pytest.fixture(params=["sqlite", "postgresql"])
def any_board(request, tmp_path) -> Iterator[Board]:
    agents, workdir = tmp_path / "agents", tmp_path / "work"
    agents.mkdir()
    workdir.mkdir()
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'board.db'}"
    else:
        request.getfixturevalue("pg_engine")  # emptied for this test
        url = request.getfixturevalue("pg_database_url")
    cli = RunnerCli(url, agents, workdir)
    yield Board(cli, agents, workdir)
    cli.close()


def events(board: Board) -> list[dict[str, Any]]:
    """The board's events; none while the board holds nothing yet (`events` says so with exit 4)."""
    done = board.cli("--json", "events", "--blackboard", "ps-1")
    return [] if done.returncode == 4 else done.expect(0).json()


def solve_events(board: Board, run_id: str) -> list[dict[str, Any]]:
    return [e for e in events(board) if e["stream_id"] == f"ps-1\x1e{run_id}"]


def status(board: Board, run_id: str) -> dict[str, Any]:
    return board.cli.ok("solve", "--status", run_id, "--blackboard", "ps-1")


def runs_of(board: Board) -> list[dict[str, Any]]:
    done = board.cli("--json", "solve", "--status", "--blackboard", "ps-1")
    return [] if done.returncode == 4 else done.expect(0).json()


def the_run(board: Board) -> dict[str, Any]:
    return wait_until(lambda: (runs := runs_of(board)) and runs[0], what="the run's start")


def claimed(board: Board) -> bool:
    return any(e["event_type"] == "AgentSignalClaimed" for e in events(board))


def start_solve(board: Board, ctl: Path, *args: str) -> subprocess.Popen[str]:
    """`blackboard solve` in the background as a process of its own (not a fork-server call: the test kills it
    with SIGKILL and stops it with SIGSTOP, which a call's shim cannot pass on)."""
    return start(board, "solve", PROBLEM, "--blackboard", "ps-1", "--controller", str(ctl), *args)


def start(board: Board, *args: str) -> subprocess.Popen[str]:
    proc = subprocess.Popen(
        [BLACKBOARD, *args],
        env=board.cli.environment(FAST_BEAT),
        cwd=board.cli.cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    board.cli._started.append(proc)  # stopped by the fixture if the test fails first
    return proc


# -- answers of any size, depth or content ------------------------------------------------------------------
HOSTILE: list[tuple[bytes, str]] = [  # what the controller prints, and what its refusal says
    (b"x" * 2_000_000, "must be at most 1048576 characters, got 2000000"),
    (b"[" * 5000 + b"]" * 5000, "nested too deep to read"),
    (b'{"a":' * 5000 + b"1" + b"}" * 5000, "nested too deep to read"),
    (b'{"action": "solved", "answer": "4\\u00002", "reason": "r"}', "/answer holds U+0000 (NUL)"),
    (b"\x00\x00 finder should go \x00", "must be one JSON object, got '\\x00\\x00 finder"),
    (b'{"action": "solved", "answer": "\xff\xfe", "reason": "r"}', "not UTF-8 text (byte 0xff at offset 32)"),
    (b'{"action": "solved", "answer": "\\ud800", "reason": "r"}', "/answer holds a lone surrogate"),
    (b"42", "must be one JSON object, got '42'"),
    (b'{"action": "solved"} ' * 40_000, "must be one JSON object"),
    (b"```{" * 200_000, "must be one JSON object"),  # 800 KB of fences: read in linear time
    (
        json.dumps(
            {"action": "solved", "answer": "\u00e9" * 700_000, "reason": "r"}, ensure_ascii=False
        ).encode(),
        "answer: cannot be the entry solve/",  # 1.4 MB of UTF-8: over an entry's 1 MiB
    ),
]
HOSTILE_CONTROLLER = """import json, re, sys
prompt = sys.stdin.read()
iteration = int(re.search(r"iteration (\\d+) of at most", prompt)[1])
answers = json.load(open("hostile.json"))
if iteration <= len(answers):
    sys.stdout.buffer.write(bytes.fromhex(answers[iteration - 1]))
else:
    print(json.dumps({"action": "solved", "answer": "The number is 42.", "reason": "all refusals seen"}))
"""


def test_controller_answers_of_any_size_depth_or_content_are_refused_decisions_and_the_run_goes_on(any_board):
    board = any_board
    board.agent("finder", finder(), "You find.")
    ctl = controller(board, "hostile", HOSTILE_CONTROLLER)
    (ctl.parent / "hostile.json").write_text(json.dumps([a.hex() for a, _ in HOSTILE]), encoding="utf-8")
    began = time.monotonic()

    done = board.cli(
        "--json",
        "solve",
        PROBLEM,
        "--blackboard",
        "ps-1",
        "--controller",
        str(ctl),
        "--max-iterations",
        str(len(HOSTILE) + 1),
        timeout=240,
    ).expect(0)

    assert time.monotonic() - began < 180  # generous: the 800 KB of fences once took minutes
    run = done.json()
    assert (run["state"], run["answer"], run["iterations"]) == (
        "solved",
        "The number is 42.",
        len(HOSTILE) + 1,
    )
    for step, (_, said) in zip(run["steps"], HOSTILE, strict=True):
        assert step["signal_id"] is None and said in step["error"], (said, step["error"][:300])
    for noise in ("pydantic", "validation error", "Traceback", "RecursionError", "codec can't"):
        assert noise not in done.stderr
    failed = [
        e["data"] for e in solve_events(board, run["run_id"]) if e["event_type"] == "SolveDecisionFailed"
    ]
    assert len(failed) == len(HOSTILE)
    for data in failed:  # bounded excerpts, and text every store holds
        assert len(data["output"]) <= 4000 and len(data["error"]) <= 2000
        assert "\x00" not in data["output"] + data["error"]
    assert failed[4]["output"] == "\\x00\\x00 finder should go \\x00"  # said back escaped
    assert f"solve/{run['run_id']}/answer" in board.entries()


# -- steps that cannot be taken -----------------------------------------------------------------------------
def test_a_step_no_live_worker_fits_ends_the_run_within_the_step_timeout_naming_it_and_cancels_it(board):
    board.agent("finder", finder(), "You find.")
    ctl = controller(board, "first", FIRST_FINDING)
    began = time.monotonic()

    done = board.cli(
        "--json", "solve", PROBLEM, "--blackboard", "ps-1", "--controller", str(ctl), "--step-timeout", "2"
    ).expect(5)

    assert time.monotonic() - began < 30  # 2 s with no worker, then the stop: never the post timeout
    run = done.json()
    [step] = run["steps"]
    assert (run["state"], step["status"]) == ("stopped", "CANCELLED")
    said = (
        f"step 1 of solve run {run['run_id']} ({step['signal_id']}, for finder's RESEARCH) had no live worker"
    )
    assert said in run["reason"] and "that fits it for 2s" in run["reason"]
    assert "blackboard worker --agent finder --board ps-1" in run["reason"] and said in done.stderr
    assert board.show(step["signal_id"])["status"] == "CANCELLED"  # a stopped run leaves no work behind
    assert run["step_timeout"] == 2


def test_a_step_a_live_worker_runs_is_not_cut_short_by_the_step_timeout(board, gate):
    board.agent("finder", finder(gate), "You find.")
    ctl = controller(board, "first", FIRST_FINDING)
    worker = board.cli.start("worker", "--agent", "finder", "--board", "ps-1")
    proc = start_solve(board, ctl, "--step-timeout", "1")
    wait_until(lambda: claimed(board), what="the step's claim")
    time.sleep(3)  # three step timeouts while the live worker runs it: no timer runs
    assert proc.poll() is None, board.cli.finish(proc)
    gate.touch()

    done = board.cli.finish(proc)

    assert done.returncode == 0, done
    assert the_run(board)["state"] == "solved"
    worker.terminate()


def test_a_step_no_agent_can_take_ends_at_once_unclaimed_and_the_controller_decides_again(board):
    board.agent("finder", finder(score=0.5), "You find.")  # below the 0.8 threshold: no agent can claim
    ctl = controller(board, "first", FIRST_FINDING)

    done = board.cli(
        "--json", "solve", PROBLEM, "--blackboard", "ps-1", "--controller", str(ctl), "--max-iterations", "2"
    ).expect(5)

    run = done.json()
    assert [s["status"] for s in run["steps"]] == ["UNCLAIMED", "UNCLAIMED"]
    assert "--max-iterations 2" in run["reason"]


# -- a killed solve, orphaned, then resumed ------------------------------------------------------------------
def test_a_solve_killed_mid_step_is_orphaned_and_resume_finishes_it_from_its_events(any_board, gate):
    board = any_board
    board.agent("finder", finder(gate), "You find.")
    ctl = controller(board, "first", FIRST_FINDING)
    worker = board.cli.start("worker", "--agent", "finder", "--board", "ps-1")
    proc = start_solve(board, ctl, "--max-iterations", "3", "--step-timeout", "120")
    wait_until(lambda: claimed(board), what="the step's claim")
    run_id = the_run(board)["run_id"]
    live = board.cli("solve", "--resume", run_id, "--blackboard", "ps-1").expect(3)
    assert f"solve run {run_id} on ps-1 is driven by its process on" in live.stderr

    os.kill(proc.pid, signal.SIGKILL)
    board.cli.finish(proc)
    orphaned = wait_until(
        lambda: (r := status(board, run_id))["state"] == "orphaned" and r, what="the run to show as orphaned"
    )
    assert f"solve --resume {run_id} --blackboard ps-1" in orphaned["reason"]
    assert orphaned["steps"][0]["status"] is None  # its step still runs on the worker
    listed = board.cli("solve", "--status", "--blackboard", "ps-1").expect(0).stdout
    assert f"{run_id}  orphaned 1/3" in listed
    refused = board.cli("solve", "--resume", run_id, "--blackboard", "ps-1", "--controller", "x").expect(2)
    assert refused.stderr.startswith("blackboard: --controller: goes with a new run")
    gate.touch()

    done = board.cli(
        "--json", "solve", "--resume", run_id, "--blackboard", "ps-1", "--posted-by", "ops", env=FAST_BEAT
    ).expect(0)

    run = done.json()
    assert (run["state"], run["answer"], run["iterations"], run["resumes"]) == ("solved", "FOUND 42", 2, 1)
    assert run["max_iterations"] == 3 and run["step_timeout"] == 120  # the options it started with
    kinds = [(e["event_type"], e["data"]["actor"]) for e in solve_events(board, run_id)]
    assert kinds == [
        ("SolveStarted", "solve"),
        ("SolveStepPosted", "first"),
        ("SolveResumed", "ops"),
        ("SolveStepEnded", "finder"),
        ("SolveSolved", "first"),
    ]
    resumed = next(e["data"] for e in solve_events(board, run_id) if e["event_type"] == "SolveResumed")
    assert resumed["signal_id"] == run["steps"][0]["signal_id"] and resumed["pid"] != proc.pid
    posts = [
        e for e in board.cli.ok("events", "--blackboard", "ps-1") if e["event_type"] == "AgentSignalPosted"
    ]
    assert len(posts) == 1  # the open step was waited for, not posted again
    assert status(board, run_id) == run
    again = board.cli("solve", "--resume", run_id, "--blackboard", "ps-1").expect(3)
    assert f"solve run {run_id} on ps-1 is solved (solve/{run_id}/answer); nothing to resume" in again.stderr
    board.cli("solve", "--resume", "solve-00000000", "--blackboard", "ps-1").expect(4)
    worker.terminate()


def test_a_stalled_solve_whose_run_was_resumed_elsewhere_leaves_it_to_the_resume(board, gate):
    board.agent("finder", finder(gate), "You find.")
    ctl = controller(board, "first", FIRST_FINDING)
    worker = board.cli.start("worker", "--agent", "finder", "--board", "ps-1")
    stalled = start_solve(board, ctl)
    wait_until(lambda: claimed(board), what="the step's claim")
    run_id = the_run(board)["run_id"]
    os.kill(stalled.pid, signal.SIGSTOP)
    try:
        wait_until(
            lambda: status(board, run_id)["state"] == "orphaned", what="the stalled run to look orphaned"
        )
        resume = start(board, "solve", "--resume", run_id, "--blackboard", "ps-1")
        wait_until(lambda: status(board, run_id)["state"] == "running", what="the resume to drive the run")
    finally:
        os.kill(stalled.pid, signal.SIGCONT)

    left = board.cli.finish(stalled)
    gate.touch()
    done = board.cli.finish(resume)

    assert left.returncode == 3 and "was taken up by another process" in left.stderr, left
    assert done.returncode == 0, done
    kinds = [e["event_type"] for e in solve_events(board, run_id)]
    assert "SolveStopped" not in kinds and kinds[-1] == "SolveSolved"
    worker.terminate()


# -- Ctrl-C and SIGTERM ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("sent", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_ctrl_c_or_sigterm_cancels_the_open_step_stops_its_run_and_records_why(board, gate, sent):
    board.agent("finder", finder(gate), "You find.")
    ctl = controller(board, "first", FIRST_FINDING)
    worker = board.cli.start("worker", "--agent", "finder", "--board", "ps-1")
    proc = start_solve(board, ctl)
    wait_until(lambda: claimed(board), what="the step's claim")

    proc.send_signal(sent)
    done = board.cli.finish(proc)

    assert done.returncode == 130, done
    run = the_run(board)
    [step] = run["steps"]
    assert (run["state"], run["reason"], step["status"]) == ("stopped", "interrupted", "CANCELLED")
    assert board.show(step["signal_id"])["status"] == "CANCELLED"
    worker.terminate()


def test_ctrl_c_with_keep_step_leaves_the_run_and_its_step_for_a_resume(board, gate):
    board.agent("finder", finder(gate), "You find.")
    ctl = controller(board, "first", FIRST_FINDING)
    worker = board.cli.start("worker", "--agent", "finder", "--board", "ps-1")
    proc = start_solve(board, ctl, "--keep-step")
    wait_until(lambda: claimed(board), what="the step's claim")

    proc.send_signal(signal.SIGINT)
    done = board.cli.finish(proc)

    assert done.returncode == 130, done
    run = the_run(board)
    assert f"left {run['run_id']} for a resume: blackboard solve --resume {run['run_id']}" in done.stderr
    assert run["state"] == "orphaned" and run["steps"][0]["status"] is None
    assert board.show(run["steps"][0]["signal_id"])["status"] == "CLAIMED"
    gate.touch()
    resumed = board.cli("--json", "solve", "--resume", run["run_id"], "--blackboard", "ps-1").expect(0).json()
    assert (resumed["state"], resumed["answer"]) == ("solved", "FOUND 42")
    worker.terminate()


# -- the Python API --------------------------------------------------------------------------------------------
def test_the_python_api_ends_a_step_no_worker_fits_and_resumes_a_killed_run(board, gate, monkeypatch):
    from blackboard import Blackboard, Refused, TimedOut

    board.agent("finder", finder(gate), "You find.")
    ctl = controller(board, "first", FIRST_FINDING)
    monkeypatch.chdir(board.workdir)
    with Blackboard(board.cli.db_url, agents_dir=board.agents, beat_interval=0.3) as bb:
        began = time.monotonic()
        with pytest.raises(TimedOut, match="for finder's RESEARCH\\) had no live worker that fits it for 1s"):
            bb.solve(PROBLEM, blackboard_id="ps-1", controller=str(ctl), step_timeout=1)
        assert time.monotonic() - began < 30
        [stopped] = bb.signals(blackboard_id="ps-1")
        assert stopped.status == "CANCELLED"

        worker = board.cli.start("worker", "--agent", "finder", "--board", "ps-1")
        proc = start_solve(board, ctl)
        wait_until(lambda: claimed(board) and len(bb.signals(blackboard_id="ps-1")) == 2, what="the claim")
        os.kill(proc.pid, signal.SIGKILL)
        board.cli.finish(proc)
        run_id = bb.signals(blackboard_id="ps-1", status="CLAIMED")[0].payload.context["solve_run"]
        wait_until(lambda: bb.solve_status(run_id, blackboard_id="ps-1").state == "orphaned", what="orphaned")
        gate.touch()

        run = bb.resume_solve(run_id, blackboard_id="ps-1", resumed_by="notebook")

        assert (run.state, run.answer, run.resumes) == ("solved", "FOUND 42", 1)
        assert bb.solve_status(run_id, blackboard_id="ps-1") == run
        with pytest.raises(Refused, match="is solved"):
            bb.resume_solve(run_id, blackboard_id="ps-1")
        worker.terminate()


# -- a decision under way ends with the solve that asked for it ----------------------------------------------------
SLOW_CONTROLLER = """import os, pathlib, time
pathlib.Path("decision.pid").write_text(str(os.getpid()))
time.sleep(120)  # a decision that takes its time: a model call under way
pathlib.Path("answered").write_text("too late")
"""


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (ended, not yet reaped) counts as gone
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][0] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize("sent", [signal.SIGKILL, signal.SIGTERM])
def test_a_decision_under_way_ends_with_the_solve_that_asked_for_it(board, sent):
    board.agent("finder", finder(), "You find.")
    ctl = controller(board, "slow", SLOW_CONTROLLER)
    proc = start_solve(board, ctl)
    pid = int(
        wait_until(lambda: (p := ctl.parent / "decision.pid").exists() and p.read_text(), what="a decision")
    )

    os.kill(proc.pid, sent)
    proc.wait(timeout=60)

    # before: the controller's decision ran on for its two minutes after solve had ended (killed or stopped)
    wait_until(lambda: not alive(pid), timeout=20, what="the decision under way to end with its solve")
    assert not (ctl.parent / "answered").exists()
