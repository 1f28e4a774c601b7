"""Standard input and output as the event loop's own non-blocking pipes, for the SDK's stdio server.

The SDK's default wraps them in threads: each message read, written and flushed is a hop to a worker
thread and back. Here the loop waits on the descriptors itself. As the SDK does for its own, the
process's fd 0 and fd 1 are moved aside while serving (a stray read gets EOF, a stray print lands on
stderr), so nothing but protocol messages reaches the client.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import anyio

MAX_LINE = 4 * 1024 * 1024  # bytes of one message, its newline included (BLACKBOARD_MCP_MAX_LINE)
CHUNK = 1 << 16


@dataclass(frozen=True, slots=True)
class Oversized:
    """A line longer than the maximum: read to its end and dropped, its first bytes kept (where a
    request's id may be found) so the server can answer it."""

    size: int  # its bytes, the newline left out
    head: bytes


class LineReader:
    """`async for line in reader`: the lines of a non-blocking descriptor, until its end, in time linear
    in what is read (each byte is searched for the newline once) and memory bounded by `max_line`: a
    longer line is skipped to its newline and comes out as `Oversized`."""

    def __init__(self, fd: int, max_line: int = MAX_LINE) -> None:
        self._fd, self.max_line = fd, max_line
        self._buffer = bytearray()  # the line being read (never more than max_line bytes)
        self._skipped = 0  # > 0: inside an oversized line, this many bytes of it dropped
        self._head = b""
        self._ready: deque[str | Oversized] = deque()

    def __aiter__(self) -> LineReader:
        return self

    async def __anext__(self) -> str | Oversized:
        while not self._ready:
            await anyio.wait_readable(self._fd)
            try:
                chunk = os.read(self._fd, CHUNK)
            except BlockingIOError:
                continue
            if not chunk:
                self._end()
                if not self._ready:
                    raise StopAsyncIteration
                break
            self._take(chunk)
        return self._ready.popleft()

    def _take(self, chunk: bytes) -> None:
        start = 0
        while True:
            newline = chunk.find(b"\n", start)
            piece = chunk[start:] if newline < 0 else chunk[start : newline + 1]
            self._add(piece)
            if newline < 0:
                return
            self._finish()
            start = newline + 1

    def _add(self, piece: bytes) -> None:
        if self._skipped:
            self._skipped += len(piece)
        elif (
            len(self._buffer) + len(piece) - piece.endswith(b"\n") > self.max_line
        ):  # the newline not counted
            head = bytes(self._buffer[:CHUNK])
            self._head = head + piece[: CHUNK - len(head)]
            self._skipped = len(self._buffer) + len(piece)
            self._buffer.clear()
        else:
            self._buffer += piece

    def _finish(self) -> None:
        if self._skipped:
            self._ready.append(Oversized(self._skipped - 1, self._head))
            self._skipped, self._head = 0, b""
        else:
            self._ready.append(self._buffer.decode("utf-8", errors="replace"))
            self._buffer = bytearray()

    def _end(self) -> None:
        """The descriptor's end: a last line without its newline still counts."""
        if self._skipped:
            self._ready.append(Oversized(self._skipped, self._head))
            self._skipped = 0
        elif self._buffer:
            self._ready.append(self._buffer.decode("utf-8", errors="replace"))
            self._buffer = bytearray()


class Writer:
    """`write` then `flush`: whole messages onto a non-blocking descriptor, waiting while it is full."""

    def __init__(self, fd: int) -> None:
        self._fd, self._pending = fd, bytearray()

    async def write(self, text: str) -> None:
        self._pending += text.encode("utf-8")

    async def flush(self) -> None:
        while self._pending:
            try:
                del self._pending[: os.write(self._fd, self._pending)]
            except BlockingIOError:
                await anyio.wait_writable(self._fd)


@contextmanager
def standard_pipes(max_line: int = MAX_LINE) -> Iterator[tuple[LineReader, Writer]]:
    """The client's pipes on private descriptors, fd 0 on the null device and fd 1 on stderr meanwhile."""
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)
    os.close(null)
    for fd in (wire_in, wire_out):
        os.set_blocking(fd, False)
    try:
        yield LineReader(wire_in, max_line), Writer(wire_out)
    finally:
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)
        os.close(wire_in)
        os.close(wire_out)
