"""`blackboard skill install`: the skill the package ships (package data, the copy of docs/skill/SKILL.md)
written into a project's `.claude/skills/blackboard/SKILL.md`, where Claude Code finds a project's skills;
with `--mcp`, the board's MCP server added to the project's `.mcp.json` as `mcp --print-config` prints it,
with the database and agents folders this command was given (relative ones taken from the current folder,
as every command takes them), or, where none was given (flag or variable), the project's own defaults: its
`.blackboard/blackboard.db` and its `agents` folder (its `.claude/agents` when it has that and no `agents`),
so that the server a client starts in the project finds the project's board.

Everything is checked before anything is written: a file already there with other content is refused
(exit 3, naming it and --force) unless --force; one with the same content is left as it is.
"""

from __future__ import annotations

import argparse
import json
import os
from importlib import resources
from pathlib import Path
from typing import Any

from dependency_injector.wiring import Provide, inject

from blackboard.domain.errors import InvalidInput, RuleViolation
from blackboard.infrastructure.cli.render import Output
from blackboard.infrastructure.composition.container import Container
from blackboard.infrastructure.composition.settings import BlackboardSettings

SKILL_PATH = Path(".claude") / "skills" / "blackboard" / "SKILL.md"
MCP_PATH = Path(".mcp.json")
SERVER = "blackboard"


def shipped_skill() -> str:
    """The SKILL.md inside the installed package."""
    return (resources.files("blackboard.infrastructure") / "skill" / "SKILL.md").read_text("utf-8")


@inject
def skill_install(args: argparse.Namespace, config: BlackboardSettings = Provide[Container.config]) -> Output:
    project = Path(args.dir).expanduser()
    if not project.is_dir():
        raise InvalidInput("--dir", f"must be an existing folder (the project), got {args.dir!r}")
    project = project.resolve()
    skill = project / SKILL_PATH
    for path in (skill, project / MCP_PATH):  # every check before the first write
        if path.exists() and not path.is_file():
            raise InvalidInput("--dir", f"{path} exists and is not a file: move it away")
    text = shipped_skill()
    if skill.is_file() and _text(skill) != text and not args.force:
        raise RuleViolation(
            f"{skill} exists and differs from the skill this version ships; nothing was written "
            "(--force replaces it)"
        )
    planned = [(skill, text)]
    if args.mcp:  # its other servers are kept: only a differing `blackboard` server needs --force
        board = _projects(config, project, given_db=args.db, given_agents=args.agents_dir)
        planned.append((project / MCP_PATH, _mcp_file(project / MCP_PATH, board, args.force)))
    written, unchanged = [], []
    for path, text in planned:
        if path.is_file() and _text(path) == text:
            unchanged.append(str(path))
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(str(path))
    lines = [f"wrote {p}" for p in written] + [
        f"unchanged {p} (already as this version writes it)" for p in unchanged
    ]
    data = {
        "skill": str(project / SKILL_PATH),
        "mcp": str(project / MCP_PATH) if args.mcp else None,
        "written": written,
        "unchanged": unchanged,
    }
    return Output(data, "\n".join(lines))


def _projects(
    config: BlackboardSettings, project: Path, given_db: str | None, given_agents: list[str] | None
) -> BlackboardSettings:
    """The settings the project's server should start with: what was given (a flag or a variable) as it
    is, and for what was not, the default folders and database of `project` instead of the current folder."""
    from dataclasses import replace

    from blackboard.infrastructure.persistence import DEFAULT_URL

    changes: dict[str, str] = {}
    if given_db is None and not os.environ.get("BLACKBOARD_DB"):
        changes["db"] = f"sqlite:///{project / DEFAULT_URL.removeprefix('sqlite:///')}"
    if not given_agents and not os.environ.get("BLACKBOARD_AGENTS_DIR"):
        default, claude = project / "agents", project / ".claude" / "agents"
        changes["agents_dir"] = str(claude if not default.exists() and claude.is_dir() else default)
    return replace(config, **changes)


def _text(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def _mcp_file(path: Path, config: BlackboardSettings, force: bool) -> str:
    """The project's .mcp.json with the board's server in it: its other servers kept; a `blackboard`
    server that differs is replaced only with --force (the caller refuses the file otherwise)."""
    from blackboard.infrastructure.cli.mcp_command import client_config

    entry = client_config(config, None, None)["mcpServers"][SERVER]
    existing: dict[str, Any] = {}
    if path.is_file():
        try:
            existing = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise InvalidInput(
                str(path), f"must be a JSON object (it is not valid JSON: {error}); fix it or move it away"
            ) from None
        if not isinstance(existing, dict) or not isinstance(existing.get("mcpServers", {}), dict):
            raise InvalidInput(
                str(path), "must be a JSON object whose mcpServers is an object; fix it or move it away"
            )
    servers = dict(existing.get("mcpServers", {}))
    if servers.get(SERVER) not in (None, entry) and not force:
        raise RuleViolation(
            f"{path} already has a `{SERVER}` server that differs from what `skill install --mcp` writes; "
            "nothing was written (--force replaces that server, the others are kept)"
        )
    servers[SERVER] = entry
    return json.dumps({**existing, "mcpServers": servers}, indent=2) + "\n"
