"""Stalled runs (docs/control.md, "Stalls") through real worker processes, on SQLite and PostgreSQL: a runner's
run that shows no progress for its agent file's `stall_timeout` is stopped, its attempt fails saying it
stalled, AgentSignalStalled is recorded with that failure, and the signal's retries decide what follows.
Shown by the CLI (`show`, `status`, `events`), the Python API and the web view's /metrics."""

from __future__ import annotations

from pathlib import Path

from blackboard import Blackboard
from tests.e2e.test_ui_cards import shown
from tests.e2e.test_ui_metrics import samples
from tests.e2e.web import UiServer, artifact, browser, settled  # noqa: F401 - the browser fixture
from tests.runners.hostile import claude_script, hostile_env, init_line
from tests.runners.standins import Endless, Turn, call, fail, say, slow, stand_in
from tests.waiting import wait_until

# one retry, at once: the stall is the first attempt's failure, the second attempt answers
QUIET_WRITER = (
    "runner: anthropic\nmodel: sonnet\nstall_timeout: 2\n"
    "retries: {max_attempts: 2, backoff: fixed, initial: 100ms, max: 1s, jitter: 0}\n"
)
SILENCE = 600.0  # seconds the stand-in keeps quiet before its first answer: far past any stall timeout


def anthropic_env(url: str) -> dict[str, str]:
    return {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "sk-ant-test"}


def test_a_silent_model_api_stalls_the_run_which_is_retried_and_every_interface_shows_the_stall(both_board):
    board = both_board
    board.agent("writer", QUIET_WRITER, "Write.")
    signal_id = board.post("writer")["signal_id"]
    with stand_in([slow(SILENCE, say("too late")), say("DONE")]) as api:
        worker = board.cli.start("worker", "--agent", "writer", env=anthropic_env(api.url))
        try:
            done = wait_until(
                lambda: (s := board.show(signal_id))["status"] == "COMPLETED" and s,
                120,
                "the retry to complete",
            )
        finally:
            worker.terminate()
        stopped = board.cli.finish(worker)

    assert len(api.model_calls) == 2  # the silent call, then the retry's
    assert done["attempt"] == 2 and done["result"]["knowledge_items"] == ["DONE"]
    (failed,) = done["attempts"]
    assert failed["error"].startswith("stalled: no output line, token or tool call for 2s")
    assert "the agent file's stall_timeout is 2s" in failed["error"]
    (stall,) = done["stalls"]
    assert (stall["attempt"], stall["actor"]) == (1, "writer") and stall["seconds_idle"] >= 2
    assert "stalled" in stopped.stderr  # the worker's log says it

    # the stall and its one failure, recorded together (one append: adjacent in the log)
    events = board.cli.ok("events", "--blackboard", "ps-1")
    mine = [e for e in events if e["data"].get("signal_id") == signal_id]
    kinds = [e["event_type"] for e in mine]
    assert kinds.count("AgentSignalStalled") == 1 and kinds.count("AgentSignalAttemptFailed") == 1
    at = kinds.index("AgentSignalStalled")
    stalled, failed_then = mine[at], mine[at + 1]
    assert failed_then["event_type"] == "AgentSignalAttemptFailed"
    assert failed_then["position"] == stalled["position"] + 1 and failed_then["data"]["attempt"] == 1
    assert stalled["data"]["actor"] == "writer" and stalled["metadata"].get("actor") == "writer"

    status = board.cli.ok("status", "--blackboard", "ps-1")[0]
    assert (status["stalls"], status["stalled_signals"]) == (1, [signal_id])
    shown = board.cli("status").expect(0).stdout
    assert "stalled runs" in shown and signal_id in shown.split("stalled runs", 1)[1]
    assert "attempt 1 stalled (writer" in board.cli("show", signal_id).expect(0).stdout

    with Blackboard(board.cli.db_url, agents_dir=board.agents) as python:
        (seen,) = python.show(signal_id).stalls
    assert seen.attempt == 1 and seen.seconds_idle == stall["seconds_idle"]

    server = UiServer(board.cli).wait_ready()
    try:
        code, _, body = server.get("/metrics")
    finally:
        server.stop()
    assert code == 200
    assert samples(body.decode())[("blackboard_stalls_total", (("board", "ps-1"),))] == 1


