"""The runners' parts that need no process: which runner can start, prices, the prompt, Claude Code's
arguments and files, the model a run uses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from blackboard.application.runners import AgentBrief, Permissions, RunLimits, RunRequest
from blackboard.domain.errors import InvalidInput
from blackboard.infrastructure.runners import catalog
from blackboard.infrastructure.runners.api_loop import model_for
from blackboard.infrastructure.runners.claude_code import arguments, environment
from blackboard.infrastructure.runners.prompt import HOW_TO_ANSWER, build_prompt
from blackboard.infrastructure.runners.usage import ANTHROPIC_ALIASES, Tally, price_of


def request(tmp_path: Path, **changes) -> RunRequest:
    fields = {
        "agent": AgentBrief(
            name="code-reviewer",
            description="Reviews.",
            instructions="You review.",
            tools=("Read", "Bash(git *)"),
            model="sonnet",
            settings={"color": "blue", "permissionMode": "acceptEdits"},
        ),
        "signal_id": "sig-0000000a",
        "blackboard_id": "ps-1",
        "prompt": "do it",
        "token": "code-reviewer/secret-token",
        "limits": RunLimits(timeout=60, max_turns=7, max_budget_usd=0.25),
        "workdir": str(tmp_path),
        "transcript_path": str(tmp_path / "t.jsonl"),
        "board_env": {"BLACKBOARD_DB": "sqlite:////x.db"},
    }
    return RunRequest(**{**fields, **changes})


def test_claude_code_is_found_where_blackboard_claude_says_or_missing_with_how_to_get_it(tmp_path):
    claude = tmp_path / "claude"
    claude.write_text("#!/bin/sh\n")
    claude.chmod(0o755)

    assert catalog.missing("claude-code", {"BLACKBOARD_CLAUDE": str(claude), "PATH": ""}) is None
    named = catalog.missing("claude-code", {"BLACKBOARD_CLAUDE": str(tmp_path / "nope"), "PATH": ""})
    assert named is not None and "BLACKBOARD_CLAUDE=" in named and "is not an executable" in named
    unnamed = catalog.missing("claude-code", {"PATH": str(tmp_path / "empty")})
    assert unnamed is not None and "npm install -g @anthropic-ai/claude-code" in unnamed
    assert catalog.missing("anthropic", {}) is None  # installed with the dev extra
    assert (
        catalog.missing("gemini", {})
        == "there is no runner 'gemini'; the runners are claude-code, anthropic, openai"
    )


def test_the_longest_price_prefix_wins_and_blackboard_prices_adds_models():
    assert price_of("gpt-4o-mini-2024-07-18", {}).input == 0.15
    assert price_of("gpt-4o-2024-08-06", {}).input == 2.5
    assert price_of("claude-sonnet-4-5-20250929", {}).output == 15
    assert price_of(ANTHROPIC_ALIASES["sonnet"], {}).input == 2
    assert price_of("my-model", {}) is None
    assert price_of("my-model", {"BLACKBOARD_PRICES": '{"my-model": [1, 2]}'}).output == 2
    with pytest.raises(InvalidInput, match="BLACKBOARD_PRICES: must be a JSON object of model"):
        price_of("x", {"BLACKBOARD_PRICES": "[1, 2]"})


def test_a_tally_prices_cache_writes_and_reads_at_their_own_rates():
    tally = Tally("anthropic", "claude-sonnet-4-5")
    assert tally.priced({})

    tally.add(1_000_000, 100_000, cache_write=1_000_000, cache_read=1_000_000)

    assert tally.input_tokens == 3_000_000 and tally.turns == 1
    assert tally.cost_usd == pytest.approx(3 + 1.5 + 3.75 + 0.3)


def test_the_prompt_holds_the_signal_its_upstreams_results_its_keys_and_how_to_answer():
    upstream = {
        "signal_id": "sig-0000000b",
        "signal_type": "RESEARCH",
        "status": "COMPLETED",
        "claimed_by": "ps-researcher",
        "payload": {"topic": "prior work"},
        "result": {"artifact_path": "/a/findings.md", "knowledge_items": ["HNSW wins"], "error": None},
    }
    document = {
        "signal_id": "sig-0000000a",
        "blackboard_id": "ps-1",
        "signal_type": "ANALYSIS",
        "posted_by": "ps-lead",
        "payload": {
            "ps_id": "ps-1",
            "entry_id": "e-2",
            "topic": "compare indexes",
            "prompt": "weigh recall against memory",
            "context": {"budget": "small", "upstream": {"sig-0000000b": upstream}},
        },
        "read_keys": ["notes/*"],
        "write_keys": ["analysis"],
    }

    prompt = build_prompt(document)

    assert "Topic: compare indexes" in prompt and "Instructions:\nweigh recall against memory" in prompt
    assert '"budget": "small"' in prompt and "upstream" not in prompt.split("Results of")[0]
    assert "- sig-0000000b (RESEARCH, 'prior work'), completed by ps-researcher" in prompt
    assert "  artifact: /a/findings.md" in prompt and "  knowledge: HNSW wins" in prompt
    assert "You may read the entry keys notes/* and write analysis" in prompt
    assert prompt.endswith(HOW_TO_ANSWER)


def test_claude_code_gets_the_file_as_an_agent_the_board_as_its_only_server_and_no_token_in_its_arguments(
    tmp_path, monkeypatch
):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-x")
    made = request(tmp_path)

    argv = arguments(made, tmp_path)

    assert not [a for a in argv if "secret-token" in a]
    assert environment(made)["BLACKBOARD_CLAIM_TOKEN"] == "code-reviewer/secret-token"
    assert argv[:2] == ["-p", "--bare"] and "--strict-mcp-config" in argv
    assert argv[argv.index("--agent") : argv.index("--agent") + 2] == ["--agent", "code-reviewer"]
    assert {"--max-turns=7", "--max-budget-usd=0.25", "--permission-mode=acceptEdits"} <= set(argv)
    agent = json.loads((tmp_path / "agents.json").read_text())["code-reviewer"]
    assert agent == {
        "color": "blue",
        "permissionMode": "acceptEdits",
        "description": "Reviews.",
        "prompt": "You review.",
        "tools": ["Read", "Bash(git *)", "mcp__blackboard"],
        "model": "sonnet",
    }
    server = json.loads((tmp_path / "mcp.json").read_text())["mcpServers"]["blackboard"]
    assert server["args"][-5:] == ["mcp", "--agent", "code-reviewer", "--signal", "sig-0000000a"]
    assert "env" not in server  # the token comes through the process's environment only
    settings = json.loads((tmp_path / "settings.json").read_text())
    assert settings == {
        "permissions": {"allow": ["Read", "Bash(git *)", "mcp__blackboard"], "defaultMode": "acceptEdits"}
    }


def test_a_run_with_no_signal_solve_s_controller_gets_no_board_server_and_no_board_tools(tmp_path):
    argv = arguments(request(tmp_path, signal_id="", token=""), tmp_path)

    assert "--strict-mcp-config" in argv  # and no server at all: nothing of the machine's either
    assert json.loads((tmp_path / "mcp.json").read_text()) == {"mcpServers": {}}
    assert json.loads((tmp_path / "agents.json").read_text())["code-reviewer"]["tools"] == [
        "Read",
        "Bash(git *)",
    ]
    assert json.loads((tmp_path / "settings.json").read_text())["permissions"]["allow"] == [
        "Read",
        "Bash(git *)",
    ]


def test_without_an_api_key_claude_code_runs_as_its_signed_in_user_and_the_worker_widens_permissions(
    tmp_path, monkeypatch
):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    brief = AgentBrief(name="helper", description="", instructions="Help.", model="inherit")
    made = request(
        tmp_path,
        agent=brief,
        model="opus",
        limits=RunLimits(timeout=60),
        permissions=Permissions("dontAsk", ("Bash(npm test)",)),
    )

    argv = arguments(made, tmp_path)

    assert "--bare" not in argv and "--model=opus" in argv and not [a for a in argv if a.startswith("--max")]
    agent = json.loads((tmp_path / "agents.json").read_text())["helper"]
    assert "tools" not in agent and "model" not in agent and agent["description"] == "helper"
    settings = json.loads((tmp_path / "settings.json").read_text())["permissions"]
    assert settings == {"allow": ["Bash(npm test)", "mcp__blackboard"], "defaultMode": "dontAsk"}


def test_the_model_is_the_file_s_unless_inherit_else_the_worker_s_with_aliases_for_anthropic(tmp_path):
    def brief(model):
        return AgentBrief(name="a", description="", instructions="", model=model)

    assert model_for(request(tmp_path, agent=brief("opus")), ANTHROPIC_ALIASES) == "claude-opus-5-5"
    assert (
        model_for(request(tmp_path, agent=brief("inherit"), model="haiku"), ANTHROPIC_ALIASES)
        == "claude-haiku-5-5"
    )
    assert model_for(request(tmp_path, agent=brief(None))) is None
    assert model_for(request(tmp_path, agent=brief("sonnet"), model="gpt-4o")) == "gpt-4o"  # openai: no alias
    assert model_for(request(tmp_path, agent=brief("gpt-4.1"), model="gpt-4o")) == "gpt-4.1"
