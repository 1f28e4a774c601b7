"""The plugin in the real Claude Code CLI (the pinned version `make tools` provisions), against a local
stand-in for the Anthropic Messages API (tests/runners/standins.py; no real model, a dummy key, a temporary
HOME): `claude plugin validate` accepts the plugin and the marketplace, `claude plugin install` installs it
from the marketplace file, and a session started with `--plugin-dir plugin` sends the model the board's
tools, the skill and the agents, and a board tool it calls lands on the board.

What reaches the model depends on the mode (Claude Code 2.1.332):
- without `--bare`, the plugin is whole: its MCP server's 14 tools, named `mcp__plugin_blackboard_blackboard__*`
  (a plugin's server is `plugin:<plugin>:<server>`), the skill in the skill listing, the agents in the
  Agent tool's list. MCP_CONNECTION_NONBLOCKING=false and ENABLE_TOOL_SEARCH=false make the tools part of
  the first request (otherwise they connect in the background and hide behind ToolSearch), and
  MCP_CONNECT_TIMEOUT_MS gives the server more than the default 5 s to start on a loaded machine.
- with `--bare`, the plugin loads but Claude Code starts none of its MCP servers and lists no skills: the skill
  reaches the model when the prompt names it (`/blackboard:blackboard ...`), and the board's tools come with
  `--mcp-config plugin/.mcp.json`, named `mcp__blackboard__*`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.docs.examples import ROOT
from tests.runners.claude import SERVER_TOOLS, claude_env
from tests.runners.standins import call, say, stand_in

PLUGIN = ROOT / "plugin"
SKILL_TEXT = (ROOT / "docs" / "skill" / "SKILL.md").read_text(encoding="utf-8")
SKILL_BODY = SKILL_TEXT.split("---\n", 2)[2].strip().splitlines()[0]  # "# Working through the blackboard"
PLUGIN_SERVER = "mcp__plugin_blackboard_blackboard__"
AGENTS = ("blackboard:code-reviewer", "blackboard:competitive-analyst", "blackboard:technical-writer")
TIMEOUT = 240


def environment(api_url: str, home: Path) -> dict[str, str]:
    """The stand-in's Claude Code, with this venv's `blackboard` first on PATH (the plugin's server runs
    `blackboard mcp`, as an installed package puts it there) and no BLACKBOARD_* of the machine."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BLACKBOARD_")}
    env.update(claude_env(api_url, home))
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.update(MCP_CONNECTION_NONBLOCKING="false", ENABLE_TOOL_SEARCH="false")
    # a server gets 5 s to connect by default: `blackboard mcp` on a loaded machine may take longer
    env.update(MCP_CONNECT_TIMEOUT_MS="60000", MCP_TIMEOUT="60000")
    return env


