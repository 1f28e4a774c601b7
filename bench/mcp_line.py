"""How long the MCP server's stdin reader takes to read one long line (issue 27 item 3).

Feeds a line of N MB and a newline through a pipe into `LineReader` (the reader `blackboard mcp`
serves from) and reports the seconds until it hands back the line, or its refusal when the line is
longer than the maximum (4 MiB by default), then again with the maximum raised above the line, so
the whole line is read and decoded. Run: `.venv/bin/python bench/mcp_line.py 10 40`.
"""

from __future__ import annotations

import os
import sys
import threading
import time

import anyio

from blackboard.infrastructure.mcp import pipes


def feed(fd: int, size: int) -> None:
    chunk = b"x" * (1 << 20)
    left = size
    while left > 0:
        left -= os.write(fd, chunk[: min(left, len(chunk))])
    os.write(fd, b"\n")
    os.close(fd)


async def read_one(fd: int, max_line: int) -> tuple[float, object]:
    started = time.perf_counter()
    reader = pipes.LineReader(fd, max_line) if hasattr(pipes, "MAX_LINE") else pipes.LineReader(fd)
    async for line in reader:
        return time.perf_counter() - started, line
    raise AssertionError("no line")


def measure(megabytes: int, max_line: int) -> float:
    r, w = os.pipe()
    os.set_blocking(r, False)
    writer = threading.Thread(target=feed, args=(w, megabytes * 1_000_000))
    writer.start()
    took, line = anyio.run(read_one, r, max_line)
    writer.join()
    os.close(r)
    shown = f"{len(line):,} characters" if isinstance(line, str) else repr(line)[:80]
    print(f"{megabytes} MB line, maximum {max_line:,} bytes: {took:.3f} s ({shown})")
    return took


if __name__ == "__main__":
    for mb in sys.argv[1:] or ["10", "40"]:
        measure(int(mb), getattr(pipes, "MAX_LINE", 0))
        measure(int(mb), 2 * int(mb) * 1_000_000)
