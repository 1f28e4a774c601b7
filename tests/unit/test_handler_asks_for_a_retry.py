"""A handler asks for a retry (docs/control.md, "Retries"): `{"retry_after": SECONDS}` on standard output or as
an entrypoint's return value, and exit 75, are failures that carry the wait; anything else is as before."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from blackboard.infrastructure.agents.handler import run_handler
from blackboard.infrastructure.agents.outcome import HandlerOutcome, from_stdout, from_value
from blackboard.infrastructure.agents.parsing import read_agent_file


def test_retry_after_on_standard_output_is_a_failure_that_carries_the_wait():
    asked = from_stdout('{"retry_after": 30, "error": "the API said later"}')

    assert asked == HandlerOutcome(
        False, error="handler output: asked for a retry in 30s: the API said later", retry_after=30.0
    )


def test_retry_after_returned_by_an_entrypoint_is_the_same_request():
    assert from_value({"retry_after": 2.5}).retry_after == 2.5
    assert not from_value({"retry_after": 0}).succeeded


@pytest.mark.parametrize("wait", ["30", -1, 86_401, True, None])
def test_a_retry_after_that_is_not_seconds_from_0_to_a_day_is_a_refused_output_without_a_wait(wait):
    refused = from_value({"retry_after": wait})

    assert not refused.succeeded and refused.retry_after is None
    assert "retry_after must be a number of seconds from 0 to 86400" in (refused.error or "")


def test_a_result_without_retry_after_is_read_as_before():
    assert from_stdout('{"knowledge_items": ["a"]}') == HandlerOutcome(True, knowledge_items=("a",))
    assert from_stdout("plain text").succeeded


def _agent(tmp_path: Path, script: str) -> object:
    (tmp_path / "handler.py").write_text(script, encoding="utf-8")
    path = tmp_path / "agent.md"
    path.write_text(
        f"---\nname: a\ncapabilities: {{RESEARCH: 0.9}}\ncommand: {sys.executable} handler.py\n---\nA.\n",
        encoding="utf-8",
    )
    return read_agent_file(path)


def test_exit_75_asks_for_a_retry_after_the_backoff_or_its_own_retry_after(tmp_path):
    document = {"signal_id": "sig-0000000a"}
    plain = run_handler(
        _agent(tmp_path, "import sys; print('busy', file=sys.stderr); sys.exit(75)"), document
    )
    with_wait = run_handler(
        _agent(tmp_path, "import sys; print('{\"retry_after\": 12}'); sys.exit(75)"), document
    )
    other = run_handler(_agent(tmp_path, "import sys; sys.exit(3)"), document)

    assert (plain.succeeded, plain.retry_after, plain.error) == (
        False,
        None,
        "exit 75 (asked for a retry): busy",
    )
    assert (with_wait.succeeded, with_wait.retry_after) == (False, 12.0)
    assert (other.succeeded, other.retry_after) == (False, None)
