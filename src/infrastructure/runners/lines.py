"""A run's output read a line at a time, never more than a bound of it in memory: a line longer than
`MAX_LINE` bytes keeps its first `MAX_LINE` (its rest is read and dropped, only counted), so a program that
prints tens of megabytes on one line, or never ends a line, costs the worker that bound and no more."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

MAX_LINE = 8 * 1024 * 1024  # bytes of one line read: Claude Code's lines are well under a megabyte
CHUNK = 1024 * 1024  # bytes read at a time while the rest of a cut line is dropped
KEPT_OF_CUT = 64 * 1024  # bytes of a cut line a transcript keeps


@dataclass(frozen=True, slots=True)
class Line:
    """One line (its end of line taken off), decoded as UTF-8 (anything else replaced); `size` is the
    bytes the whole line had, more than the text holds when it was `cut`."""

    text: str
    size: int
    cut: bool = False

    def kept(self) -> str:
        """The line as a transcript keeps it: whole, or the start of a cut one with a mark saying so."""
        if not self.cut:
            return self.text
        return f"{self.text[:KEPT_OF_CUT]} [... cut: the line was {self.size} bytes]"


def lines(stream: BinaryIO, limit: int = MAX_LINE) -> Iterator[Line]:
    """The stream's lines to its end. An error reading it (closed under the reader) ends them."""
    try:
        while raw := stream.readline(limit + 1):
            if raw.endswith(b"\n") or len(raw) <= limit:  # whole, or the last line, with no end of line
                body = raw.removesuffix(b"\n")
                yield Line(body.decode("utf-8", errors="replace"), len(body))
                continue
            size = len(raw)
            while (rest := stream.readline(CHUNK)) and not rest.endswith(b"\n"):
                size += len(rest)
            size += len(rest.removesuffix(b"\n"))
            yield Line(raw[:limit].decode("utf-8", errors="replace"), size, cut=True)
    except (OSError, ValueError):  # the pipe closed under the reader (a stopped run)
        return
