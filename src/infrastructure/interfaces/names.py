"""One public name per field: what the CLI, the MCP tools and the Python API call a command's field, and the
former names they still accept (docs/cli.md, "Names and aliases").

A field's public name is its command model's field name (`timeout_s`, `artifact_path`, `knowledge_items`),
unless PUBLIC names another; an MCP tool's argument and a Python call's keyword argument are that name, and
the command line's option is that name with dashes (`--timeout-s`, `--artifact-path`), a repeatable option
naming one item (`--knowledge-item`, `--read-key`), unless SHORT gives the command line a shorter word. Each
interface reads these tables instead of keeping its own: the CLI's error messages (cli/__init__.py
OPTIONS) and hidden alias options (cli/parser.py), the MCP tools' arguments (mcp/schemas.py `named`,
mcp/session.py `build`, mcp/tools.py), the Python API's arguments (api/base.py). A name a field had
before stays accepted with the same meaning (ALIASES) and is shown in no help text, tool schema or page
but the aliases table of docs/cli.md.

Plain data and small functions, importing nothing: the command line reads it before it knows which
command runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# A command field -> its public name, where the two differ: the MCP contract's arguments (a post's
# `capabilities` and `key`: tests/fixtures/contract/mcp.md), which the command line and the Python API use
# too, and the one word for whoever acts (`by`) on every command a person or agent signs.
PUBLIC = {
    "target_capabilities": "capabilities",  # the signal document's `target_capabilities`
    "dedupe_key": "key",  # the signal document's `dedupe_key`
    "agent_id": "agent",  # the signal document's `claimed_by`
    "reader": "author",  # who reads under a claim's key permissions: the entry's author
    "approved_by": "by",  # the signal document's `decided_by`
    "rejected_by": "by",
    "cancelled_by": "by",
    "set_by": "by",
    "nudged_by": "by",  # who nudges a running agent (`nudge --by`)
    "board": "blackboard_id",  # a budget's board, named as every other board
}

# A public name -> the command line's word for it, where it is not the name with dashes: the repeatable
# options (one item each), the arguments given by position, and the short words every example uses.
SHORT = {
    "signal_type": "--type",
    "signal_types": "--type",
    "entry_type": "--type",
    "blackboard_id": "--blackboard",
    "capabilities": "--capability",
    "read_keys": "--read-key",
    "write_keys": "--write-key",
    "knowledge_items": "--knowledge-item",
    "topics": "--topic",
    "labels": "--label",  # a signal's (`post --label`, and the filters of signals, next, status, watch)
    "posted_with": "--correlation-id",  # cancel in bulk: what the signals were posted with
    "signal_id": "SIG",
    "key": "KEY",  # an entry's key (a post's `key` is `--key`: CLI_FIELDS)
    "text": "TEXT",
    "problem": "PROBLEM",
    "flow": "FILE",
    "run_id": "--resume",
    "resumed_by": "--posted-by",
}
# A command field whose command-line word is not its public name's (the same public name, another place).
CLI_FIELDS = {"dedupe_key": "--key", "board": "BOARD"}

# The former names, each still accepted with the same meaning, by command: a former name -> the public
# name. `--x` is the command line's (a hidden option), any other the MCP tool's and the Python call's.
ALIASES: dict[str, dict[str, str]] = {
    "post": {
        "--timeout": "timeout_s",
        "timeout": "timeout_s",
        "gate_timeout": "timeout_s",
        "dedupe_key": "key",
    },
    "complete": {"--artifact": "artifact_path", "--knowledge": "knowledge_items"},
    "cancel": {"cancelled_by": "by"},
    "cancel_all": {"cancelled_by": "by"},
    "budget": {"set_by": "by"},
}


def public(field: str) -> str:
    """A command field's public name."""
    return PUBLIC.get(field, field)


def option(field: str) -> str:
    """A command field's word on the command line: `--` and its public name with dashes, unless shorter."""
    if field in CLI_FIELDS:
        return CLI_FIELDS[field]
    name = public(field)
    return SHORT.get(name, "--" + name.replace("_", "-"))


def options(plain: tuple[str, ...] = ()) -> dict[str, str]:
    """The command line's word for each command field named otherwise than by `--` and the field with
    dashes, and for each field of `plain` (those the command line takes by that rule)."""
    fields = {*PUBLIC, *SHORT, *CLI_FIELDS}
    named = {f: option(f) for f in fields if option(f) != "--" + f.replace("_", "-")}
    return {**{field: option(field) for field in plain}, **named}


def arguments() -> dict[str, str]:
    """Every command field -> the argument an MCP tool or a Python call names it by, where they differ."""
    return dict(PUBLIC)


def cli_aliases(command: str) -> dict[str, str]:
    """A command's former options -> the public option each now is (`--timeout` -> `--timeout-s`)."""
    return {
        old: "--" + new.replace("_", "-") if new not in SHORT else SHORT[new]
        for old, new in ALIASES.get(command, {}).items()
        if old.startswith("--")
    }


def accepted(command: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """A call's arguments (an MCP tool's, a Python call's) with each former name given as its public name,
    the same meaning; None is not given. Two names of one field, each with a value, are refused naming
    both (InvalidInput), whichever came first."""
    former = {old: new for old, new in ALIASES.get(command, {}).items() if not old.startswith("--")}
    out: dict[str, Any] = {}
    said: dict[str, str] = {}  # a public name -> the name its value was given by
    for name, value in given.items():
        new = former.get(name, name)
        if new in said and value is not None and out[new] is not None:
            from blackboard.domain.errors import InvalidInput

            first = said[new]
            also = "" if new in (first, name) else f" (both are {new})"
            raise InvalidInput(first, f"give {first} or {name}, not both{also}")
        if new not in said or value is not None:
            out[new], said[new] = value, name
    return out
