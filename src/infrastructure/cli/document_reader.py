"""Reading an export document as it streams: its top-level fields, then its events one at a time.

The whole file is never in memory: it is read in chunks of `CHUNK` characters, each event decoded
with the json module's own scanner as soon as it is whole, and what is behind dropped. The reader's
bounds (docs/persistence.md, "Export documents"), each refused as InvalidInput naming it:
- an event, or any other top-level value, holds at most `MAX_ITEM_BYTES` characters of JSON;
- nothing is nested deeper than `MAX_DEPTH` levels (an event's own object counts);
- the document is one JSON object, UTF-8, with no NaN or Infinity and nothing after it.
Its digest is taken as it goes, so a second pass can tell that the file is still the one checked.
"""

from __future__ import annotations

import codecs
import hashlib
import json
import re
from collections.abc import Callable, Iterator
from typing import IO, Any

from blackboard.application.carried import MAX_DEPTH, MAX_EVENT_CHARS, depth, too_deep, too_long
from blackboard.domain.errors import InvalidInput

CHUNK = 1 << 20
# the bounds every stored event is held to as well (application/carried.py): what the board accepts, it can carry
MAX_ITEM_BYTES = MAX_EVENT_CHARS
_SPACE = re.compile(r"[ \t\n\r]*")


def _refuse_constant(constant: str) -> None:
    raise InvalidInput("FILE", f"must be JSON: {constant} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)


class DocumentReader:
    """One pass over a document: `fields` and `events` as they come (`read`)."""

    def __init__(self, file: IO[bytes]) -> None:
        self._file = file
        self._utf8 = codecs.getincrementaldecoder("utf-8")()
        self._digest = hashlib.sha256()
        self._buf = ""
        self._at = 0
        self._eof = False
        self._lines = 1  # the line of the buffer's first character, for messages
        self.streamed = False  # whether the events array began (and so was an array)

    @property
    def digest(self) -> str:
        return self._digest.hexdigest()

    def read(self, on_field: Callable[[str, Any], None], events_field: str = "events") -> Iterator[Any]:
        """Each item of the array `events_field`, in order; every other top-level field goes to
        `on_field(name, value)` as it comes (before the events, or after them)."""
        self._space()
        first = self._peek()
        if first != "{":
            raise InvalidInput("FILE", f"must be a JSON object (an export document), got {self._kind(first)}")
        self._at += 1
        self._space()
        if self._peek() == "}":
            self._at += 1
        else:
            while True:
                if self._peek() != '"':
                    self._syntax("Expecting property name enclosed in double quotes")
                name = self._value("FILE")
                self._space()
                if self._peek() != ":":
                    self._syntax("Expecting ':' delimiter")
                self._at += 1
                self._space()
                if name == events_field and self._peek() == "[":
                    self._at += 1
                    self.streamed = True
                    yield from self._items(events_field)
                else:
                    on_field(name, self._value(name))
                self._space()
                after = self._peek()
                self._at += 1
                if after == "}":
                    break
                if after != ",":
                    self._at -= 1
                    self._syntax("Expecting ',' delimiter")
                self._space()
        self._space()
        if self._peek() != "":
            self._syntax("Extra data")

    def _items(self, name: str) -> Iterator[Any]:
        self._space()
        if self._peek() == "]":
            self._at += 1
            return
        index = 0
        while True:
            yield self._value(f"{name}[{index}]")
            index += 1
            self._space()
            after = self._peek()
            self._at += 1
            if after == "]":
                return
            if after != ",":
                self._at -= 1
                self._syntax("Expecting ',' delimiter")
            self._space()

    # -------------------------------------------------------------- decoding
    def _value(self, field: str) -> Any:
        """The JSON value at the cursor, reading on until it is whole (at most MAX_ITEM_BYTES)."""
        while True:
            try:
                value, end = _DECODER.raw_decode(self._buf, self._at)
            except json.JSONDecodeError as exc:
                if self._eof:
                    self._syntax(exc.msg, exc.pos)
                value, end = None, None
            except RecursionError:
                raise too_deep(field, "it is deeper") from None
            if end is not None and (end < len(self._buf) or self._eof):
                if end - self._at > MAX_ITEM_BYTES:  # whole in the buffer, yet longer: the bound is exact
                    raise too_long(field, "it is longer")
                if depth(value) > MAX_DEPTH:
                    raise too_deep(field, "it is deeper")
                self._at = end
                return value
            if len(self._buf) - self._at > MAX_ITEM_BYTES:
                raise too_long(field, "it is longer")
            self._fill()

    def _syntax(self, msg: str, pos: int | None = None) -> None:
        pos = self._at if pos is None else pos
        line = self._lines + self._buf.count("\n", 0, pos)
        column = pos - self._buf.rfind("\n", 0, pos)
        raise InvalidInput("FILE", f"must be JSON: {msg} at line {line} column {column}")

    # -------------------------------------------------------------- buffering
    def _space(self) -> None:
        while True:
            self._at = _SPACE.match(self._buf, self._at).end()
            if self._at < len(self._buf) or self._eof:
                return
            self._fill()

    def _peek(self) -> str:
        while self._at >= len(self._buf) and not self._eof:
            self._fill()
        return self._buf[self._at : self._at + 1]

    def _fill(self) -> None:
        if self._at > CHUNK:  # drop what is behind the cursor
            self._lines += self._buf.count("\n", 0, self._at)
            self._buf, self._at = self._buf[self._at :], 0
        try:
            raw = self._file.read(CHUNK)
            self._digest.update(raw)
            self._buf += self._utf8.decode(raw, final=not raw)
        except (OSError, UnicodeDecodeError) as exc:
            raise InvalidInput("FILE", f"must be a readable UTF-8 file: {exc}") from None
        self._eof = not raw

    def _kind(self, first: str) -> str:
        if first == "[":
            return "an array"
        if first == '"':
            return "a string"
        if first in ("t", "f"):
            return "a boolean"
        if first == "n":
            return "null"
        if first == "" or not (first.isdigit() or first == "-"):
            self._syntax("Expecting value")
        return "a number"
