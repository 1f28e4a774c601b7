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

from blackboard.application.json_values import INT_BITS, LIMIT, MAX_DEPTH, _cut, check_json
from blackboard.domain.errors import InvalidInput


def parse_json(raw: str, option: str, max_depth: int = MAX_DEPTH) -> Any:
    def refuse_constant(constant: str) -> None:
        raise InvalidInput(option, f"must be JSON: {constant} is not JSON")

    def whole(text: str) -> int:
        if len(text.lstrip("-")) > 19 or not -LIMIT <= (number := int(text)) < LIMIT:
            raise InvalidInput(
                option, f"integers must fit in {INT_BITS} bits, got {_cut(text)} (-2^63 to 2^63-1)"
            )
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
