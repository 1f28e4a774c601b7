"""A command model's ValidationError as InvalidInput, naming each field as the caller spelled it.

The one translation of a refused value, shared by the four interfaces: the CLI (exit 2, `--option`),
the MCP tools (a tool error, the argument's name), the Python API (`InvalidInput`, the argument's name)
and the web view (400, the query parameter's name). Each passes its own spelling of the fields; the
rule is the model's message, word for word, whichever interface the value came through.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from blackboard.domain.errors import InvalidInput

SHOWN = 40  # characters of a refused value repeated in the message


def invalid_input(exc: Any, names: Mapping[str, str] | None = None) -> InvalidInput:
    """`exc` (a pydantic ValidationError) as bad input naming each field, by `names` (a model field ->
    what the caller typed: a CLI option, an MCP or Python argument, a query parameter), and its rule."""
    problems = []
    for error in exc.errors():
        field = (names or {}).get(str(error["loc"][0]), str(error["loc"][0])) if error["loc"] else "input"
        problems.append((field, f"{error['msg']} (got {shown(error.get('input'))}){_close_one(error)}"))
    (field, rule), more = problems[0], [f"{f}: {r}" for f, r in problems[1:]]
    return InvalidInput(field, "; ".join([rule, *more]))


def _close_one(error: Mapping[str, Any]) -> str:
    """For a value outside a set of choices (a status, a signal type), the one it was probably meant to be:
    "; did you mean POSTED?" (the CLI's usage errors say the same for a mistyped option or command)."""
    if error.get("type") not in ("enum", "literal_error") or not isinstance(error.get("input"), str):
        return ""
    import difflib
    import re

    choices = re.findall(r"'([^']*)'", str((error.get("ctx") or {}).get("expected", "")))
    close = difflib.get_close_matches(error["input"], choices, n=1) or difflib.get_close_matches(
        error["input"].upper(), choices, n=1
    )
    return f"; did you mean {close[0]}?" if close else ""


def shown(value: Any) -> str:
    """A refused value as the message repeats it: its repr, cut (a 1 MiB string is not said back whole)."""
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a value whose repr fails (too deep, a broken class) is named by type
        return f"a {type(value).__name__}"
    return text if len(text) <= SHOWN else f"{text[:SHOWN]}... ({len(text)} characters)"