def claude(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [env["BLACKBOARD_CLAUDE"], *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT
    )


def texts(body: dict[str, Any]) -> str:
    """Every text the request carries: the system prompt and the messages."""
    parts = [json.dumps(body.get("system", ""))]
    for message in body["messages"]:
        content = message["content"]
        for block in content if isinstance(content, list) else [{"text": content}]:
            parts.append(str(block.get("text", "")) + json.dumps(block.get("content", "")))
    return "\n".join(parts)


def test_claude_code_validates_the_plugin_and_the_marketplace_strictly(tmp_path):
    env = environment("http://127.0.0.1:9", tmp_path)  # validation calls no API
    plugin = claude(env, tmp_path, "plugin", "validate", "--strict", "--json", str(PLUGIN))
    market = claude(env, tmp_path, "plugin", "validate", "--strict", "--json", str(ROOT))

    assert plugin.returncode == 0, plugin.stdout + plugin.stderr
    assert market.returncode == 0, market.stdout + market.stderr
    report = json.loads(plugin.stdout)
    assert report["success"] and not report["manifest"]["errors"] and not report["manifest"]["warnings"]
    provides = report["provides"]
    assert [(s["name"], s["target"], s["args"]) for s in provides["mcpServers"]] == [
        ("blackboard", "blackboard", ["mcp"])
    ]
    assert provides["skills"] == ["blackboard:blackboard"] and tuple(sorted(provides["agents"])) == AGENTS
    marketplace = json.loads(market.stdout)
    assert marketplace["success"] and marketplace["manifest"]["type"] == "marketplace"


def test_the_plugin_installs_from_the_repository_s_marketplace(tmp_path):
    env = environment("http://127.0.0.1:9", tmp_path)
    added = claude(env, tmp_path, "plugin", "marketplace", "add", str(ROOT))
    installed = claude(env, tmp_path, "plugin", "install", "blackboard@blackboard")
    assert added.returncode == 0, added.stdout + added.stderr
    assert installed.returncode == 0, installed.stdout + installed.stderr

    listed = json.loads(claude(env, tmp_path, "plugin", "list", "--json").stdout)
    ours = next(p for p in listed if p["id"] == "blackboard@blackboard")
    assert ours["enabled"] and ours["mcpServers"] == {
        "blackboard": {"command": "blackboard", "args": ["mcp"]}
    }
    copy = Path(ours["installPath"])
    assert (copy / "skills" / "blackboard" / "SKILL.md").read_text(encoding="utf-8") == SKILL_TEXT
    assert sorted(p.name for p in (copy / "agents").glob("*.md")) == [
        "code-reviewer.md",
        "competitive-analyst.md",
        "technical-writer.md",
    ]


def test_a_session_with_the_plugin_gets_the_board_s_tools_the_skill_and_the_agents(tmp_path):
    work = tmp_path / "project"
    work.mkdir()
    post = {"signal_type": "RESEARCH", "ps_id": "ps-7", "entry_id": "e-1", "topic": "from the plugin"}
    script = [call(PLUGIN_SERVER + "blackboard_post_signal", post), say("POSTED IT")]
    with stand_in(script) as api:
        env = environment(api.url, tmp_path / "home")
        done = claude(
            env,
            work,
            "-p",
            "--plugin-dir",
            str(PLUGIN),
            f"--allowedTools={PLUGIN_SERVER}blackboard_post_signal",
            "post the research to the board",
        )
    assert done.returncode == 0 and "POSTED IT" in done.stdout, done.stdout + done.stderr

    first = api.model_calls[0].body
    tools = {t["name"] for t in first["tools"]}
    assert {PLUGIN_SERVER + name for name in SERVER_TOOLS} <= tools
    sent = texts(first)
    assert "- blackboard:blackboard: Coordinate work on a problem statement" in sent  # the skill listing
    for agent in AGENTS:
        assert f"- {agent}: " in sent, agent
    # the tool call went through the plugin's server to the board in the project's default database
    board = subprocess.run(
        [str(Path(sys.executable).parent / "blackboard"), "--json", "signals", "--blackboard", "ps-7"],
        cwd=work,
        env={k: v for k, v in os.environ.items() if not k.startswith("BLACKBOARD_")},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert board.returncode == 0, board.stderr
    [signal] = json.loads(board.stdout)
    assert (signal["payload"]["topic"], signal["posted_by"]) == ("from the plugin", "ps-skill")


def test_a_bare_session_loads_the_plugin_s_skill_by_name_and_the_board_through_mcp_config(tmp_path):
    work = tmp_path / "project"
    work.mkdir()
    with stand_in([say("READ THE SKILL")]) as api:
        env = environment(api.url, tmp_path / "home")
        done = claude(
            env,
            work,
            "-p",
            "--bare",
            "--plugin-dir",
            str(PLUGIN),
            f"--mcp-config={PLUGIN / '.mcp.json'}",
            "/blackboard:blackboard hand the storage research to a specialist",
        )
    assert done.returncode == 0 and "READ THE SKILL" in done.stdout, done.stdout + done.stderr

    first = api.model_calls[0].body
    assert {"mcp__blackboard__" + name for name in SERVER_TOOLS} <= {t["name"] for t in first["tools"]}
    sent = texts(first)
    assert SKILL_BODY == "# Working through the blackboard" and SKILL_BODY in sent
    assert "hand the storage research to a specialist" in sent
