"""The suite's CLI fork server (tests/cli_server.py) answers as the cold executable does: the same exit codes,
output and errors for the same calls, each in a process of its own, in the caller's folder and environment."""

from __future__ import annotations

import os
import re
import subprocess

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
