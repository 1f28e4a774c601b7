"""JSON typed on the command line (`--context`, `--value`, `--meta`, an import file), checked at the edge.

What passes can be stored and read back exactly by SQLite and PostgreSQL and by any JSON reader: numbers
finite (`1e400` is not turned into infinity, then null), integers within 64 bits, at most `MAX_DEPTH`
levels of nesting, strings of valid Unicode without NUL (a lone surrogate cannot be encoded, PostgreSQL
refuses U+0000). Anything else is InvalidInput naming the option and the rule (exit 2), before anything
is written.
"""

from __future__ import annotations

import json
import math
from typing import Any

from blackboard.domain.errors import InvalidInput

MAX_DEPTH = 32  # levels of arrays and objects
INT_BITS = 64
_LIMIT = 2 ** (INT_BITS - 1)


def parse_json(raw: str, option: str, max_depth: int = MAX_DEPTH) -> Any:
    def refuse_constant(constant: str) -> None:
        raise InvalidInput(option, f"must be JSON: {constant} is not JSON")

    def whole(text: str) -> int:
        if len(text.lstrip("-")) > 19 or not -_LIMIT <= (number := int(text)) < _LIMIT:
            raise InvalidInput(option, f"integers must fit in {INT_BITS} bits (-2^63 to 2^63-1), got {_cut(text)}")
        return number

    def finite(text: str) -> float:
        if not math.isfinite(number := float(text)):
            raise InvalidInput(option, f"numbers must be finite, got {_cut(text)} (out of range)")
        return number

    try:
        value = json.loads(raw, parse_constant=refuse_constant, parse_int=whole, parse_float=finite)
    except json.JSONDecodeError as exc:
        raise InvalidInput(option, f"must be JSON: {exc.msg} at character {exc.pos}") from None
    except RecursionError:
        raise InvalidInput(option, f"must nest at most {max_depth} levels of arrays and objects") from None
    check_json(value, option, max_depth)
    return value


def check_json(value: Any, option: str, max_depth: int = MAX_DEPTH) -> None:
    """The rules above for a value already parsed (walked without recursion)."""
    stack: list[tuple[Any, int, str]] = [(value, 0, "")]
    while stack:
        item, depth, path = stack.pop()
        if isinstance(item, (dict, list)):
            if depth >= max_depth:
                raise InvalidInput(option, f"must nest at most {max_depth} levels of arrays and objects (at {path or 'the top'})")
            pairs = item.items() if isinstance(item, dict) else enumerate(item)
            for key, child in pairs:
                if isinstance(key, str):
                    _check_text(key, option, f"the key {path}/{_cut(key)!r}")
                stack.append((child, depth + 1, f"{path}/{_cut(str(key))}"))
        elif isinstance(item, str):
            _check_text(item, option, f"the string at {path or 'the top'}")
        elif isinstance(item, float) and not math.isfinite(item):
            raise InvalidInput(option, f"numbers must be finite, got {item} at {path or 'the top'}")
        elif isinstance(item, int) and not isinstance(item, bool) and not -_LIMIT <= item < _LIMIT:
            raise InvalidInput(option, f"integers must fit in {INT_BITS} bits, at {path or 'the top'}")


def _check_text(text: str, option: str, where: str) -> None:
    if "\x00" in text:
        raise InvalidInput(option, f"{where} holds U+0000 (NUL), which cannot be stored")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(option, f"{where} holds a lone surrogate: strings must be valid Unicode") from None


def _cut(text: str, keep: int = 24) -> str:
    return text if len(text) <= keep else f"{text[:keep]}... ({len(text)} characters)"
