"""What the claude-code runner makes of whatever Claude Code prints, through a real worker process running a
hostile stand-in of `claude` (tests/runners/hostile.py): lines it cannot read, odd figures in its result,
enormous output, and output that goes on after it exits. The run never hangs and never loses a result: it
ends as a success with warnings in its transcript, or as a failure saying what was wrong."""

from __future__ import annotations

import json
import signal as signals
from pathlib import Path

import pytest

from tests.runners.claude import claude_env
from tests.runners.hostile import SESSION, claude_script, hostile_env, init_line, result_line
from tests.runners.standins import say, stand_in
from tests.waiting import wait_until

REVIEWER = "description: Reviews.\ntimeout: 40\n"
FILLER = json.dumps({"type": "user", "message": {"role": "user", "content": "y" * 2000}})


def transcript(board, done: dict) -> list[dict]:
    """The run's transcript as `show SIG --transcript --json` gives it (a line that is no JSON as text)."""
    return board.cli.ok("show", done["signal_id"], "--transcript")


def warnings_of(records: list[dict]) -> list[str]:
    return [r["warning"] for r in records if r.get("type") == "warning"]


def run_once(board, claude: Path, env: dict[str, str] | None = None) -> dict:
    """A reviewer's signal, one worker run of it with `claude`; the signal as it ended."""
    signal = board.post("reviewer")
    board.cli("worker", "--agent", "reviewer", "--once", env={**hostile_env(claude), **(env or {})}).expect(0)
    return board.show(signal["signal_id"])


@pytest.mark.parametrize("message", ["x", [1, 2], 3], ids=["text", "list", "number"])
def test_a_line_whose_message_is_not_an_object_is_kept_warned_and_skipped_and_the_run_still_completes(
    board, tmp_path, message
):
    """Before: the line killed the reader, Claude Code blocked on its full pipe 64 KiB later, and the run
    ended FAILED at its timeout."""
    board.agent("reviewer", REVIEWER, "Review.")
    odd = json.dumps({"type": "assistant", "message": message})
    claude = claude_script(
        tmp_path,
        f"""
        out({init_line()!r})
        out({odd!r})
        for _ in range(100):  # 200 KB more: past what the pipe holds
            out({FILLER!r})
        out({result_line()!r})
        """,
    )

    done = run_once(board, claude)

    assert (done["status"], done["result"]["knowledge_items"]) == ("COMPLETED", ["DONE"])
    assert (done["usage"]["turns"], done["usage"]["session_id"]) == (2, SESSION)
    records = transcript(board, done)
    assert records[1] == json.loads(odd) and records[-1]["type"] == "result"
    assert warnings_of(records) == [
        f"line 2 of Claude Code's output is an assistant line whose message is {type(message).__name__} "
        f"{json.dumps(message)}, not an object: skipped"
    ]


ODD_RESULTS = {
    "usage-text": (
        {"usage": "lots"},
        {"input_tokens": 0, "output_tokens": 0, "turns": 2, "cost_usd": 0.0123},
        'usage is str "lots", not an object: read as empty',
    ),
    "usage-list": (
        {"usage": [100, 40]},
        {"input_tokens": 0, "output_tokens": 0, "turns": 2},
        "usage is list [100, 40], not an object: read as empty",
    ),
    "negative-float-bool-enormous": (
        {
            "usage": {
                "input_tokens": -5,
                "cache_creation_input_tokens": 10**30,
                "cache_read_input_tokens": True,
                "output_tokens": 2.5,
            }
        },
        {"input_tokens": 0, "output_tokens": 0, "turns": 2},
        "usage.input_tokens is int -5, not a whole number from 0 to 9007199254740991: counted as 0",
    ),
    "turns-text": (
        {"num_turns": "three", "usage": {"input_tokens": 7, "output_tokens": 8}},
        {"input_tokens": 7, "output_tokens": 8, "turns": 0},
        'num_turns is str "three", not a whole number from 0 to 9007199254740991: counted as 0',
    ),
    "turns-list-model-usage-number": (
        {"num_turns": [2], "modelUsage": 5},
        {"turns": 0, "model": "claude-sonnet-5-5"},
        "modelUsage is int 5, not an object: read as empty",
    ),
    "cost-and-session-odd": (
        {"total_cost_usd": "free", "session_id": 42},
        {"cost_usd": None, "session_id": SESSION, "input_tokens": 123},
        'total_cost_usd is str "free", not a number of US dollars from 0 to 1e+06: taken as unknown',
    ),
}


