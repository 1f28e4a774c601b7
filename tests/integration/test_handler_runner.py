"""run_handler keeps the contract of agent-file.md: shell, agent folder, stdin, env, result, timeout."""

from __future__ import annotations

import json
import threading
import time

from blackboard.infrastructure.agents.handler import CANCELLED, run_handler
from blackboard.infrastructure.agents.registry import FrontmatterAgentRegistry

DOCUMENT = {"signal_id": "sig-0000abcd", "payload": {"topic": "t"}}


def agent(tmp_path, command: str, timeout: float | None = None):
    (tmp_path / "a.md").write_text(
        "---\nname: a\ncapabilities: {RESEARCH: 0.9}\n"
        f"command: {json.dumps(command)}\n" + (f"timeout: {timeout}\n" if timeout else "") + "---\nbody\n"
    )
    return FrontmatterAgentRegistry(tmp_path).definition("a")


def test_a_json_result_completes_with_its_artifact_and_knowledge(tmp_path):
    script = (
        "import json, os, sys; doc = json.load(sys.stdin); "
        "print(json.dumps({'artifact_path': os.getcwd() + '/' + os.environ['BLACKBOARD_SIGNAL_ID'], "
        "'knowledge_items': [doc['payload']['topic'], os.environ['BLACKBOARD_AGENT'], "
        "os.path.basename(os.environ['BLACKBOARD_PROMPT_FILE'])]}))"
    )
    outcome = run_handler(agent(tmp_path, f'python3 -c "{script}"'), DOCUMENT)

    assert outcome.succeeded
    assert outcome.artifact_path == f"{tmp_path}/sig-0000abcd"  # ran in the agent file's folder
    assert outcome.knowledge_items == ("t", "a", "a.md")


def test_plain_text_becomes_the_one_knowledge_item(tmp_path):
    outcome = run_handler(agent(tmp_path, "echo found it | tr a-z A-Z"), DOCUMENT)  # through the shell

    assert (outcome.succeeded, outcome.artifact_path, outcome.knowledge_items) == (True, None, ("FOUND IT",))


def test_a_failing_command_fails_with_the_end_of_stderr(tmp_path):
    outcome = run_handler(agent(tmp_path, "echo starting >&2; echo no sources >&2; exit 3"), DOCUMENT)

    assert not outcome.succeeded
    assert outcome.error.startswith("exit 3:") and outcome.error.endswith("no sources")


def test_a_command_past_its_timeout_fails(tmp_path):
    outcome = run_handler(agent(tmp_path, "sleep 5", timeout=0.3), DOCUMENT)

    assert not outcome.succeeded and outcome.error.startswith("timed out after 0.3s")


def test_malformed_json_results_are_refused(tmp_path):
    outcome = run_handler(agent(tmp_path, """echo '{"knowledge_items": "not a list"}'"""), DOCUMENT)

    assert not outcome.succeeded and "knowledge_items must be a list" in outcome.error


def test_cancel_stops_a_running_command_at_once(tmp_path):
    cancel = threading.Event()
    threading.Timer(0.1, cancel.set).start()
    started = time.monotonic()

    outcome = run_handler(agent(tmp_path, "sleep 120"), DOCUMENT, cancel=cancel)

    assert not outcome.succeeded and outcome.error.startswith(CANCELLED)
    assert time.monotonic() - started < 60  # stopped, not run to its end (however loaded the machine)


def test_tick_is_called_while_the_command_runs(tmp_path):
    ticks: list[float] = []

    outcome = run_handler(
        agent(tmp_path, "sleep 0.45; echo done"),
        DOCUMENT,
        tick=lambda: ticks.append(time.monotonic()),
        tick_every=0.1,
    )

    assert outcome.succeeded and outcome.knowledge_items == ("done",)
    assert 3 <= len(ticks) <= 6


def test_a_tick_that_raises_stops_the_command_and_fails_naming_why(tmp_path):
    def lost() -> None:
        raise RuntimeError("the claim on sig-0000abcd is someone else's")

    started = time.monotonic()
    outcome = run_handler(agent(tmp_path, "sleep 120"), DOCUMENT, tick=lost, tick_every=0.1)

    assert not outcome.succeeded
    assert outcome.error.startswith("stopped: the claim on sig-0000abcd is someone else's")
    assert time.monotonic() - started < 60  # stopped, not run to its end


def test_output_that_is_not_utf8_is_read_with_replacements_not_lost(tmp_path):
    # before: the reading thread died on the bytes, and the signal completed with nothing
    outcome = run_handler(agent(tmp_path, r"printf '\377\376 found it'"), DOCUMENT)

    assert (outcome.succeeded, outcome.knowledge_items) == (True, ("\ufffd\ufffd found it",))


def test_stderr_is_handed_on_a_line_at_a_time_each_line_bounded_and_the_failure_keeps_its_end(tmp_path):
    """A handler that writes megabytes of stderr without an end of line costs the worker a bound per line:
    the line is handed on cut at 16 KiB, saying how long it was; the failure's error is the last 2,000
    characters; a large standard output and a large document go through at the same time (no pipe blocks)."""
    script = (
        "import json, sys; doc = json.load(sys.stdin); "
        "sys.stderr.write('first line\\n'); sys.stderr.write('x' * 5_000_000); sys.stderr.write('\\nlast words\\n'); "
        "sys.stdout.write('y' * 3_000_000); sys.exit(len(doc['payload']['big']) % 250)"
    )
    said: list[str] = []
    big = {"signal_id": "sig-0000abcd", "payload": {"topic": "t", "big": "z" * 2_000_001}}

    outcome = run_handler(agent(tmp_path, f'python3 -c "{script}"'), big, on_stderr=said.append)

    assert said[0] == "first line" and said[2] == "last words" and len(said) == 3
    assert said[1].startswith("x" * 16384) and said[1].endswith(" [... cut: the line was 5000000 bytes]")
    assert len(said[1]) < 16384 + 64
    assert outcome.error.startswith("exit 1: ") and outcome.error.endswith("bytes]\nlast words")
    assert len(outcome.error) <= len("exit 1: ") + 2000
