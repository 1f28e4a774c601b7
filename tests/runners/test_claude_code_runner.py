"""The claude-code runner through the real worker and the real Claude Code CLI (the pinned version), against
a local stand-in for the Anthropic Messages API: what Claude Code sent (the body as the system prompt, the
file's tools and the board's, the signal as the prompt), the board tools it called through the bound MCP
server (one write inside the key permissions lands, one outside is refused), and the outcome and usage."""

from __future__ import annotations

import time

from tests.runners.claude import BOUND_TOOLS, claude_env, environ, processes
from tests.runners.standins import call, say, slow, stand_in

REVIEWER = """description: Reviews a change for bugs and style.
tools: Read, Grep
model: sonnet
"""
BOARD = "mcp__blackboard__"


def tool_results(request) -> list[dict]:
    return [
        block
        for message in request.body["messages"]
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


def text_of(content) -> str:
    if isinstance(content, str):
        return content
    return "".join(block.get("text", "") for block in content if isinstance(block, dict))


def test_claude_code_runs_the_agent_file_with_the_board_attached_and_bound_to_the_claim(board, tmp_path):
    """One run, read from every side: what Claude Code was sent, what its tool calls did, the outcome and
    usage, and (while it waited for its first answer) how the claim token reached the board's server."""
    board.agent("reviewer", REVIEWER, "You are REVIEWER-BODY. Review the change.")
    signal = board.post(
        "reviewer",
        "--prompt",
        "P-TEXT: look at the auth module",
        "--context",
        '{"repo": "acme/api"}',
        "--write-key",
        "notes/*",
        "--read-key",
        "notes/*",
        topic="review the auth change",
    )
    script = [
        call(BOARD + "blackboard_write", {"key": "notes/review", "value": "two bugs"}),
        call(BOARD + "blackboard_write", {"key": "secret/x", "value": "outside"}),
        call("Bash", {"command": "touch pwned", "description": "not in the file's tools"}),
        call(BOARD + "blackboard_complete", {"signal_id": signal["signal_id"]}),
        say("REVIEW DONE: two bugs found"),
    ]
    seen: dict[str, object] = {}

    def answer(body):
        """The script's turns in order; before the first, while Claude Code waits for it: every command line,
        and the board server's environment."""
        if not seen:
            table = processes()
            server = next(
                pid
                for pid, (line, _, _) in table.items()
                if f"mcp --agent reviewer --signal {signal['signal_id']}" in line
            )
            seen["token"] = environ(server)["BLACKBOARD_CLAIM_TOKEN"]
            seen["command_lines"] = [line for line, _, _ in table.values()]
        return script.pop(0) if script else say("(the script is spent)")

    with stand_in(answer) as api:
        board.cli("worker", "--agent", "reviewer", "--once", env=claude_env(api.url, tmp_path)).expect(0)

    # the claim token reaches the board server through its environment and no command line
    assert len(str(seen["token"])) >= 32 and "/" not in str(
        seen["token"]
    )  # the claim's own, not the worker id
    assert not [line for line in seen["command_lines"] if str(seen["token"]) in line]
    first, *_, last = api.model_calls
    system = text_of(first.body["system"])
    assert "You are REVIEWER-BODY. Review the change." in system
    assert first.body["model"] == "claude-sonnet-5-5"
    tools = {t["name"] for t in first.body["tools"]}
    assert tools == {"Read", "Grep"} | {BOARD + name for name in BOUND_TOOLS}
    prompt = text_of(first.body["messages"][0]["content"])
    assert "review the auth change" in prompt and "P-TEXT: look at the auth module" in prompt
    assert '"repo": "acme/api"' in prompt and "notes/*" in prompt
    inside, outside, bash, complete = tool_results(last)
    assert not inside.get("is_error") and outside["is_error"] and bash["is_error"] and complete["is_error"]
    assert "secret/x is not in its write keys" in text_of(outside["content"])
    assert "No such tool available: Bash" in text_of(bash["content"])
    assert f"No such tool available: {BOARD}blackboard_complete" in text_of(complete["content"])
    assert not (board.workdir / "pwned").exists()

    done = board.show(signal["signal_id"])
    assert (done["status"], done["result"]["knowledge_items"]) == (
        "COMPLETED",
        ["REVIEW DONE: two bugs found"],
    )
    entries = board.entries()
    assert entries["notes/review"]["value"] == "two bugs" and entries["notes/review"]["author"] == "reviewer"
    assert entries["notes/review"]["signal_id"] == signal["signal_id"] and "secret/x" not in entries
    usage = done["usage"]
    assert (usage["runner"], usage["model"], usage["turns"]) == ("claude-code", "claude-sonnet-5-5", 5)
    assert (usage["input_tokens"], usage["output_tokens"]) == (500, 100)  # the stand-in's 100 and 20 a turn
    assert usage["cost_usd"] > 0 and usage["session_id"]
    transcript = board.transcript(done)
    assert transcript[-1]["type"] == "result" and transcript[-1]["result"] == "REVIEW DONE: two bugs found"
    assert any(line["type"] == "system" and line.get("subtype") == "init" for line in transcript)
    shown = board.cli("show", signal["signal_id"], "--transcript").expect(0).stdout
    assert "  system init: model claude-sonnet-5-5" in shown
    assert (
        'assistant: calls mcp__blackboard__blackboard_write({"key": "notes/review", "value": "two bugs"})'
        in shown
    )
    assert "  result success: 5 turn(s)" in shown and shown.rstrip().endswith("REVIEW DONE: two bugs found")


def test_a_headless_run_refuses_what_is_not_allowed_unless_the_worker_widens_it_in_its_workdir(
    board, tmp_path
):
    """Two runs: the first with Claude Code's defaults (a read needs no permission, Bash is refused); the
    second widened by the worker (--allow-tool), in the worker's workdir (--workdir: a relative read and
    Bash's file land there), with a slow first answer that outlasts the claim timeout while the worker keeps
    renewing the lease."""
    board.agent("helper", "description: Helps.\n", "Help.")  # no tools: Claude Code's default set
    first = board.post("helper", topic="first")
    (board.workdir / "notes.txt").write_text("NOTES-TEXT")
    script = [
        call("Read", {"file_path": str(board.workdir / "notes.txt")}),
        call("Bash", {"command": "touch made-by-bash", "description": "write a file"}),
        say("first done"),
    ]
    with stand_in(script) as api:
        board.cli("worker", "--agent", "helper", "--once", env=claude_env(api.url, tmp_path)).expect(0)

    read, bash = tool_results(api.model_calls[-1])
    assert "NOTES-TEXT" in text_of(read["content"])  # read-only tools need no permission
    assert "Permission to use Bash has been denied" in text_of(bash["content"])
    assert not (board.workdir / "made-by-bash").exists()
    assert board.show(first["signal_id"])["status"] == "COMPLETED"

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "only-here.txt").write_text("FOUND-IN-WORKDIR")
    second = board.post("helper", topic="second")
    script = [
        slow(4, call("Read", {"file_path": "only-here.txt"})),
        call("Bash", {"command": "touch made-by-bash", "description": "write a file"}),
        say("second done"),
    ]
    with stand_in(script) as api:
        env = {**claude_env(api.url, tmp_path), "BLACKBOARD_CLAIM_TIMEOUT": "3"}  # renewed every 1 s
        widened = ("--allow-tool", "Bash(touch *)", "--workdir", str(elsewhere))
        started = time.monotonic()
        board.cli("worker", "--agent", "helper", "--once", *widened, env=env).expect(0)
        assert time.monotonic() - started > 4

    read, bash = tool_results(api.model_calls[-1])
    assert "FOUND-IN-WORKDIR" in text_of(read["content"]) and not bash.get("is_error"), bash
    assert (elsewhere / "made-by-bash").exists() and not (board.workdir / "made-by-bash").exists()
    done = board.show(second["signal_id"])
    assert done["status"] == "COMPLETED" and done["lease_renewed_at"] is not None
    # the transcript goes to the worker's artifacts folder (./artifacts where it was started), not the workdir
    assert done["usage"]["transcript_path"] == str(
        board.workdir / "artifacts" / "transcripts" / f"{second['signal_id']}.jsonl"
    )
