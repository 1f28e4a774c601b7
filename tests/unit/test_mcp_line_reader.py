"""The MCP server's line reader on a real pipe: lines split wherever the reads fall, the maximum counted
without the newline, a longer line dropped to its end (its head kept, for the request's id), and a last
line without a newline still read."""

from __future__ import annotations

import os
import threading

import anyio
import pytest

from blackboard.infrastructure.mcp.pipes import LineReader, Oversized
from blackboard.infrastructure.mcp.transport import leading_id


def lines_of(data: bytes, max_line: int) -> list[str | Oversized]:
    r, w = os.pipe()
    os.set_blocking(r, False)

    def feed() -> None:
        for start in range(0, len(data), 7001):  # reads that cut lines anywhere
            os.write(w, data[start : start + 7001])
        os.close(w)

    writer = threading.Thread(target=feed)
    writer.start()

    async def read() -> list[str | Oversized]:
        return [line async for line in LineReader(r, max_line)]

    try:
        return anyio.run(read)
    finally:
        writer.join()
        os.close(r)


def test_lines_come_out_whole_with_their_newline_and_the_last_one_without():
    data = b"a\n" + b"b" * 20_000 + b"\n\nc"

    assert lines_of(data, 1 << 20) == ["a\n", "b" * 20_000 + "\n", "\n", "c"]


@pytest.mark.parametrize("size, refused", [(2048, False), (2049, True)])
def test_the_maximum_counts_the_line_without_its_newline(size, refused):
    found = lines_of(b"x" * size + b"\nnext\n", 2048)

    assert found[1:] == ["next\n"]
    if refused:
        assert isinstance(found[0], Oversized) and found[0].size == size
    else:
        assert found[0] == "x" * size + "\n"


def test_an_oversized_line_keeps_its_head_so_its_id_can_be_answered():
    line = b'{"jsonrpc": "2.0", "id": 42, "method": "ping", "params": {"pad": "' + b"y" * 100_000 + b'"}}'

    (found,) = lines_of(line, 4096)

    assert isinstance(found, Oversized) and found.size == len(line)
    assert leading_id(found.head) == 42


@pytest.mark.parametrize(
    "head, expected",
    [
        (b'{"jsonrpc":"2.0","id":"a-1","method":"x"}', "a-1"),
        (b'{"method": "x", "params": {"id": 5}, "id": 6}', None),  # behind an object: not looked for
        (b'{"jsonrpc": "2.0", "id": 1.5}', None),
        (b"[[[[", None),
    ],
)
def test_an_id_is_taken_only_from_the_leading_members_of_the_top_level_object(head, expected):
    assert leading_id(head) == expected
