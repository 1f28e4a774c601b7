"""Standard input and output as the event loop's own non-blocking pipes, for the SDK's stdio server.

The SDK's default wraps them in threads: each message read, written and flushed is a hop to a worker
thread and back. Here the loop waits on the descriptors itself. As the SDK does for its own, the
process's fd 0 and fd 1 are moved aside while serving (a stray read gets EOF, a stray print lands on
stderr), so nothing but protocol messages reaches the client.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

import anyio


class LineReader:
    """`async for line in reader`: the lines of a non-blocking descriptor, until its end."""

    def __init__(self, fd: int) -> None:
        self._fd, self._pending, self._lines = fd, b"", []

    def __aiter__(self) -> LineReader:
        return self

    async def __anext__(self) -> str:
        while not self._lines:
            await anyio.wait_readable(self._fd)
            try:
                chunk = os.read(self._fd, 1 << 16)
            except BlockingIOError:
                continue
            if not chunk:
                if self._pending:
                    self._pending, last = b"", self._pending
                    return last.decode("utf-8", errors="replace")
                raise StopAsyncIteration
            *complete, self._pending = (self._pending + chunk).split(b"\n")
            self._lines = [line + b"\n" for line in complete]
        return self._lines.pop(0).decode("utf-8", errors="replace")


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
def standard_pipes() -> Iterator[tuple[LineReader, Writer]]:
    """The client's pipes on private descriptors, fd 0 on the null device and fd 1 on stderr meanwhile."""
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)
    os.close(null)
    for fd in (wire_in, wire_out):
        os.set_blocking(fd, False)
    try:
        yield LineReader(wire_in), Writer(wire_out)
    finally:
        os.dup2(wire_in, 0)
        os.dup2(wire_out, 1)
        os.close(wire_in)
        os.close(wire_out)
