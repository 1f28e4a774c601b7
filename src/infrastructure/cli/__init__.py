"""The `blackboard` command line (primary adapter): argv in, text or JSON out, errors as exit codes.

Start-up is kept light: only argparse runs before the arguments are known to be valid; the
container and its adapters are imported once a command runs.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Any

EXIT_OK, EXIT_ERROR, EXIT_INVALID, EXIT_REFUSED, EXIT_NOT_FOUND, EXIT_TIMEOUT = 0, 1, 2, 3, 4, 5

# Model fields, as the options a user typed.
OPTIONS = {
    "signal_type": "--type", "ps_id": "--ps-id", "entry_id": "--entry-id", "topic": "--topic",
    "prompt": "--prompt", "context": "--context", "target_capabilities": "--capability",
    "posted_by": "--posted-by", "blackboard_id": "--blackboard", "after": "--after", "dedupe_key": "--key",
    "correlation_id": "--correlation-id", "signal_id": "SIG", "agent_id": "--agent",
    "artifact_path": "--artifact", "knowledge_items": "--knowledge", "error": "--error", "limit": "--limit",
    "capability": "--capability", "status": "--status", "signal_types": "--type", "since": "--since",
}


def main(argv: Sequence[str] | None = None) -> int:
    from blackboard.infrastructure.cli.parser import build_parser

    args = build_parser().parse_args(argv)  # usage errors exit 2 here, before anything is opened
    as_json = False
    try:
        from blackboard.infrastructure import config

        as_json = config.json_output(getattr(args, "json", False))
        settings = config.load({"db": args.db, "agents_dir": args.agents_dir})
        from blackboard.infrastructure.cli import commands
        from blackboard.infrastructure.container import Container

        container = Container()
        container.config.from_dict(settings)
        container.wire(modules=[commands])
        try:
            output = getattr(commands, args.run)(args)
        finally:
            container.unwire()
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader went away (`blackboard events | head`): nothing left to say
        return _quiet_broken_pipe()
    except Exception as exc:  # noqa: BLE001 - every error becomes one line and an exit code
        try:
            return _report(exc, as_json)
        except Exception:  # noqa: BLE001 - even a broken install must not show a traceback
            print(f"blackboard: unexpected error: {exc}", file=sys.stderr)
            return EXIT_ERROR
    try:
        _print(output.data if as_json else output.text, as_json)
        sys.stdout.flush()
    except BrokenPipeError:
        return _quiet_broken_pipe()
    return EXIT_OK


def _quiet_broken_pipe() -> int:
    import os

    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # so the exit flush does not complain
    return EXIT_ERROR


def _report(exc: Exception, as_json: bool) -> int:
    from pydantic import ValidationError

    from blackboard.application.watching import WaitTimedOut
    from blackboard.domain.errors import InvalidInput, NotFound, RuleViolation

    if isinstance(exc, ValidationError):
        message, code = _invalid(exc), EXIT_INVALID
    elif isinstance(exc, InvalidInput):
        message, code = str(exc), EXIT_INVALID
    elif isinstance(exc, WaitTimedOut):
        message, code = str(exc), EXIT_TIMEOUT
    elif isinstance(exc, RuleViolation):
        message, code = str(exc), EXIT_REFUSED
        if (ended := getattr(exc, "output", None)) is not None:  # `wait` prints the signal that ended badly
            _print(ended.data if as_json else ended.text, as_json)
    elif isinstance(exc, NotFound):
        message, code = str(exc), EXIT_NOT_FOUND
    else:
        message, code = _first_line(exc), EXIT_ERROR
    print(f"blackboard: {message}", file=sys.stderr)
    return code


def _first_line(exc: Exception) -> str:
    """An unexpected error in one line: a driver's own message, without its links and detail."""
    cause = getattr(exc, "orig", None) or exc  # SQLAlchemy wraps the driver's error
    lines = [line.strip() for line in str(cause).splitlines() if line.strip()]
    return lines[0] if lines else type(cause).__name__


def _invalid(exc: Any) -> str:
    problems = []
    for error in exc.errors():
        field = OPTIONS.get(str(error["loc"][0]), str(error["loc"][0])) if error["loc"] else "input"
        problems.append(f"{field}: {error['msg']} (got {error.get('input')!r})")
    return "; ".join(problems)


def _print(data: Any, as_json: bool) -> None:
    print(json.dumps(data, indent=2) if as_json else data)
