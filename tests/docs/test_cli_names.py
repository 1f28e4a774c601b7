"""docs/cli.md against the parser and the one table of names (interfaces/names.py): every option a command shows
is named in its row of the command table, no former name is, and the "Names and aliases" table is the one
the table of aliases gives, so neither page nor parser can drift from the other."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from blackboard.infrastructure.cli.parser import build_parser
from blackboard.infrastructure.cli.runner_options import add_runner_flags
from blackboard.infrastructure.interfaces.names import ALIASES

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
NESTED = ("db", "flow", "projection", "skill")  # commands whose row names an action too (`flow run`)
CLI_COMMAND = {"cancel_all": "cancel"}  # an MCP tool's and a Python call's command, as the CLI spells it
SHOWN_EVERYWHERE = {"-h", "--help", "--json"}  # every command has them; the page says so once


def commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices


def command_parser(words: tuple[str, ...]) -> argparse.ArgumentParser:
    parser = build_parser()
    for word in words:
        parser = commands(parser)[word]
    return parser


def rows() -> dict[tuple[str, ...], str]:
    """The command table's rows, by the command they are about (`watch` has two): their text."""
    section = PAGE.split("## Commands", 1)[1]
    found: dict[tuple[str, ...], str] = {}
    for row in (line for line in section.strip().split("\n\n", 1)[0].splitlines() if line.startswith("| `")):
        head = row.split("|")[1].strip().strip("`").split()
        words = tuple(head[:2] if head[0] in NESTED else head[:1])
        found[words] = found.get(words, "") + row
    return found


def named_in(option: str, text: str) -> bool:
    """The option is named in the text, as itself (`--timeout` is not in `--timeout-s`)."""
    return re.search(re.escape(option) + r"(?![\w-])", text) is not None


def runner_options() -> set[str]:
    """The worker's runner flags, which a row may name by reference ("the runner flags of `worker`")."""
    parser = argparse.ArgumentParser()
    add_runner_flags(parser)
    return {o for a in parser._actions for o in a.option_strings} - SHOWN_EVERYWHERE


@pytest.mark.parametrize("words", sorted(rows()), ids=" ".join)
def test_every_option_a_command_shows_is_named_in_its_row_and_no_former_name_is(words):
    text, parser = rows()[words], command_parser(words)
    by_reference = runner_options() if "runner flags of `worker`" in text else set()
    missing, former = [], []
    for action in parser._actions:
        options = set(action.option_strings) - SHOWN_EVERYWHERE - by_reference
        if action.help is argparse.SUPPRESS:
            former += [o for o in options if named_in(o, text)]
        elif options and not any(named_in(o, text) for o in options):
            missing.append(sorted(options)[-1])

    assert not missing, f"docs/cli.md's row of `{' '.join(words)}` does not name {missing}"
    assert not former, f"docs/cli.md's row of `{' '.join(words)}` names the former {former}"


def aliases_table() -> list[str]:
    """docs/cli.md's table of former names, as interfaces/names.py, ALIASES and the parser make it."""
    parser = build_parser()
    lines = []
    for command, former in ALIASES.items():
        options = {
            action.dest: action.option_strings[0]
            for action in commands(parser)[CLI_COMMAND.get(command, command)]._actions
            if action.option_strings and action.help is not argparse.SUPPRESS
        }
        by_name: dict[str, list[str]] = {}
        for old, new in former.items():
            by_name.setdefault(new, []).append(old)
        for new, olds in by_name.items():
            shown = ", ".join(f"`{old}`" for old in olds)
            lines.append(f"| `{command}` | `{options[new]}`, `{new}` | {shown} |")
    return lines


def test_the_aliases_table_of_the_page_is_the_one_the_table_of_names_gives():
    section = PAGE.split("## Names and aliases", 1)[1].split("\n## ", 1)[0]
    table = [line for line in section.splitlines() if line.startswith("| `")]

    assert table == aliases_table(), "docs/cli.md, Names and aliases, should read:\n" + "\n".join(
        aliases_table()
    )


@pytest.mark.parametrize("command", sorted({CLI_COMMAND.get(c, c) for c in ALIASES}))
def test_help_shows_each_field_by_its_one_name_and_no_former_one(command):
    parser = commands(build_parser())[command]
    shown = parser.format_help()
    hidden = [a for a in parser._actions if a.help is argparse.SUPPRESS and a.option_strings]
    assert all(not named_in(o, shown) for a in hidden for o in a.option_strings), shown
    for action in hidden:  # each former name stands for an option that is shown
        public = [a for a in parser._actions if a.dest == action.dest and a.help is not argparse.SUPPRESS]
        assert public and all(named_in(o, shown) for o in public[0].option_strings), action.option_strings