def test_a_claude_code_that_prints_nothing_stalls_and_on_its_last_attempt_the_signal_fails(
    both_board, tmp_path, browser
):
    """A scripted `claude` (tests/runners/hostile.py) that says it started, then prints nothing again."""
    board = both_board
    pid_file = tmp_path / "claude.pid"
    claude = claude_script(
        tmp_path,
        f"""\
        open({str(pid_file)!r}, "w").write(str(os.getpid()))
        out({init_line()!r})
        time.sleep({SILENCE})
        """,
    )
    board.agent("thinker", "stall_timeout: 1\n", "Think.")
    signal_id = board.post("thinker")["signal_id"]
    listed = {a["name"]: a for a in board.cli.ok("agents")["agents"]}
    assert listed["thinker"]["stall_timeout"] == 1

    board.cli("worker", "--agent", "thinker", "--once", env=hostile_env(claude)).expect(0)

    done = board.show(signal_id)
    assert done["status"] == "FAILED" and done["attempts"] == []
    assert done["result"]["error"].startswith("stalled: no output line, token or tool call for 1s")
    assert [(s["attempt"], s["actor"]) for s in done["stalls"]] == [(1, "thinker")]
    pid = int(pid_file.read_text())
    wait_until(lambda: gone(pid), 30, "the silent claude to be killed")  # the stop killed it
    status = board.cli.ok("status", "--blackboard", "ps-1")[0]
    assert (status["stalls"], status["stalled_signals"]) == (1, [signal_id])
    with Blackboard(board.cli.db_url, agents_dir=board.agents) as python:
        assert python.show(signal_id).result.error == done["result"]["error"]

    server = UiServer(board.cli).wait_ready()  # the web view: its card says the attempt stalled
    try:
        browser.get(f"{server.url}/?board=ps-1")
        settled(browser, lambda d: shown(d, signal_id, "FAILED", "stalled: attempt 1 after 1s idle"))
        browser.save_screenshot(str(artifact("ui-stalled-card.png")))
    finally:
        server.stop()


def test_a_run_that_keeps_streaming_never_stalls_its_timeout_ends_it(both_board):
    """Progress (a streamed event every tenth of a second) keeps a run from stalling however long it goes: twice
    its stall timeout here (which leaves a loaded machine seconds to make the call and stream its first event)."""
    board = both_board
    board.agent("talker", "runner: anthropic\nmodel: sonnet\nstall_timeout: 3\ntimeout: 6\n", "Talk.")
    signal_id = board.post("talker")["signal_id"]
    with Endless() as api:
        board.cli("worker", "--agent", "talker", "--once", env=anthropic_env(api.url)).expect(0)

    done = board.show(signal_id)
    assert done["status"] == "FAILED" and done["stalls"] == []
    assert done["result"]["error"].startswith("timed out after 6s")
    assert board.cli.ok("status", "--blackboard", "ps-1")[0]["stalls"] == 0


def gone(pid: int) -> bool:
    """No such process, or a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state == "Z"


def test_waiting_out_a_rate_limit_longer_than_the_stall_timeout_is_no_stall(both_board):
    """The API answered (a 429 saying when to come back): waiting as it says is progress, not silence."""
    board = both_board
    # a stall timeout of seconds leaves a loaded machine time to make the first call (the SDK loaded, the
    # client made) before the 429 answers it; the wait it says is twice as long
    board.agent("patient", "runner: anthropic\nmodel: sonnet\nstall_timeout: 3\n", "Wait your turn.")
    signal_id = board.post("patient")["signal_id"]
    limited = fail(429, "rate_limit_error", "slow down", {"retry-after": "6"})
    with stand_in([limited, say("DONE")]) as api:
        board.cli("worker", "--agent", "patient", "--once", env=anthropic_env(api.url)).expect(0)

    done = board.show(signal_id)
    assert (done["status"], done["stalls"]) == ("COMPLETED", [])
    assert len(api.model_calls) == 2


def test_waiting_for_room_in_the_rate_limits_window_longer_than_the_stall_timeout_is_no_stall(both_board):
    """A multi-turn run under a rate limit waits for room before each later call (docs/control.md, "Rate
    limits"): keeping to its limit is progress, not silence."""
    board = both_board
    board.agent(  # a minute's worth is 6 calls, then one every 10 s: the seventh call waits seconds for room
        "paced",
        "runner: anthropic\nmodel: sonnet\nstall_timeout: 3\n"
        "rate_limit: {key: paced-api, requests_per_minute: 6}\n",
        "Pace yourself.",
    )
    signal_id = board.post("paced")["signal_id"]
    calls: list[int] = []

    def answer(body: dict) -> Turn:
        calls.append(1)
        return call("blackboard_summary", {}) if len(calls) < 7 else say("DONE")

    with stand_in(answer) as api:
        board.cli("worker", "--agent", "paced", "--once", env=anthropic_env(api.url)).expect(0)

    done = board.show(signal_id)
    assert (done["status"], done["stalls"]) == ("COMPLETED", []), done.get("result")
    assert len(api.model_calls) == 7
