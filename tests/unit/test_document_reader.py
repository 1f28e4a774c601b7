"""The import's document reader (cli/document_reader.py): events one at a time, its bounds refused by name
before more than the bound (and a chunk) is read, whatever the file's size."""

from __future__ import annotations

import io
import json

import pytest

from blackboard.domain.errors import InvalidInput
from blackboard.infrastructure.cli.document_reader import CHUNK, MAX_DEPTH, MAX_ITEM_BYTES, DocumentReader


class Endless(io.RawIOBase):
    """`head`, then `fill` bytes for ever, made as they are read; counts what was read."""

    def __init__(self, head: bytes, fill: bytes) -> None:
        self.head, self.fill, self.read_bytes = head, fill, 0

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        out = self.head[:size] if self.head else b""
        self.head = self.head[len(out) :]
        out += self.fill * ((size - len(out)) // len(self.fill))
        self.read_bytes += len(out)
        return out


def read_all(data: bytes) -> tuple[dict, list]:
    fields: dict = {}
    items = list(DocumentReader(io.BytesIO(data)).read(fields.__setitem__))
    return fields, items


def test_it_reads_fields_before_and_after_the_events_and_each_event_in_order():
    document = {
        "blackboard_id": "b",
        "events": [{"n": i, "s": "x" * 3000} for i in range(700)],
        "format": "f",
    }

    fields, items = read_all(json.dumps(document, indent=2).encode())

    assert fields == {"blackboard_id": "b", "format": "f"} and items == document["events"]


def test_an_event_longer_than_the_bound_is_refused_by_name_having_read_little_more_than_the_bound():
    endless = Endless(b'{"blackboard_id": "b", "events": [{"value": "', b"x" * 4096)

    with pytest.raises(InvalidInput, match=r"events\[0\]: must be at most 16 MiB of JSON"):
        list(DocumentReader(endless).read(lambda *_: None))

    assert endless.read_bytes <= MAX_ITEM_BYTES + 2 * CHUNK


def test_nesting_beyond_the_bound_is_refused_by_name_even_too_deep_for_the_json_module():
    for depth in (MAX_DEPTH + 1, 100_000):
        data = b'{"events": [' + b"[" * depth + b"]" * depth + b"]}"
        with pytest.raises(InvalidInput, match=rf"events\[0\]: must be nested at most {MAX_DEPTH} levels"):
            read_all(data)


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (b"", "FILE: must be JSON: Expecting value at line 1 column 1"),
        (b"[1]", "FILE: must be a JSON object (an export document), got an array"),
        (b'{"events": [1,]}', "FILE: must be JSON"),
        (b'{"events": []} {}', "FILE: must be JSON: Extra data"),
        (b'{"events": [NaN]}', "FILE: must be JSON: NaN is not JSON"),
        (b'{"a": "\xff"}', "FILE: must be a readable UTF-8 file"),
    ],
)
def test_what_is_not_a_json_object_is_refused_naming_the_file(data, says):
    with pytest.raises(InvalidInput) as refused:
        read_all(data)

    assert str(refused.value).startswith(says), str(refused.value)
