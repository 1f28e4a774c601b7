"""`blackboard skill install` through the real CLI: the skill the package ships lands in a project's
.claude/skills/blackboard/SKILL.md (the same bytes as docs/skill/SKILL.md), the board's server in its
.mcp.json with `--mcp` (its other servers kept); a differing file is refused, exit 3, nothing written,
unless --force; a missing project folder or a broken .mcp.json is exit 2."""

from __future__ import annotations

import json

from tests.docs.examples import ROOT

SOURCE = (ROOT / "docs" / "skill" / "SKILL.md").read_text(encoding="utf-8")
SKILL = (".claude", "skills", "blackboard", "SKILL.md")


def test_the_skill_lands_in_the_project_and_a_second_install_changes_nothing(cli, tmp_path):
    project = tmp_path / "project"
    project.mkdir()

    first = cli.ok("skill", "install", "--dir", str(project))
    installed = project.joinpath(*SKILL)
    assert installed.read_text(encoding="utf-8") == SOURCE
    assert first == {"skill": str(installed), "mcp": None, "written": [str(installed)], "unchanged": []}
    assert not (project / ".mcp.json").exists()

    again = cli("skill", "install", "--dir", str(project)).expect(0)
    assert f"unchanged {installed}" in again.stdout


def test_the_current_folder_is_the_default_project(cli, tmp_path):
    cli("skill", "install").expect(0)
    assert tmp_path.joinpath(*SKILL).read_text(encoding="utf-8") == SOURCE


def test_a_skill_that_differs_is_refused_unless_forced(cli, tmp_path):
    installed = tmp_path.joinpath(*SKILL)
    installed.parent.mkdir(parents=True)
    installed.write_text("my own notes\n", encoding="utf-8")

    refused = cli("skill", "install", "--mcp").expect(3)
    assert f"{installed} exists and differs" in refused.stderr and "--force" in refused.stderr
    assert installed.read_text(encoding="utf-8") == "my own notes\n"
    assert not (tmp_path / ".mcp.json").exists()  # nothing written: the check comes before any write

    cli("skill", "install", "--force").expect(0)
    assert installed.read_text(encoding="utf-8") == SOURCE


def test_mcp_adds_the_board_s_server_beside_the_others_with_absolute_paths(cli, tmp_path):
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"other": {"command": "x"}}, "note": 1}))

    cli("skill", "install", "--mcp").expect(0)

    written = json.loads((tmp_path / ".mcp.json").read_text(encoding="utf-8"))
    assert written["note"] == 1 and written["mcpServers"]["other"] == {"command": "x"}
    assert written["mcpServers"]["blackboard"] == cli.ok("mcp", "--print-config")["mcpServers"]["blackboard"]
    server = written["mcpServers"]["blackboard"]
    assert server["command"].startswith("/") and server["args"][-1] == "mcp"
    assert server["args"][:2] == ["--db", cli.db_url]  # already absolute: the test's own file


def test_a_differing_board_server_is_refused_unless_forced_and_the_others_stay(cli, tmp_path):
    mine = {"mcpServers": {"blackboard": {"command": "old"}, "other": {"command": "x"}}}
    (tmp_path / ".mcp.json").write_text(json.dumps(mine))

    refused = cli("skill", "install", "--mcp").expect(3)
    assert "already has a `blackboard` server" in refused.stderr and "--force" in refused.stderr
    assert json.loads((tmp_path / ".mcp.json").read_text()) == mine
    assert not tmp_path.joinpath(*SKILL).exists()

    cli("skill", "install", "--mcp", "--force").expect(0)
    servers = json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]
    assert servers["other"] == {"command": "x"} and servers["blackboard"]["command"] != "old"


def test_bad_input_is_exit_2_naming_what_to_fix(cli, tmp_path):
    missing = cli("skill", "install", "--dir", str(tmp_path / "nowhere")).expect(2)
    assert "--dir: must be an existing folder" in missing.stderr

    (tmp_path / ".mcp.json").write_text("{ not json")
    broken = cli("skill", "install", "--mcp").expect(2)
    assert f"{tmp_path / '.mcp.json'}: must be a JSON object" in broken.stderr
    assert not tmp_path.joinpath(*SKILL).exists()


def test_mcp_for_another_folder_points_at_that_project_s_board_and_agents_unless_they_were_given(
    cli, tmp_path
):
    project = tmp_path / "my-project"
    (project / ".claude" / "agents").mkdir(parents=True)  # a Claude Code project: no ./agents
    unset = {"BLACKBOARD_DB": "", "BLACKBOARD_AGENTS_DIR": ""}

    cli("skill", "install", "--dir", str(project), "--mcp", env=unset).expect(0)

    args = json.loads((project / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]["blackboard"]["args"]
    assert args[:4] == [
        "--db",
        f"sqlite:///{project / '.blackboard' / 'blackboard.db'}",
        "--agents-dir",
        str(project / ".claude" / "agents"),
    ]

    given = tmp_path / "elsewhere"
    given.mkdir()
    cli(
        "--db", f"sqlite:///{given / 'b.db'}", "skill", "install", "--dir", str(given), "--mcp", env=unset
    ).expect(0)
    args = json.loads((given / ".mcp.json").read_text(encoding="utf-8"))["mcpServers"]["blackboard"]["args"]
    assert args[:4] == ["--db", f"sqlite:///{given / 'b.db'}", "--agents-dir", str(given / "agents")]
