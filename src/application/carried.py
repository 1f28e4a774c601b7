"""What an export carries: each event as `blackboard export` writes it, and the bounds `blackboard import` reads it
within; every stored event is held to the same bounds, so what the board accepts it can carry.

An export writes an event as `event_text(event_item(e))`: the fields of its row, keys sorted, a two-space indent,
ASCII escapes, four spaces more inside the document. The import's reader (infrastructure/cli/document_reader.py)
takes an event of at most MAX_EVENT_CHARS characters of that text, nested at most MAX_DEPTH levels. `check_carried`
refuses an event past either bound, in the same words, where it is written: at append, named by the field of the
command that made it so (`context`, `knowledge_items`, `value`, `checkpoint`, ...), and at import (`events[i]`), so
that a board imported from a document written otherwise exports again as one an import reads.

Cheaply: an append already has its event's data and metadata as stored (compact JSON, ASCII escapes); as long as
those are short, or hold few brackets, commas and colons (where an export breaks lines and indents), they are within
both bounds however they are indented, and nothing more is done. Only an event that could reach a bound is written
out as the export would write it, with the longest envelope it could get (a 19-digit position, times with
microseconds), and measured.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from blackboard.application.bounds import MAX_INT64
from blackboard.application.ports import StoredEvent
from blackboard.domain.errors import InvalidInput

MAX_EVENT_CHARS = 16 << 20  # one event as an export writes it (ASCII: as many bytes)
MAX_DEPTH = (
    40  # levels: an event's object, its data, and a value's 32 at most (docs/cli.md) with room to spare
)
SIZE_RULE = (
    f"must be at most {MAX_EVENT_CHARS >> 20} MiB of JSON as an export writes it "
    "(the import reader's bound on one event or field)"
)
DEPTH_RULE = (
    f"must be nested at most {MAX_DEPTH} levels deep as an export writes it (the import reader's bound)"
)

_LONGEST_MOMENT = datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC)  # 32 characters as ISO 8601
_ENVELOPE = 4096  # compact characters of an item's own fields at most (a 401-character stream id, \u-escaped)
_BREAK = 1 + 2 * MAX_DEPTH + 4  # the most an export adds at a break: a newline, the deepest indent, 4 more
_SHORT = MAX_EVENT_CHARS // (1 + _BREAK) - _ENVELOPE  # stored characters within the bound however indented

# an event's members that group a command's fields (a post's payload, a completion's result), and members a
# command's argument names otherwise: a refusal at append names the field as the caller gave it
_GROUPS = ("payload", "result")
_NAMED = {"checkpoint_metadata": "metadata", "metadata_blob": "metadata"}


def event_item(e: StoredEvent) -> dict[str, Any]:
    """One event of an export document: its row as the log keeps it."""
    return {
        "position": e.position,
        "event_id": e.event_id,
        "stream_id": e.stream_id,
        "version": e.version,
        "event_type": e.event_type,
        "schema_version": e.schema_version,
        "data": dict(e.data),
        "metadata": dict(e.metadata),
        "occurred_at": e.occurred_at.isoformat(),
        "recorded_at": e.recorded_at.isoformat(),
    }


def event_text(item: Mapping[str, Any]) -> str:
    """An event as an export writes it in its document's `events` array: keys sorted, a two-space indent and
    ASCII escapes (the same board exports as the same bytes, whatever the locale), four spaces more."""
    return json.dumps(item, indent=2, sort_keys=True).replace("\n", "\n    ")


def too_long(field: str, said: str) -> InvalidInput:
    return InvalidInput(field, f"{SIZE_RULE}; {said}")


def too_deep(field: str, said: str) -> InvalidInput:
    return InvalidInput(field, f"{DEPTH_RULE}; {said}")


def check_carried(
    data_json: str, metadata_json: str, event: Callable[[], StoredEvent], field: str | None = None
) -> None:
    """Refuse (InvalidInput) an event an import would refuse: past MAX_DEPTH or MAX_EVENT_CHARS as an export
    would write it. `data_json`, `metadata_json`: its data and metadata as stored (compact JSON, ASCII escapes);
    `event()`: the event, built only when it must be measured; `field`: the name to refuse it under (None: its
    data's member that makes it so, as the command named it)."""
    stored: StoredEvent | None = None
    opened = (
        _opened(data_json),
        _opened(metadata_json),
    )  # neither nests deeper than its count, plus its object
    if max(opened) >= MAX_DEPTH:  # it could nest past the bound: look
        stored = _longest(event())
        if depth(event_item(stored)) > MAX_DEPTH:
            name = field or _member(stored.data, depth)
            raise too_deep(name, f"its {stored.event_type} would nest more than {MAX_DEPTH} levels")
    if _within(data_json, metadata_json, *opened):
        return
    stored = stored or _longest(event())
    if (size := len(event_text(event_item(stored)))) > MAX_EVENT_CHARS:
        name = field or _member(stored.data, lambda value: len(json.dumps(value, indent=2)))
        raise too_long(name, f"its {stored.event_type} would be {size} characters")


def depth(value: Any) -> int:
    """How deeply `value` nests (a scalar: 0, an empty array: 1), without recursion; past MAX_DEPTH, where it
    stops looking, some level past it."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, level)
        if level > MAX_DEPTH:
            return level
        stack.extend((child, level + 1) for child in children if isinstance(child, dict | list))
    return deepest


def _opened(text: str) -> int:
    return text.count("[") + text.count("{")


def _within(data_json: str, metadata_json: str, opened_data: int, opened_metadata: int) -> bool:
    """Surely within MAX_EVENT_CHARS as exported, from the stored text alone (an upper bound: a bracket, comma or
    colon inside a string counts too). An export breaks the line before each member and each closing bracket of
    a non-empty array or object, indented two spaces a level, and puts a space after each colon; nothing else is
    added to compact JSON."""
    stored = len(data_json) + len(metadata_json)
    if stored <= _SHORT:
        return True
    levels = 1 + min(MAX_DEPTH - 1, max(opened_data, opened_metadata))  # its object's, and what it holds
    breaks = data_json.count(",") + metadata_json.count(",") + 2 * (opened_data + opened_metadata)
    spaces = data_json.count(":") + metadata_json.count(":")
    return stored + _ENVELOPE + breaks * (1 + 2 * levels + 4) + spaces <= MAX_EVENT_CHARS


def _longest(e: StoredEvent) -> StoredEvent:
    """`e` with the longest envelope an export could give it: where it will be in the log is not known yet."""
    return replace(e, position=MAX_INT64, occurred_at=_LONGEST_MOMENT, recorded_at=_LONGEST_MOMENT)


def _member(data: Mapping[str, Any], weight: Callable[[Any], int]) -> str:
    """The member of an event's data that weighs most, as the command named it."""
    name, value = max(data.items(), key=lambda member: weight(member[1]))
    if name in _GROUPS and isinstance(value, Mapping) and value:
        name = max(value.items(), key=lambda member: weight(member[1]))[0]
    return _NAMED.get(name, name)
