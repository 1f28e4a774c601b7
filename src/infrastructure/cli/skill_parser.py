"""The grammar of `blackboard skill install`, added to the parser's commands."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any


def add_skill_command(commands: Any, _command: Callable[..., argparse.ArgumentParser]) -> None:
    skill = commands.add_parser(
        "skill", help="the skill that teaches a coding agent to use the board"
    ).add_subparsers(dest="skill_command", required=True, metavar="ACTION")
    install = _command(
        skill,
        "install",
        "install the skill this package ships into a project's .claude/skills/blackboard/SKILL.md "
        "(and, with --mcp, the board's MCP server into its .mcp.json)",
        "blackboard skill install --dir ~/work/my-project --mcp",
        "skill_install",
    )
    install.add_argument(
        "--dir",
        metavar="PROJECT",
        default=".",
        help="the project folder, which must exist (default: the current folder)",
    )
    install.add_argument(
        "--force",
        action="store_true",
        help="replace a SKILL.md, or a `blackboard` server in .mcp.json, that differs from what would be "
        "written (without it: exit 3, nothing written)",
    )
    install.add_argument(
        "--mcp",
        action="store_true",
        help="also add the `blackboard` server to PROJECT/.mcp.json (kept with its other servers) as "
        "`mcp --print-config` prints it: this command's absolute path, the database and agents folders "
        "this command was given as absolute paths (relative ones from the current folder)",
    )