@pytest.mark.parametrize("fields, usage, warning", ODD_RESULTS.values(), ids=ODD_RESULTS.keys())
def test_odd_figures_in_the_result_keep_the_run_a_success_with_the_usage_that_makes_sense_and_a_warning(
    board, tmp_path, fields, usage, warning
):
    """Before: "the worker could not run the claude-code runner: AttributeError ..." (or a ValueError, a
    ValidationError), a failure with its usage zeroed and its transcript unlinked."""
    board.agent("reviewer", REVIEWER, "Review.")
    claude = claude_script(tmp_path, f"out({init_line()!r})\nout({result_line(**fields)!r})\n")

    done = run_once(board, claude)

    assert (done["status"], done["result"]["knowledge_items"]) == ("COMPLETED", ["DONE"])
    assert {k: done["usage"][k] for k in usage} == usage
    assert Path(done["usage"]["transcript_path"]).is_file()
    assert f"Claude Code's result: {warning}" in warnings_of(transcript(board, done))


def memory_kb(pid: int) -> dict[str, int]:
    status = Path(f"/proc/{pid}/status").read_text()
    return {line.split(":")[0]: int(line.split()[1]) for line in status.splitlines() if line.startswith("Vm")}


def test_hundreds_of_megabytes_on_one_line_keep_the_worker_s_memory_bounded_and_the_run_completes(
    board, tmp_path
):
    """Before: the worker held each enormous line whole (and wrote it whole to the transcript): its
    memory grew by several times the line."""
    board.agent("reviewer", REVIEWER, "Review.")
    signal = board.post("reviewer")
    reader, go = tmp_path / "reader.pid", tmp_path / "go"  # the process that started `claude` reads its pipes
    claude = claude_script(
        tmp_path,
        f"""
        open({str(reader)!r}, "w").write(str(os.getppid()))
        while not os.path.exists({str(go)!r}):  # until the test has taken the reader's memory before
            time.sleep(0.05)
        out({init_line()!r})
        chunk = "z" * (1 << 20)
        for _ in range(200):  # 200 MiB on one line of stdout, and 100 MiB on stderr with no end of line
            sys.stdout.write(chunk)
        out("")
        for _ in range(100):
            sys.stderr.write(chunk)
        sys.stderr.flush()
        time.sleep(0.5)  # the reader's memory as the line comes, before it is read
        out({result_line()!r})
        """,
    )
    worker = board.cli.start("worker", "--agent", "reviewer", env=hostile_env(claude))
    pid = int(wait_until(lambda: reader.is_file() and reader.read_text(), 60, "the run's start"))
    before = memory_kb(pid)["VmRSS"]
    go.touch()
    wait_until(lambda: board.show(signal["signal_id"])["status"] in ("COMPLETED", "FAILED"), 120, "its end")
    grew = (memory_kb(pid)["VmHWM"] - before) / 1024
    worker.send_signal(signals.SIGTERM)
    board.cli.finish(worker).expect(0)

    done = board.show(signal["signal_id"])
    assert (done["status"], done["result"]["knowledge_items"]) == ("COMPLETED", ["DONE"])
    assert grew < 100, f"the worker's memory grew by {grew:.0f} MB reading the run's output"
    transcript_file = Path(done["usage"]["transcript_path"])
    assert transcript_file.stat().st_size < 1 << 20
    kept = [r for r in transcript(board, done) if r.get("type") == "text"][0]["text"]
    assert kept.startswith("zzz") and kept.endswith(f"[... cut: the line was {200 << 20} bytes]")
    assert warnings_of(transcript(board, done)) == [
        f"line 2 of Claude Code's output is {200 << 20} bytes long, over the 8388608 a line may have: skipped"
    ]


def test_a_result_line_over_the_line_bound_fails_the_run_saying_its_output_was_too_long_to_read(
    board, tmp_path
):
    board.agent("reviewer", REVIEWER, "Review.")
    claude = claude_script(tmp_path, f"out({init_line()!r})\nout({result_line('a' * (9 << 20))!r})\n")

    done = run_once(board, claude)

    assert done["status"] == "FAILED"
    assert done["result"]["error"] == (
        "Claude Code exited 0 without a result; 1 line(s) of its output were over 8388608 bytes and were "
        "not read: (no stderr)"
    )
    assert done["usage"]["session_id"] == SESSION  # what was read before it is kept


