"""What a run is told about itself (Claude Code's result and init lines, a model API's usage, stop reason
and blocks), read defensively in one place.

Whatever the other side sends, a value that is not what it should be is no error of the run: a count that
is not a whole number from 0 to MAX_COUNT counts 0, a cost that is not a finite number from 0 to MAX_COST is
unknown, a name that is not short text is none, and each such value is said once, as a warning (the run's
transcript keeps it). A successful run stays a success; its usage keeps every value that makes sense.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from typing import Any

MAX_COUNT = (
    2**53 - 1
)  # the largest whole number every JSON reader holds exactly (JavaScript's, Claude Code's)
MAX_COST = 1_000_000.0  # US dollars: no single run costs more; a larger figure is a broken report
MAX_NAME = 200  # characters of a model's name or a session's id


class Reading:
    """Reads the values one source (`Claude Code's result`, `the model API's answer`) reported, telling
    `warn` what was odd about each."""

    def __init__(self, source: str, warn: Callable[[str], None]) -> None:
        self.source = source
        self._warn = warn

    def odd(self, what: str, value: Any, expected: str, taken: str) -> None:
        self._warn(f"{self.source}: {what} is {shown(value)}, not {expected}: {taken}")

    def count(self, value: Any, what: str, required: bool = False) -> int:
        """A number of tokens or turns. Absent (None) is 0, said only when `required`."""
        if value is None:
            if required:
                self._warn(f"{self.source}: no {what}; counted as 0")
            return 0
        if not _number(value) or value != int(value) or not 0 <= value <= MAX_COUNT:
            self.odd(what, value, f"a whole number from 0 to {MAX_COUNT}", "counted as 0")
            return 0
        return int(value)

    def dollars(self, value: Any, what: str) -> float | None:
        """A cost in US dollars, None when absent or not a sensible figure (unknown)."""
        if value is None:
            return None
        if not _number(value) or not 0 <= value <= MAX_COST:
            self.odd(what, value, f"a number of US dollars from 0 to {MAX_COST:g}", "taken as unknown")
            return None
        return float(value)

    def name(self, value: Any, what: str) -> str | None:
        """A model's name, a session's id: text of 1 to MAX_NAME printable characters, else None."""
        if value is None:
            return None
        if not isinstance(value, str) or not 0 < len(value) <= MAX_NAME or not value.isprintable():
            self.odd(what, value, f"text of 1 to {MAX_NAME} printable characters", "left out")
            return None
        return value

    def mapping(self, value: Any, what: str, required: bool = False) -> Mapping[str, Any]:
        """A JSON object; anything else is an empty one (said, unless it is absent and not `required`)."""
        if isinstance(value, Mapping):
            return value
        if value is not None or required:
            self.odd(what, value, "an object", "read as empty")
        return {}

    def text(self, value: Any, what: str) -> str:
        """Text; a number or a structure is kept as its JSON, said; absent is empty."""
        if value is None or isinstance(value, str):
            return value or ""
        self.odd(what, value, "text", "kept as its JSON")
        return json_text(value)


def _number(value: Any) -> bool:
    """An int or a finite float (a bool is neither here); checked before any arithmetic, which a huge int or
    a NaN would break."""
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, int) and not isinstance(value, bool)


def shown(value: Any, keep: int = 80) -> str:
    """A value as a warning shows it: its type, and its start."""
    text = json_text(value)
    text = text if len(text) <= keep else f"{text[:keep]}... ({len(text)} characters)"
    return f"{type(value).__name__} {text}"


def json_text(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=repr)
    except (ValueError, RecursionError):  # a cycle, a structure too deep, an int of thousands of digits
        return f"<{type(value).__name__}>"
