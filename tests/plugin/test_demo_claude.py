"""`make demo-claude` (src/infrastructure/demo/claude.py) against a local stand-in for the Messages API: the
three public agent files run in turn through the real `claude-code` runner and the pinned Claude Code, each
with its own body as the system prompt and the result of the step before in its prompt, and the demo prints
each result and what each run cost. Without ANTHROPIC_API_KEY and with no signed-in Claude Code it stops at
once, exit 2, naming what to set, and nothing is made. No real model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.runners.claude import claude_env
from tests.runners.standins import say, stand_in
from tests.tools import claude_executable

DEMO = [sys.executable, "-m", "blackboard.infrastructure.demo.claude"]
BODIES = {  # a line of each public file's body, and what the stand-in answers as that agent
    "You are a senior competitive analyst": "ANALYST SAYS: RQ is simplest, Celery most complete.",
    "You are a senior technical writer": "WRITER SAYS: pick RQ; step one, add Redis.",
    "You are a senior code reviewer": "REVIEWER SAYS: mention retries; verdict: ship it.",
}


CONTROLLER = "You are the controller of a blackboard"  # `solve`'s packaged controller.md, where it exists
SOLVED = {"action": "solved", "answer": "SOLVE SAYS: use RQ.", "reason": "the research and the review agree"}


def answer(body: dict[str, Any]):
    system = json.dumps(body.get("system", ""))
    if CONTROLLER in system:
        return say(json.dumps(SOLVED))
    return next(
        (say(text) for line, text in BODIES.items() if line in system), say("NOT AN AGENT OF THE DEMO")
    )


def prompt_of(body: dict[str, Any]) -> str:
    content = body["messages"][0]["content"]
    return content if isinstance(content, str) else "".join(b.get("text", "") for b in content)


def plain_env(extra: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BLACKBOARD_", "ANTHROPIC_"))}
    return {**env, **extra}


def test_the_three_agents_run_in_turn_each_on_the_result_before_and_the_demo_prints_results_and_usage(
    tmp_path,
):
    with stand_in(answer) as api:
        env = plain_env(claude_env(api.url, tmp_path / "home"))
        done = subprocess.run(DEMO, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)

    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    out = done.stdout
    for agent in ("competitive-analyst", "technical-writer", "code-reviewer"):
        assert f"COMPLETED by {agent}: " in out, out
    for text in BODIES.values():
        assert f"   | {text}" in out
    assert "1 turn(s), 100 tokens in, 20 out" in out  # the stand-in's usage, as recorded
    assert "runner usage" in out and "ps-demo-claude   code-reviewer" in out
    # `solve` runs when this version has it (its controller answers at once), else the demo says it skipped it
    assert "5. `blackboard solve` (the controller) is not in this version: skipped." in out or (
        "5. `blackboard solve`: a controller agent picks" in out and "SOLVE SAYS: use RQ." in out
    )

    calls = [c.body for c in api.model_calls]
    by_agent = {line: [b for b in calls if line in json.dumps(b.get("system", ""))] for line in BODIES}
    assert all(len(bodies) == 1 for bodies in by_agent.values()), {k: len(v) for k, v in by_agent.items()}
    analyst, writer, reviewer = (by_agent[line][0] for line in BODIES)
    assert "Compare Celery, RQ and Dramatiq" in prompt_of(analyst)
    assert "ANALYST SAYS" in prompt_of(writer) and "WRITER SAYS" in prompt_of(reviewer)
    assert "ANALYST SAYS" not in prompt_of(reviewer)  # each step gets the one it waited for
    assert (tmp_path / ".blackboard" / "demo-claude" / "board.db").is_file()


def test_without_a_key_or_a_signed_in_claude_code_it_stops_at_once_naming_what_to_set(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    with stand_in([say("must not be asked")]) as api:
        env = plain_env(
            {"HOME": str(home), "BLACKBOARD_CLAUDE": claude_executable(), "ANTHROPIC_BASE_URL": api.url}
        )
        done = subprocess.run(DEMO, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)

    assert done.returncode == 2, done.stdout + done.stderr
    assert (
        done.stderr.startswith("make demo-claude: set ANTHROPIC_API_KEY")
        and "claude auth login" in done.stderr
    )
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert api.model_calls == [] and not (tmp_path / ".blackboard").exists()


def test_without_claude_code_either_it_names_both(tmp_path):
    env = plain_env({"HOME": str(tmp_path), "BLACKBOARD_CLAUDE": str(tmp_path / "no-claude-here")})
    done = subprocess.run(DEMO, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)

    assert done.returncode == 2 and "set ANTHROPIC_API_KEY" in done.stderr
    assert "It also needs Claude Code's `claude`: run `make tools`" in done.stderr
    assert not (tmp_path / ".blackboard").exists()


def test_make_demo_claude_runs_the_module_and_make_demo_is_unchanged():
    makefile = (Path(__file__).resolve().parents[2] / "Makefile").read_text(encoding="utf-8")
    assert "demo-claude: $(STAMP)\n\t$(BIN)/python -m blackboard.infrastructure.demo.claude\n" in makefile
    assert "demo: $(STAMP)\n\t$(BIN)/python -m blackboard.infrastructure.demo.board\n" in makefile
