"""An entry's value: the rule every value written to a key keeps. A completion's knowledge items are held to
the same rule before the completion is recorded, since each lands as an entry's value: one rule, so a
completion can never be recorded with an item its landing would refuse."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from blackboard.application.json_values import check_json
from blackboard.domain.errors import InvalidInput
from blackboard.domain.knowledge.entries import MAX_VALUE_BYTES


def json_size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def oversize(value: Any) -> int | None:
    """The value's size in bytes of JSON when it is over MAX_VALUE_BYTES, else None."""
    size = json_size(value)
    return size if size > MAX_VALUE_BYTES else None


def check_value(value: Any) -> None:
    """An entry's value as a write takes it (parsed JSON): json_values.py's rules (InvalidInput), then at most
    MAX_VALUE_BYTES of JSON (ValueError: the model names the argument)."""
    check_json(value, "value")  # before its size is measured: json.dumps recurses
    if (size := oversize(value)) is not None:
        raise ValueError(f"must be at most {MAX_VALUE_BYTES} bytes of JSON (1 MiB), got {size}")


def check_knowledge_items(items: Sequence[str]) -> None:
    """Each item as the value of the entry it lands as (`<signal_id>/knowledge/<n>`): the rules above, each
    refusal an InvalidInput naming the item (`knowledge_items[i]`, from 0) and the rule."""
    for i, item in enumerate(items):
        field = f"knowledge_items[{i}]"
        check_json(item, field)
        if (size := oversize(item)) is not None:
            raise InvalidInput(
                field,
                f"must be at most {MAX_VALUE_BYTES} bytes as an entry's value (1 MiB), got {size}: "
                "write it to a file and return its artifact_path",
            )
