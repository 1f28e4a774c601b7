"""The suite's CLI fork server (tests/cli_server.py) answers as the cold executable does: the same exit codes,
output and errors for the same calls, each in a process of its own, in the caller's folder and environment."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.cli_server import BLACKBOARD, CliServer

CALLS = [
    ["--help"],
    ["--json", "signals"],
    ["post", "--type", "RESEARCH", "--ps-id", "ps-1", "--entry-id", "e-1", "--topic", "a topic", "--json"],
    ["post", "--type", "RESEARCH"],  # missing fields: exit 2
    ["show", "sig-00000000"],  # not found
    ["--json", "claim", "sig-00000000", "--agent", "nobody"],
]
IDS = re.compile(r"sig-[0-9a-f]{8}|\d{4}-\d\d-\d\dT[0-9:.+]+")


@pytest.fixture
def server():
    warm = CliServer(BLACKBOARD)
    yield warm
    warm.close()


def test_a_forked_call_answers_as_the_cold_executable_does(tmp_path, server):
    results = {}
    for mode in ("exec", "fork"):
        env = {k: v for k, v in os.environ.items() if not k.startswith("BLACKBOARD_")}
        env["BLACKBOARD_DB"] = f"sqlite:///{tmp_path / mode}.db"
        env["BLACKBOARD_AGENTS_DIR"] = str(tmp_path)
        results[mode] = []
        for args in CALLS:
            if mode == "exec":
                done = subprocess.run(
                    [BLACKBOARD, *args], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60
                )
                code, out, err = done.returncode, done.stdout, done.stderr
            else:
                code, out, err = server.run(args, env, tmp_path, 60)
            results[mode].append((code, IDS.sub("X", out), IDS.sub("X", err).replace(f"{mode}.db", "DB")))
    assert results["fork"] == results["exec"]
    assert {code for code, _, _ in results["fork"]} >= {0, 2}  # the calls reach both successes and refusals


def test_each_call_is_a_process_of_its_own_in_the_callers_folder_and_environment(tmp_path, server):
    env = {k: v for k, v in os.environ.items() if not k.startswith("BLACKBOARD_")}
    for n in range(3):
        folder = tmp_path / f"f{n}"
        folder.mkdir()
        # a relative database path lands in the caller's folder, read from the caller's environment
        code, out, err = server.run(
            ["--json", "signals"], {**env, "BLACKBOARD_DB": "sqlite:///own.db"}, folder, 60
        )
        assert (code, out.strip()) == (0, "[]"), err
        assert (folder / "own.db").exists()
    assert not (tmp_path / "own.db").exists()


def test_a_call_past_its_timeout_is_killed_and_said(tmp_path, server):
    env = {k: v for k, v in os.environ.items() if not k.startswith("BLACKBOARD_")}
    env["BLACKBOARD_DB"] = f"sqlite:///{tmp_path / 'b.db'}"
    env["BLACKBOARD_AGENTS_DIR"] = str(tmp_path)
    # an agent that fits, so the signal waits for a worker (none comes)
    (tmp_path / "finder.md").write_text("---\nname: finder\ncapabilities: {RESEARCH: 0.9}\n---\nFinds.\n")
    post = ["--json", "post", "--type", "RESEARCH", "--ps-id", "ps-1", "--entry-id", "e-1", "--topic", "t"]
    code, out, err = server.run(post, {**env, "BLACKBOARD_POST_TIMEOUT": "600"}, tmp_path, 60)
    assert code == 0, err
    signal_id = re.search(r"sig-[0-9a-f]{8}", out).group(0)
    with pytest.raises(subprocess.TimeoutExpired):
        server.run(["wait", signal_id, "--timeout", "60"], env, tmp_path, 2.0)


def test_the_shell_s_shim_is_a_process_with_the_shell_s_pipes_exit_codes_and_signals(tmp_path, server):
    """The docs harness puts the server's shim first on a page's PATH: a page's `blackboard` reads its stdin
    and its environment, exits as the cold one does, stops on Ctrl-C sent to its job, and takes its call with it
    when killed."""
    shim = server.shim(tmp_path / "bin")
    env = {k: v for k, v in os.environ.items() if not k.startswith("BLACKBOARD_")}
    env.update(
        PATH=f"{shim}{os.pathsep}{env['PATH']}",
        BLACKBOARD_DB=f"sqlite:///{tmp_path / 'b.db'}",
        BLACKBOARD_AGENTS_DIR=str(tmp_path),
    )
    (tmp_path / "finder.md").write_text(
        "---\nname: finder\ncapabilities: {RESEARCH: 0.9}\ncommand: cat\n---\nFinds.\n"
    )
    script = r"""
    set -m
    [ "$(command -v blackboard)" = "$SHIM/blackboard" ] || exit 90
    blackboard write k --blackboard b --author me --value '"piped"' >/dev/null
    blackboard export b | BLACKBOARD_DB=sqlite:///other.db blackboard import - >/dev/null
    BLACKBOARD_DB=sqlite:///other.db blackboard --json read k --blackboard b | grep -q '"piped"' || exit 91
    blackboard show sig-00000000 2>/dev/null; echo "not found: $?"
    blackboard worker --agent finder 2>worker.log >/dev/null &
    job=$!
    until grep -q ' started (' worker.log; do kill -0 $job || exit 92; sleep 0.1; done
    kill -INT -- -$job
    wait $job; echo "after Ctrl-C: $?"
    blackboard worker --agent finder 2>killed.log >/dev/null &
    job=$!
    until grep -q ' started (' killed.log; do kill -0 $job || exit 93; sleep 0.1; done
    grep -o '\[[0-9]*\]' killed.log | head -1 | tr -d '[]' > call.pid
    kill -KILL -- -$job
    wait $job; echo "after kill: $?"
    """
    done = subprocess.run(
        ["bash", "-c", script],
        cwd=tmp_path,
        env={**env, "SHIM": str(shim)},
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["not found: 4", "after Ctrl-C: 0", "after kill: 137"], done.stderr
    assert "stopped after 0 signal(s)" in (tmp_path / "worker.log").read_text()
    call = int((tmp_path / "call.pid").read_text())
    for _ in range(100):  # the server kills the call of a shim that was killed
        stat = Path(f"/proc/{call}/stat")
        if not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] == "Z":
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"the call {call} of the killed shim still runs")


def test_a_started_process_has_the_call_s_pipes_pid_signals_and_exit(tmp_path, server):
    """Cli.start's background processes (workers, watches, servers) run through `CliServer.start`: the Popen's
    pipes are the call's, `call_pid` is the pid the call reports as its own, a signal sent to the Popen
    reaches the call (alone: no group of its own, as a started process has none), the Popen ends with the
    call's exit code, and killing it kills the call."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BLACKBOARD_")}
    env["BLACKBOARD_DB"] = f"sqlite:///{tmp_path / 'b.db'}"
    env["BLACKBOARD_AGENTS_DIR"] = str(tmp_path)
    (tmp_path / "finder.md").write_text(
        "---\nname: finder\ncapabilities: {RESEARCH: 0.9}\ncommand: cat\n---\nF.\n"
    )
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "text": True}

    stopped = server.start(["worker", "--agent", "finder"], env, tmp_path, **pipes)
    first = stopped.stderr.readline()
    assert " started (" in first and f"[{stopped.call_pid}]" in first, first
    assert stopped.call_pid != stopped.pid and os.getpgid(stopped.call_pid) != stopped.call_pid
    stopped.send_signal(signal.SIGTERM)  # the worker's graceful stop
    _, rest = stopped.communicate(timeout=60)
    assert stopped.returncode == 0 and "stopped after 0 signal(s)" in rest, rest

    killed = server.start(["worker", "--agent", "finder"], env, tmp_path, **pipes)
    assert " started (" in killed.stderr.readline()
    killed.kill()
    assert killed.wait(timeout=60) == -signal.SIGKILL
    for _ in range(100):  # the server kills the call of a shim that was killed
        stat = Path(f"/proc/{killed.call_pid}/stat")
        if not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] == "Z":
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"the call {killed.call_pid} of the killed process still runs")
    killed.communicate()
