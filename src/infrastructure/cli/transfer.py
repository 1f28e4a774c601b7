"""`export` and `import`: a whole board as one JSON document, and back (docs/knowledge.md).

The document is this adapter's: its shape is checked here, at the edge, field by field (exit 2
naming the field and the rule); the rules of the events themselves are the application's
(`application/transfer.py`). Its format is in docs/persistence.md, "Export documents". Both ways
stream: an export writes each event as the store reads it, an import reads the file event by event
(document_reader.py), so neither holds the board's document in memory.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, nullcontext
from datetime import datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from dependency_injector.wiring import Provide, inject

from blackboard.application.carried import event_item, event_text
from blackboard.domain.errors import InvalidInput
from blackboard.infrastructure.cli.signal_text import Output
from blackboard.infrastructure.composition.container import Container

if TYPE_CHECKING:
    from blackboard.application.ports import StoredEvent

FORMAT = "blackboard-export"
FORMAT_VERSION = 1
FIELDS = (
    "position",
    "event_id",
    "stream_id",
    "version",
    "event_type",
    "schema_version",
    "data",
    "metadata",
    "occurred_at",
    "recorded_at",
)


@inject
def export(args: argparse.Namespace, transfer: Any = Provide[Container.transfer.provider]) -> Output | None:
    events = transfer().export(args.board)  # BoardNotFound before anything is written
    if args.output is None:  # the document itself is the output, as text or with --json, written as read
        write_document(args.board, events, sys.stdout)
        return None
    target = Path(args.output)
    partial = target.with_name(target.name + ".partial")
    try:  # a reader of the file never sees half a document
        with partial.open("w", encoding="utf-8") as out:
            count, streams = write_document(args.board, events, out)
        os.replace(partial, target)
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        if "\0" not in str(partial):
            partial.unlink(missing_ok=True)
        raise InvalidInput("--output", f"must be a file that can be written: {exc}") from None
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    size = target.stat().st_size
    return Output(
        {
            "blackboard_id": args.board,
            "events": count,
            "streams": streams,
            "output": str(target),
            "bytes": size,
        },
        f"exported blackboard {args.board}: {count} events in {streams} streams to {target} ({size} bytes)",
    )


@inject
def import_board(args: argparse.Namespace, transfer: Any = Provide[Container.transfer.provider]) -> Output:
    with _source(args.file) as source:
        document = ExportDocument(source)
        board = document.blackboard_id
        done = transfer().import_board(board, document.events)
    where = (
        "the export's own positions"
        if done.kept_positions
        else f"new positions {done.first_position}..{done.last_position}, in the export's order"
    )
    return Output(
        {
            "blackboard_id": board,
            "events": done.events,
            "streams": done.streams,
            "kept_positions": done.kept_positions,
            "first_position": done.first_position,
            "last_position": done.last_position,
        },
        f"imported blackboard {board}: {done.events} events in {done.streams} streams, at {where}; "
        "the read model is caught up",
    )


def dump(document: dict[str, Any]) -> str:
    # keys sorted: the same board exports as the same bytes (ASCII escapes keep it so whatever the locale)
    return json.dumps(document, indent=2, sort_keys=True)


def write_document(blackboard_id: str, events: Iterable[StoredEvent], out: IO[str]) -> tuple[int, int]:
    """The document `dump(to_document(...))` gives, byte for byte, written one event at a time; returns
    how many events and streams it holds."""
    out.write('{\n  "blackboard_id": ' + json.dumps(blackboard_id) + ',\n  "events": [')
    count, streams = 0, set()
    for event in events:
        out.write(("," if count else "") + "\n    " + event_text(event_item(event)))
        count += 1
        streams.add(event.stream_id)
    out.write("\n  ],\n" if count else "],\n")
    out.write(f'  "format": {json.dumps(FORMAT)},\n  "format_version": {FORMAT_VERSION}\n}}\n')
    return count, len(streams)


def to_document(blackboard_id: str, events: Iterable[StoredEvent]) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "blackboard_id": blackboard_id,
        "events": [event_item(e) for e in events],
    }


class ExportDocument:
    """An export document read as it streams (document_reader.py), as many times as an import reads
    it: each pass checks its shape field by field (InvalidInput naming the field and the rule). The
    top-level `blackboard_id` must come before `events`, as an export writes it; `format` and
    `format_version` may come before or after. A later pass refuses a file that changed since the first."""

    def __init__(self, file: IO[bytes]) -> None:
        self._file = file
        self._digest: str | None = None
        self._fields: dict[str, Any] = {}
        self._whole = False
        self._first: Iterator[StoredEvent] | None = self._open()
        self.blackboard_id = self._board()

    def events(self) -> Iterator[StoredEvent]:
        """One pass over the events; the first call continues the pass that read the header."""
        items, self._first = self._first or self._open(), None
        yield from items

    def _open(self) -> Iterator[StoredEvent]:
        from blackboard.application.ports import StoredEvent
        from blackboard.infrastructure.cli.document_reader import DocumentReader

        self._file.seek(0)
        reader = DocumentReader(self._file)
        fields: dict[str, Any] = {}
        self._fields = fields

        def on_field(name: str, value: Any) -> None:
            fields[name] = value
            _check_field(name, value)

        items = reader.read(on_field)
        first = next(items, _END)  # what comes before the events is read and checked now
        self._whole = first is _END  # no event: the reader went to the end of the document

        def stream() -> Iterator[StoredEvent]:
            item, index = first, 0
            while item is not _END:
                yield StoredEvent(**_event(f"events[{index}]", item))
                item, index = next(items, _END), index + 1
            for name in ("format", "format_version", "blackboard_id", "events"):
                if name not in fields and not (name == "events" and reader.streamed):
                    _check_field(name, None)
            if self._digest is None:
                self._digest = reader.digest
            elif reader.digest != self._digest:
                raise InvalidInput("FILE", "must not change while it is imported (it did between two reads)")

        events = stream()
        return events

    def _board(self) -> str:
        board = self._fields.get("blackboard_id")
        if board is None:
            for name in ("format", "format_version"):
                if self._whole or name in self._fields:
                    _check_field(name, self._fields.get(name))
            if self._whole:
                _check_field("blackboard_id", None)
            raise InvalidInput(
                "blackboard_id",
                "must come before events (as an export writes it): the import reads events as they stream",
            )
        return board


_END = object()


def _check_field(name: str, value: Any) -> None:
    """The top-level fields of a document, each with its rule (others are ignored)."""
    if name == "format" and value != FORMAT:
        raise InvalidInput("format", f"must be {FORMAT!r}, got {value!r}")
    if name == "format_version" and (value != FORMAT_VERSION or isinstance(value, bool)):
        raise InvalidInput(
            "format_version",
            f"must be {FORMAT_VERSION} (the only version this blackboard reads), got {value!r}",
        )
    if name == "blackboard_id" and (
        not isinstance(value, str)
        or not 1 <= len(value) <= 200
        or any(ord(c) < 32 or ord(c) == 127 for c in value)
    ):
        raise InvalidInput(
            "blackboard_id", f"must be 1..200 characters without control characters, got {value!r}"
        )
    if name == "events":  # given as anything but an array (an array streams, and never comes here)
        raise InvalidInput("events", f"must be an array of events, got {_kind(value)}")


def _event(at: str, item: Any) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise InvalidInput(at, f"must be an event object, got {_kind(item)}")
    if missing := [f for f in FIELDS if f not in item]:
        raise InvalidInput(f"{at}.{missing[0]}", "is required")
    if extra := sorted(set(item) - set(FIELDS)):
        raise InvalidInput(f"{at}.{extra[0]}", "is not a field of an exported event")
    for name, low in (("position", 1), ("version", 1), ("schema_version", 1)):
        value = item[name]
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise InvalidInput(f"{at}.{name}", f"must be an integer, {low} or more, got {value!r}")
    for name, longest in (("event_id", 36), ("stream_id", 401), ("event_type", 100)):
        value = item[name]
        if not isinstance(value, str) or not 1 <= len(value) <= longest:
            raise InvalidInput(f"{at}.{name}", f"must be a string of 1..{longest} characters, got {value!r}")
    for name in ("data", "metadata"):
        if not isinstance(item[name], dict):
            raise InvalidInput(f"{at}.{name}", f"must be a JSON object, got {_kind(item[name])}")
    return {
        **item,
        "occurred_at": _moment(f"{at}.occurred_at", item["occurred_at"]),
        "recorded_at": _moment(f"{at}.recorded_at", item["recorded_at"]),
    }


def _moment(field: str, value: Any) -> datetime:
    try:
        moment = datetime.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        moment = None
    if moment is None or moment.tzinfo is None:
        raise InvalidInput(field, f"must be an ISO 8601 date-time with its zone, got {value!r}")
    return moment


def _kind(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )


def _regular_file(opened: IO[bytes]) -> bool:
    """A regular file is read again from its start; anything else (a pipe, a terminal, a socket) is
    spooled. Asked of the descriptor itself: a stream object may remember what its descriptor was
    when it was first asked (standard input after a dup2)."""
    import stat

    try:
        return stat.S_ISREG(os.fstat(opened.fileno()).st_mode)
    except (OSError, ValueError):
        return False


@contextmanager
def _source(path: str) -> Iterator[IO[bytes]]:
    """The document as a file that can be read more than once: standard input (or a pipe) is spooled
    to a temporary file first (on disk, not in memory)."""
    try:
        source = sys.stdin.buffer if path == "-" else Path(path).open("rb")  # noqa: SIM115
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        raise InvalidInput("FILE", f"must be a readable UTF-8 file: {exc}") from None
    with source if path != "-" else nullcontext(source) as opened:
        if _regular_file(opened):
            yield opened
            return
        with tempfile.TemporaryFile() as spool:
            try:
                shutil.copyfileobj(opened, spool, 1 << 20)
            except OSError as exc:
                raise InvalidInput("FILE", f"must be a readable UTF-8 file: {exc}") from None
            yield spool
