"""What an export carries (application/carried.py): the bounds a write holds every event to are the import reader's,
to the character and the level, in the same words; and an event far from them costs no measure."""

from __future__ import annotations

import io
import json
import re
from datetime import UTC, datetime
from typing import Any

import pytest

from blackboard.application.bounds import MAX_INT64
from blackboard.application.carried import (
    DEPTH_RULE,
    MAX_DEPTH,
    MAX_EVENT_CHARS,
    SIZE_RULE,
    check_carried,
    event_item,
    event_text,
)
from blackboard.application.ports import StoredEvent
from blackboard.domain.errors import InvalidInput
from blackboard.infrastructure.cli.document_reader import DocumentReader
from blackboard.infrastructure.cli.transfer import write_document

LONGEST = datetime(9999, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC)
METADATA = {"actor": "ps-lead", "command": "PostSignal"}


def event(data: dict[str, Any]) -> StoredEvent:
    """An event with the longest envelope an export could give it: what a write measures."""
    return StoredEvent(
        MAX_INT64, "0f0f0f0f-0000-4000-8000-000000000000", "b", 1, "AgentSignalPosted", 9, data, METADATA,
        LONGEST, LONGEST,
    )  # fmt: skip


def written(e: StoredEvent) -> int:
    return len(event_text(event_item(e)))


def check(e: StoredEvent, field: str | None = None) -> None:
    compact = (
        json.dumps(dict(e.data), separators=(",", ":")),
        json.dumps(dict(e.metadata), separators=(",", ":")),
    )
    check_carried(*compact, lambda: e, field)


def imported(e: StoredEvent) -> list[Any]:
    """The events of a document that holds `e`, written as an export writes it, read as an import reads it."""
    out = io.StringIO()
    write_document("b", [e], out)
    return list(DocumentReader(io.BytesIO(out.getvalue().encode("ascii"))).read(lambda *_: None))


def padded(chars: int) -> StoredEvent:
    """A post whose context makes it `chars` characters long as exported."""
    short = event({"payload": {"context": {"pad": ""}}})
    return event({"payload": {"context": {"pad": "x" * (chars - written(short))}}})


def test_an_event_exactly_at_the_bound_is_written_and_imported_and_one_character_more_is_refused_by_both():
    at_the_bound, over = padded(MAX_EVENT_CHARS), padded(MAX_EVENT_CHARS + 1)
    assert (written(at_the_bound), written(over)) == (MAX_EVENT_CHARS, MAX_EVENT_CHARS + 1)

    check(at_the_bound)
    assert imported(at_the_bound) == [event_item(at_the_bound)]

    with pytest.raises(InvalidInput) as at_write:
        check(over)
    with pytest.raises(InvalidInput) as at_import:
        imported(over)  # whole in the reader's buffer, yet a character longer: refused all the same
    assert str(at_write.value) == (
        f"context: {SIZE_RULE}; its AgentSignalPosted would be {MAX_EVENT_CHARS + 1} characters"
    )
    assert str(at_import.value) == f"events[0]: {SIZE_RULE}; it is longer"


def nested(levels: int) -> StoredEvent:
    """A post nesting `levels` levels as exported: its object, data, payload and context, then arrays."""
    value: Any = []
    for _ in range(levels - 4 - 1):
        value = [value]
    return event({"payload": {"context": {"deep": value}}})


def test_an_event_nested_exactly_to_the_bound_is_written_and_imported_and_one_level_more_is_refused_by_both():
    check(nested(MAX_DEPTH))
    assert imported(nested(MAX_DEPTH)) == [event_item(nested(MAX_DEPTH))]

    with pytest.raises(InvalidInput) as at_write:
        check(nested(MAX_DEPTH + 1))
    with pytest.raises(InvalidInput) as at_import:
        imported(nested(MAX_DEPTH + 1))
    assert (
        str(at_write.value)
        == f"context: {DEPTH_RULE}; its AgentSignalPosted would nest more than {MAX_DEPTH} levels"
    )
    assert str(at_import.value) == f"events[0]: {DEPTH_RULE}; it is deeper"


def test_indentation_counts_a_value_small_as_stored_but_long_as_exported_is_refused():
    zeros = [0] * 400_000  # 800 KB stored; each zero on a line of its own, indented 52 spaces, as exported
    deep: Any = zeros
    for _ in range(20):
        deep = [deep]
    e = event({"key": "k", "value": {"deep": deep}, "meta": {}})

    with pytest.raises(InvalidInput) as refused:
        check(e)

    assert re.fullmatch(
        rf"value: {re.escape(SIZE_RULE)}; its AgentSignalPosted would be \d+ characters", str(refused.value)
    )


BIG = MAX_EVENT_CHARS  # characters of one member: the event is longer still


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"payload": {"topic": "t", "prompt": "p" * 100, "context": {"pad": "x" * BIG}}}, "context"),
        ({"payload": {"topic": "t", "prompt": "p" * BIG, "context": {"pad": "x" * 100}}}, "prompt"),
        (
            {"result": {"knowledge_items": ["k" * (BIG // 2)] * 2, "artifact_path": "a"}, "usage": None},
            "knowledge_items",
        ),
        ({"error": "e" * BIG, "failed_by": "a"}, "error"),
        ({"checkpoint": {"type": "msgpack", "base64": "A" * BIG}, "checkpoint_metadata": {}}, "checkpoint"),
        (
            {"checkpoint": {"type": "msgpack", "base64": ""}, "checkpoint_metadata": {"m": "m" * BIG}},
            "metadata",
        ),
        ({"key": "k", "value": "v" * BIG, "meta": {"why": "w" * 100}}, "value"),
    ],
)
def test_a_refusal_at_a_write_names_the_field_of_the_command_that_made_the_event_long(data, field):
    with pytest.raises(InvalidInput) as refused:
        check(event(data))

    assert refused.value.field == field


def test_an_import_names_the_event_whatever_made_it_long():
    with pytest.raises(InvalidInput, match=r"^events\[7\]: must be at most 16 MiB of JSON"):
        check(event({"payload": {"context": {"pad": "x" * BIG}}}), "events[7]")


def test_an_ordinary_event_is_not_measured():
    def never() -> StoredEvent:
        raise AssertionError("measured")

    data = {
        "payload": {"topic": "t", "prompt": "p" * 10_000, "context": {"items": [{"n": i} for i in range(30)]}}
    }
    check_carried(json.dumps(data, separators=(",", ":")), json.dumps(METADATA), never)
    big = {"blob": {"type": "msgpack", "base64": "A" * (12 << 20)}}  # long, but nothing an export indents
    check_carried(json.dumps(big), json.dumps(METADATA), never)
    shallow = {"value": {"list": [0] * 500_000}}  # 1 MB of short items, each on a line indented 8 spaces
    check_carried(json.dumps(shallow, separators=(",", ":")), json.dumps(METADATA), never)
