"""The Claude Code plugin (plugin/) and its marketplace (.claude-plugin/marketplace.json) as files: the skill
is docs/skill/SKILL.md's bytes wherever it ships (`make skill` copies it; tools/skill.py), the agents are
public agent files copied byte for byte with their provenance, and the MCP server runs `blackboard mcp`."""

from __future__ import annotations

import importlib.util
import json

import frontmatter

from tests.docs.examples import ROOT

PLUGIN = ROOT / "plugin"
FIXTURES = ROOT / "tests" / "fixtures" / "matching"


def test_the_skill_ships_as_the_same_bytes_in_the_package_and_the_plugin():
    spec = importlib.util.spec_from_file_location("skill_tool", ROOT / "tools" / "skill.py")
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)

    assert tool.COPIES == (
        ROOT / "src" / "infrastructure" / "skill" / "SKILL.md",
        PLUGIN / "skills" / "blackboard" / "SKILL.md",
    )
    assert tool.stale() == [], "a copy of docs/skill/SKILL.md differs from it: run `make skill`"


def test_the_plugin_s_agents_are_public_files_copied_byte_for_byte_with_their_provenance():
    rows = [
        line.split("\t")
        for line in (PLUGIN / "agents" / "PROVENANCE").read_text(encoding="utf-8").splitlines()
        if line and not line.startswith("#")
    ]
    agents = sorted(p.name for p in (PLUGIN / "agents").glob("*.md"))
    assert len(agents) >= 3 and sorted(r[0] for r in rows if r[0].endswith(".md")) == agents
    fixture_rows = {
        line.split("\t")[0]: line.split("\t")[1:]
        for line in (FIXTURES / "PROVENANCE").read_text(encoding="utf-8").splitlines()
        if line and not line.startswith("#")
    }
    for name, *origin in rows:
        copied = FIXTURES / "agents" / "voltagent" / name
        assert (PLUGIN / "agents" / name).read_bytes() == copied.read_bytes(), name
        assert fixture_rows[f"agents/voltagent/{name}"] == origin, name
    for name in agents:
        meta = frontmatter.loads((PLUGIN / "agents" / name).read_text(encoding="utf-8")).metadata
        assert meta["name"] == name.removesuffix(".md") and meta["description"]


def test_the_manifests_name_one_plugin_that_serves_blackboard_mcp():
    manifest = json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text(encoding="utf-8"))
    market = json.loads((ROOT / ".claude-plugin" / "marketplace.json").read_text(encoding="utf-8"))
    servers = json.loads((PLUGIN / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]

    assert manifest["name"] == "blackboard"
    assert [(p["name"], p["source"]) for p in market["plugins"]] == [("blackboard", "./plugin")]
    assert servers == {"blackboard": {"command": "blackboard", "args": ["mcp"]}}
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert f'version = "{manifest["version"]}"' in pyproject  # the plugin's version is the package's