def test_a_flood_of_lines_it_cannot_read_is_drained_and_said_in_a_bounded_number_of_warnings(board, tmp_path):
    board.agent("reviewer", REVIEWER, "Review.")
    claude = claude_script(
        tmp_path,
        f"""
        out({init_line()!r})
        for n in range(20000):
            out(f"not json {{n}}")
            err(f"stderr line {{n}}")
        out({result_line()!r})
        """,
    )

    done = run_once(board, claude)

    assert done["status"] == "COMPLETED"
    warnings = warnings_of(transcript(board, done))
    assert len(warnings) == 101 and warnings[0] == "line 2 of Claude Code's output is not JSON: skipped"
    assert warnings[-1] == "more than 100 warnings: the rest are not kept"


def test_the_claim_is_renewed_while_output_goes_on_after_claude_code_exits_and_its_result_is_recorded(
    board, tmp_path
):
    """A `claude` that hands its work to a child and exits at once (a wrapper that backgrounds the real
    one): the result comes 8 s later, on the same pipe, with a 3 s claim timeout. Before: the worker waited
    10 s for its readers without renewing the claim, and the completion was refused or lost."""
    board.agent("reviewer", REVIEWER, "Review.")
    claude = claude_script(
        tmp_path,
        f"""
        if os.fork() == 0:
            time.sleep(8)
            out({init_line()!r})
            out({result_line("LATE BUT DONE")!r})
            os._exit(0)
        """,
    )

    done = run_once(board, claude, {"BLACKBOARD_CLAIM_TIMEOUT": "3"})

    assert (done["status"], done["result"]["knowledge_items"]) == ("COMPLETED", ["LATE BUT DONE"])
    assert done["usage"]["turns"] == 2 and done["usage"]["cost_usd"] == 0.0123


def test_what_holds_the_pipes_after_claude_code_exited_with_its_result_is_stopped_and_the_run_completes(
    board, tmp_path
):
    """Before: the worker waited 10 s for its readers, then recorded the outcome and left the child that
    held the pipes running."""
    board.agent("reviewer", REVIEWER, "Review.")
    pid_file = tmp_path / "straggler.pid"
    claude = claude_script(
        tmp_path,
        f"""
        out({init_line()!r})
        out({result_line()!r})
        if os.fork() == 0:
            open({str(pid_file)!r}, "w").write(str(os.getpid()))
            time.sleep(600)
        """,
    )

    done = run_once(board, claude)

    assert (done["status"], done["result"]["knowledge_items"]) == ("COMPLETED", ["DONE"])
    straggler = int(pid_file.read_text())
    wait_until(lambda: not alive(straggler), 10, "the straggler's end")


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_a_drain_that_outlasts_the_run_s_timeout_fails_the_run_at_its_timeout_and_stops_what_held_the_pipes(
    board, tmp_path
):
    """A `claude` that exits at once, leaving a child that holds its pipes and never answers. Before: the
    worker waited 10 s for its readers past the timeout, then failed the run as exited without a result,
    and left the child running."""
    board.agent("reviewer", "description: Reviews.\ntimeout: 4\n", "Review.")
    pid_file = tmp_path / "child.pid"
    claude = claude_script(
        tmp_path,
        f"""
        if os.fork() == 0:
            open({str(pid_file)!r}, "w").write(str(os.getpid()))
            time.sleep(600)
        """,
    )

    done = run_once(board, claude)

    assert (done["status"], done["result"]["error"]) == (
        "FAILED",
        "timed out after 4s (the agent file's timeout)",
    )
    wait_until(lambda: not alive(int(pid_file.read_text())), 10, "the child's end")


def test_the_real_claude_code_s_answer_over_1_mib_fails_the_run_naming_the_item_with_its_usage_and_transcript(
    board, tmp_path
):
    """The pinned Claude Code against the stand-in, which answers with 1.3 MB of text: the answer is the
    run's one knowledge item, too large for an entry. Before: COMPLETED, and the item never landed."""
    board.agent("reviewer", "description: Reviews.\ntools: Read\nmodel: sonnet\n", "Review.")
    signal = board.post("reviewer")
    with stand_in([say("x" * 1_300_000, input_tokens=300, output_tokens=40)]) as api:
        board.cli("worker", "--agent", "reviewer", "--once", env=claude_env(api.url, tmp_path)).expect(0)

    done = board.show(signal["signal_id"])
    assert (done["status"], done["result"]["error"]) == (
        "FAILED",
        "handler output refused: knowledge_items[0]: must be at most 1048576 bytes as an entry's value (1 MiB), "
        "got 1300002: write it to a file and return its artifact_path",
    )
    assert [k for k in board.entries() if k.startswith(signal["signal_id"])] == []
    assert done["usage"]["turns"] == 1 and done["usage"]["output_tokens"] == 40
    result = transcript(board, done)[-1]
    assert result["type"] == "result" and len(result["result"]) == 1_300_000


