"""JSON values a command carries (a signal's context, an entry's value and meta): what can be stored and
read back exactly by SQLite and PostgreSQL and by any JSON reader, whichever interface they came from.

Numbers finite, integers within 64 bits, at most `MAX_DEPTH` levels of arrays and objects, strings of
valid Unicode without NUL (a lone surrogate cannot be encoded, PostgreSQL refuses U+0000). Anything else
is InvalidInput naming the field and the rule (exit 2 at the command line), before anything is written.
"""

from __future__ import annotations

import math
from typing import Any

from blackboard.domain.errors import InvalidInput

MAX_DEPTH = 32  # levels of arrays and objects
INT_BITS = 64
LIMIT = 2 ** (INT_BITS - 1)
LONE_SURROGATE = "must be valid Unicode text (a lone surrogate cannot be stored)"


def check_json(value: Any, option: str, max_depth: int = MAX_DEPTH) -> None:
    """The rules above for a value already parsed (walked without recursion)."""
    stack: list[tuple[Any, int, str]] = [(value, 0, "")]
    while stack:
        item, depth, path = stack.pop()
        if isinstance(item, (dict, list)):
            if depth >= max_depth:
                raise InvalidInput(
                    option,
                    f"must nest at most {max_depth} levels of arrays and objects (at {path or 'the top'})",
                )
            pairs = item.items() if isinstance(item, dict) else enumerate(item)
            for key, child in pairs:
                if isinstance(key, str):
                    _check_text(key, option, f"the key {path}/{_cut(key)!r}")
                stack.append((child, depth + 1, f"{path}/{_cut(str(key))}"))
        elif isinstance(item, str):
            _check_text(item, option, f"the string at {path or 'the top'}")
        elif isinstance(item, float) and not math.isfinite(item):
            raise InvalidInput(option, f"numbers must be finite, got {item} at {path or 'the top'}")
        elif isinstance(item, int) and not isinstance(item, bool) and not -LIMIT <= item < LIMIT:
            raise InvalidInput(option, f"integers must fit in {INT_BITS} bits, at {path or 'the top'}")


def check_unicode(text: str, field: str) -> str:
    """`text` itself when it is valid Unicode (it encodes as UTF-8, as every store and JSON document needs it to),
    else InvalidInput naming `field`: a lone surrogate (Python's stand-in for bytes that were not UTF-8)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(field, LONE_SURROGATE) from None
    return text


def _check_text(text: str, option: str, where: str) -> None:
    if "\x00" in text:
        raise InvalidInput(option, f"{where} holds U+0000 (NUL), which cannot be stored")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(option, f"{where} holds a lone surrogate: strings must be valid Unicode") from None


def _cut(text: str, keep: int = 24) -> str:
    return text if len(text) <= keep else f"{text[:keep]}... ({len(text)} characters)"
