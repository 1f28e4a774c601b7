"""A command model's ValidationError as InvalidInput, naming each field as the caller spelled it.

The one translation of a refused value, shared by the four interfaces: the CLI (exit 2, `--option`),
the MCP tools (a tool error, the argument's name), the Python API (`InvalidInput`, the argument's name)
and the web view (400, the query parameter's name). Each passes its own spelling of the fields; the
rule is the model's message, word for word, whichever interface the value came through.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from blackboard.application.json_values import LONE_SURROGATE
from blackboard.domain.errors import InvalidInput

SHOWN = 40  # characters of a refused value repeated in the message
# What else may stand for a field a post left out or got wrong (its command model fills one from the other:
# application/commands.py PostSignal): (field, pydantic's error type) -> (the other field, what to say, where
# {other} is that field as the caller spells it, with the value refused when there is one).
HINTS = {
    ("signal_type", "missing"): (
        "target_capabilities",
        "give a type, or say whom the signal is for with a capability ({other}) and leave the type out",
    ),
    ("signal_type", "enum"): (
        "target_capabilities",
        "a type is one of six kinds of work; to reach agents able to do it, give it as a capability "
        "({other}) and leave the type out",
    ),
    ("ps_id", "missing"): ("blackboard_id", "name the board ({other}): the PS id is the board by default"),
}


def invalid_input(exc: Any, names: Mapping[str, str] | None = None) -> InvalidInput:
    """`exc` (a pydantic ValidationError) as bad input naming each field, by `names` (a model field ->
    what the caller typed: a CLI option, an MCP or Python argument, a query parameter), and its rule."""
    problems = []
    for error in exc.errors():
        field = (names or {}).get(str(error["loc"][0]), str(error["loc"][0])) if error["loc"] else "input"
        problems.append((field, f"{_said(error)}{_close_one(error) or _hint(error, names or {})}"))
    (field, rule), more = problems[0], [f"{f}: {r}" for f, r in problems[1:]]
    return InvalidInput(field, "; ".join([rule, *more]))


def _said(error: Mapping[str, Any]) -> str:
    """The rule and the value refused; a field left out has no value to repeat, nor text that is not valid
    Unicode (pydantic's `string_unicode`: a lone surrogate), which is said in the rule every JSON value of the
    board is held to (application/json_values.py)."""
    if error.get("type") == "missing":
        return str(error["msg"])
    if error.get("type") == "string_unicode":
        return LONE_SURROGATE
    return f"{error['msg']} (got {shown(error.get('input'))})"


def _hint(error: Mapping[str, Any], names: Mapping[str, str]) -> str:
    """What else may stand for the field (HINTS): the other field as the caller spells it, with the value
    refused when there is one (`--capability SUMMARY`, `capabilities ["SUMMARY"]`)."""
    found = HINTS.get((str(error["loc"][0]) if error["loc"] else "", str(error.get("type"))))
    if found is None:
        return ""
    field, text = found
    other, value = names.get(field, field), error.get("input")
    if error.get("type") != "missing" and isinstance(value, str):
        import json

        other = f"{other} {value}" if other.startswith("--") else f"{other} {json.dumps([value])}"
    return "; " + text.format(other=other)


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
