"""A runner's run is its agent (docs/permissions.md), driven through a real worker against the local stand-ins: the
real pinned Claude Code's shell cannot decide a gate with the `blackboard` command, with its variables or without
them; the model API runners' bound tools refuse a person's tools in the table's words. No test calls a real model.
"""

from __future__ import annotations

from tests.e2e.conftest import BLACKBOARD
from tests.runners.claude import claude_env
from tests.runners.standins import call, say, stand_in
from tests.runners.test_api_runners import anthropic_env
from tests.runners.test_claude_code_runner import text_of, tool_results

DROPPED = "env -u BLACKBOARD_AGENT -u BLACKBOARD_SIGNAL_ID -u BLACKBOARD_CLAIM_TOKEN -u BLACKBOARD_BOARD"


def test_a_claude_code_run_s_shell_may_not_approve_a_gate_with_its_variables_or_without(board, tmp_path):
    board.agent("shell", "description: Has a shell.\ntools: Bash\n", "Use the shell.")
    gate = board.cli.post("--gate", type="DECISION", ps="ps-1", entry="e-1", topic="ship it?")["signal_id"]
    board.cli.post(type="REVIEW", ps="ps-paused", entry="e-1")
    board.cli.ok("budget", "ps-paused", "--usd", "0", "--by", "alice")
    work = board.post("shell", topic="try to ship")["signal_id"]
    approve = f"{BLACKBOARD} approve {gate} --by me; echo exit=$?"
    raise_budget = f"{BLACKBOARD} budget ps-paused --usd 1000; echo exit=$?"
    script = [
        call("Bash", {"command": approve, "description": "approve the gate"}),
        call("Bash", {"command": f"{DROPPED} {approve}", "description": "approve it without the variables"}),
        call("Bash", {"command": f"{DROPPED} {raise_budget}", "description": "raise another board's budget"}),
        say("tried"),
    ]
    with stand_in(script) as api:
        board.cli("worker", "--agent", "shell", "--once", env=claude_env(api.url, tmp_path)).expect(0)

    given, dropped, budget = (text_of(result["content"]) for result in tool_results(api.model_calls[-1]))
    refusal = f"agent shell's run of {work} may not approve a gate: only a person decides"
    assert refusal in given and "exit=3" in given, given
    assert refusal in dropped and "exit=3" in dropped, dropped  # found in its parents' environment
    assert f"agent shell's run of {work} may not set the budget of ps-paused" in budget and "exit=3" in budget
    assert board.show(gate)["status"] == "POSTED"
    assert board.cli.ok("budget", "ps-paused")["usd"] == 0.0
    assert board.show(work)["status"] == "COMPLETED"


def test_an_api_runner_s_bound_tools_refuse_a_person_s_tools_in_the_table_s_words(board):
    board.agent("writer", "runner: anthropic\nmodel: sonnet\n", "Write.")
    gate = board.cli.post("--gate", type="DECISION", ps="ps-1", entry="e-1", topic="ship it?")["signal_id"]
    work = board.post("writer", topic="try to ship")["signal_id"]
    script = [
        call("blackboard_approve", {"signal_id": gate, "by": "me"}),
        call("blackboard_budget", {"usd": 1000}),
        call(
            "blackboard_post_signal",
            {"signal_type": "REVIEW", "ps_id": "ps-1", "entry_id": "e-2", "topic": "t"},
        ),
        say("tried"),
    ]
    with stand_in(script) as api:
        board.cli("worker", "--agent", "writer", "--once", env=anthropic_env(api.url)).expect(0)

    results = [
        block
        for message in api.model_calls[-1].body["messages"]
        if message["role"] == "user"
        for block in message["content"]
        if isinstance(block, dict)
    ]
    approve, budget, posted = results
    session = f"agent writer's session bound to {work}"
    assert (
        approve["is_error"]
        and approve["content"] == f"{session} may not approve a gate: only a person decides"
    )
    assert budget["is_error"] and budget["content"] == (
        f"{session} may not set a board's budget: only a person sets a board's limits"
    )
    assert not posted["is_error"] and '"posted_by": "writer"' in posted["content"]
    assert board.show(gate)["status"] == "POSTED"
    assert board.cli.ok("budget", "ps-1")["usd"] is None
