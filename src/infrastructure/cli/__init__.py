"""The `blackboard` command line (primary adapter): argv in, text or JSON out, errors as exit codes.

Start-up is kept light: only argparse runs before the arguments are known to be valid; the
container and its adapters are imported once a command runs.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from blackboard.domain.errors import BlackboardError, InvalidInput
from blackboard.infrastructure.cli.exits import OK, UNEXPECTED, exit_code
from blackboard.infrastructure.interfaces.names import options

# The command fields the command line takes as `--` and the field's name with dashes (the others it names
# otherwise, as interfaces/names.py says, or does not take).
PLAIN = (
    *("ps_id", "entry_id", "topic", "prompt", "context", "posted_by", "after", "correlation_id"),
    *("budget_usd", "priority", "not_before", "max_attempts", "timeout_s", "artifact_path", "error"),
    *("retry_after", "token", "reason", "note", "limit", "capability", "status", "since", "timeout", "at"),
    *("offset", "filter", "value", "author", "section", "role", "label", "confidence", "depends_on"),
    *("meta", "replaces", "pick", "rationale", "prefix", "max_iterations", "step_timeout", "usd"),
    *("tokens", "flow_id"),
)
OPTIONS = options(
    PLAIN
)  # model fields, as the options a user types (interfaces/names.py: the one table of names)


def typed(args: Any, dest: str) -> str:
    """The option that gave `dest`, as the user typed it: its public name, or a former one (parser.Named)."""
    return getattr(args, "spelled", {}).get(dest) or OPTIONS.get(dest, "--" + dest.replace("_", "-"))


# The module of each command's function (the parser's `run`), when it is not `commands`: a call imports and
# wires only the module of the command it runs, so it pays for no other command's imports.
MODULES = {
    "show": "show",
    "signals": "paging",
    "events": "paging",
    "status": "habits",
    "schema": "habits",
    "completion": "habits",
    "next_moves": "next",
    "mcp": "mcp_command",
    "ui": "ui",
    "export": "transfer",
    "import_board": "transfer",
    "solve": "solve.commands",
    "skill_install": "skill_command",
    "approve": "gates",
    "reject": "gates",
    "nudge": "nudge",
    "budget": "budget",
    "webhooks": "webhooks",
    "flow_run": "flows.commands",
    "flow_status": "flows.commands",
    **dict.fromkeys(("write", "read", "entries", "search", "resolve", "summary"), "knowledge.commands"),
}
# The modules a command's function calls into that take adapters from the container too (`watch --topic`).
ALSO_WIRED = {"watch": ("knowledge.commands",)}


def command_modules(run: str) -> list[str]:
    """The modules to import and wire for a command: its own first."""
    return [
        f"blackboard.infrastructure.cli.{name}"
        for name in (MODULES.get(run, "commands"), *ALSO_WIRED.get(run, ()))
    ]


def main(argv: Sequence[str] | None = None) -> int:
    try:  # Ctrl-C while the parser is still being imported (a second on a busy machine): no traceback
        from blackboard.infrastructure.cli.parser import build_parser

        completing = "_ARGCOMPLETE" in os.environ
        parser = build_parser()
        if completing:  # the shell asks what may come next (`blackboard completion SHELL`)
            import argcomplete

            argcomplete.autocomplete(parser)  # answers and exits
        args = parser.parse_args(argv)  # usage errors exit 2 here, before anything is opened
    except KeyboardInterrupt as interrupted:
        return exit_code(interrupted)
    as_json = False
    try:
        from blackboard.infrastructure.composition import settings

        _check_text(args)  # bytes that are not UTF-8 (a lone surrogate here) cannot be stored or printed
        config = settings.load(_flags(args))  # a bad flag or variable stops here, before anything is opened
        as_json = config.json
        from importlib import import_module

        from blackboard.infrastructure.composition.container import Container

        modules = [import_module(name) for name in command_modules(args.run)]
        container = Container(config=config)  # the one container: the API and the tests build the same
        container.wire(modules=[_functions(m) for m in modules])  # `Provide[...]`: builds only what it calls
        try:
            output = getattr(modules[0], args.run)(args)
        finally:
            container.unwire()
    except KeyboardInterrupt as interrupted:
        return exit_code(interrupted)
    except BrokenPipeError:  # the reader went away (`blackboard events | head`): nothing left to say
        return _quiet_broken_pipe()
    except Exception as exc:  # noqa: BLE001 - every error becomes one line and an exit code
        try:
            return _report(exc, as_json, getattr(args, "spelled", {}))
        except Exception:  # noqa: BLE001 - even a broken install must not show a traceback
            print(f"blackboard: unexpected error: {exc}", file=sys.stderr)
            return UNEXPECTED
    try:
        if output is not None:  # None: the command printed as it went (`watch --follow`)
            _print(output.data if as_json else output.text, as_json)
        sys.stdout.flush()
    except BrokenPipeError:
        return _quiet_broken_pipe()
    _flush_webhooks(config)
    return OK


def _flush_webhooks(config: Any) -> None:
    """A gate the command opened or ended is announced at once (docs/webhooks.md): its output printed, the
    command waits for the courier's round at most BLACKBOARD_WEBHOOK_TIMEOUT and a second; what is left, the next round
    sends, in whichever process makes it. Nothing here fails the command."""
    if not config.webhooks or "blackboard.infrastructure.webhooks.courier" not in sys.modules:
        return  # nothing was poked: the courier is imported when a commit first pokes it
    try:
        from blackboard.infrastructure.webhooks.courier import flush_poked

        flush_poked()
    except Exception:  # noqa: BLE001 - a webhook never fails the command that made it
        pass


def _functions(module: ModuleType) -> ModuleType:
    """The functions the module defines, to wire: wiring the module itself also walks every class it
    imports (the pydantic commands, the container) for methods to patch, several ms a call for none.
    Wiring binds the container's providers to the functions themselves, so the module's names see them."""
    import inspect

    functions = ModuleType(module.__name__)
    functions.__dict__.update(
        (name, value)
        for name, value in vars(module).items()
        if inspect.isfunction(value) and value.__module__ == module.__name__
    )
    return functions


def _check_text(args: Any) -> None:
    """Every text given on the command line is valid UTF-8: Python hands other bytes over as lone
    surrogates, which no store, terminal or JSON document can take."""
    for dest, value in vars(args).items():
        for text in value if isinstance(value, list) else [value]:
            if isinstance(text, str) and any("\ud800" <= c <= "\udfff" for c in text):
                field = typed(args, dest)
                raise InvalidInput(field, "must be valid UTF-8 text (it holds bytes that are not)")


def _flags(args: Any) -> dict[str, Any]:
    """The settings given as options (None: not given). `--json` is given only when set."""
    return {
        "db": args.db,
        "agents_dir": os.pathsep.join(args.agents_dir) if args.agents_dir else None,
        "json": True if getattr(args, "json", False) else None,
        **{name: getattr(args, name, None) for name in ("concurrency", "grace", "head_start")},  # worker's
    }


def _quiet_broken_pipe() -> int:
    import os

    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the exit flush does not complain
    return UNEXPECTED


def _report(exc: Exception, as_json: bool, spelled: dict[str, str] | None = None) -> int:
    """One line on stderr and the code of the error's family (errors/families.py); `spelled`: the
    options as typed (parser.Named): a former name is named so."""
    from pydantic import ValidationError

    # a command model refused a value: bad input naming the option as typed
    error = _invalid(exc, spelled or {}) if isinstance(exc, ValidationError) else exc
    code = exit_code(error)
    if (
        isinstance(error, BlackboardError) and (ended := getattr(error, "output", None)) is not None
    ):  # `wait` prints the signal that ended badly
        _print(ended.data if as_json else ended.text, as_json)
    # our own errors are one line already; another (a bug, a driver's error) is cut to its first line
    message = str(error) if isinstance(error, BlackboardError) and code != UNEXPECTED else _first_line(error)
    print(f"blackboard: {terminal_safe(message)}", file=sys.stderr)
    return code


def _first_line(exc: Exception) -> str:
    """An error in one line: its message's first line, without the detail and links below it."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return lines[0] if lines else type(exc).__name__


def _invalid(exc: Any, spelled: dict[str, str]) -> InvalidInput:
    """A command model's ValidationError as bad input naming each option the user typed, and its rule."""
    from blackboard.infrastructure.errors.input import invalid_input

    return invalid_input(exc, {**OPTIONS, **spelled})


def _print(data: Any, as_json: bool) -> None:
    if as_json:
        import json  # not at start-up: `--help` and usage errors print no JSON

        print(json.dumps(data, indent=2))
    else:
        print(terminal_safe(str(data)))


_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def terminal_safe(text: str) -> str:
    """Text for a terminal: control characters (ESC and the sequences it starts, CR, BEL, backspace, the
    C1 controls) and bidirectional overrides that stored text may hold are shown escaped (`\\x1b`), not
    sent raw, so a topic or an error cannot move the cursor, recolour or rewrite what is shown. Line
    breaks and tabs stay. (JSON output escapes control characters itself.)"""
    return _UNSAFE.sub(
        lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}", text
    )