def test_an_answer_nested_thousands_deep_fails_its_run_saying_so_and_the_worker_goes_on(board, tmp_path):
    """Before: reading the answer raised RecursionError outside the run's guard, on the pool's thread: nothing
    was recorded, the signal stayed CLAIMED until its lease lapsed, and the worker's slot was never freed (a
    worker of concurrency 1 claimed nothing more; a --once worker never ended)."""
    board.agent("reviewer", REVIEWER, "Review.")
    deep, answered = "[" * 100_000 + "]" * 100_000, tmp_path / "answered"
    claude = claude_script(
        tmp_path,
        f"""
        first = not os.path.exists({str(answered)!r})
        open({str(answered)!r}, "a").close()
        out({init_line()!r})
        out({result_line(deep)!r} if first else {result_line()!r})
        """,
    )
    signal = board.post("reviewer")
    worker = board.cli.start("worker", "--agent", "reviewer", "--concurrency", "1", env=hostile_env(claude))
    wait_until(
        lambda: answered.exists() and board.show(signal["signal_id"])["status"] != "CLAIMED", 60, "its end"
    )
    after = board.post("reviewer", entry="e-2")
    wait_until(lambda: board.show(after["signal_id"])["status"] == "COMPLETED", 60, "the next signal's run")
    worker.send_signal(signals.SIGTERM)
    stopped = board.cli.finish(worker).expect(0)

    done = board.show(signal["signal_id"])
    assert (done["status"], done["result"]["error"]) == (
        "FAILED",
        "handler output: nested deeper than 64 levels of arrays and objects (100000); "
        "output read as JSON may nest at most 64",
    )
    assert done["usage"]["session_id"] == SESSION  # its usage recorded with it
    assert "RecursionError" not in stopped.stderr


def test_huge_odd_usage_objects_in_streamed_answers_keep_the_worker_s_memory_bounded_and_are_counted(
    board, tmp_path
):
    """Before: each assistant line's `usage` was kept whole, by message id, until the run's end: 300 answers
    with a 1 MiB usage object each grew the worker by about 300 MB."""
    board.agent("reviewer", REVIEWER, "Review.")
    signal = board.post("reviewer")
    reader, go = tmp_path / "reader.pid", tmp_path / "go"
    claude = claude_script(
        tmp_path,
        f"""
        open({str(reader)!r}, "w").write(str(os.getppid()))
        while not os.path.exists({str(go)!r}):  # until the test has taken the reader's memory before
            time.sleep(0.05)
        out({init_line()!r})
        odd = {{"k%d" % i: "x" * 1000 for i in range(1000)}}  # 1 MiB of keys no usage has
        for n in range(300):
            usage = {{"input_tokens": 1, "output_tokens": 2, "cache_read_input_tokens": 3, "odd": odd}}
            message = {{"id": "msg_%d" % n, "role": "assistant", "content": [], "usage": usage}}
            out(json.dumps({{"type": "assistant", "message": message}}))
        time.sleep(0.5)
        """,
    )
    worker = board.cli.start("worker", "--agent", "reviewer", env=hostile_env(claude))
    pid = int(wait_until(lambda: reader.is_file() and reader.read_text(), 60, "the run's start"))
    before = memory_kb(pid)["VmRSS"]
    go.touch()
    wait_until(lambda: board.show(signal["signal_id"])["status"] in ("COMPLETED", "FAILED"), 120, "its end")
    grew = (memory_kb(pid)["VmHWM"] - before) / 1024
    worker.send_signal(signals.SIGTERM)
    board.cli.finish(worker).expect(0)

    done = board.show(signal["signal_id"])
    assert done["status"] == "FAILED" and done["result"]["error"].startswith(
        "Claude Code exited 0 without a result"
    )
    assert (done["usage"]["input_tokens"], done["usage"]["output_tokens"]) == (300 * (1 + 3), 300 * 2)
    assert grew < 100, f"the worker's memory grew by {grew:.0f} MB reading the run's output"
