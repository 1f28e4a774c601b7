"""`export` and `import`: a whole board as one JSON document, and back (contracts/knowledge.md).

The document is this adapter's: its shape is checked here, at the edge, field by field (exit 2
naming the field and the rule); the rules of the events themselves are the application's
(`application/transfer.py`). Its format is in docs/persistence.md, "Export documents".
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from blackboard.domain.errors import InvalidInput
from blackboard.infrastructure.cli.signal_text import Output
from blackboard.infrastructure.container import Container
from blackboard.infrastructure.injection import Provide, inject

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
def export(args: argparse.Namespace, transfer: Any = Provide[Container.transfer.provider]) -> Output:
    events = transfer().export(args.board)
    document = to_document(args.board, events)
    if args.output is None:  # the document itself is the output, as text or with --json
        return Output(document, dump(document))
    text = dump(document)
    target = Path(args.output)
    partial = target.with_name(target.name + ".partial")
    try:  # a reader of the file never sees half a document
        partial.write_text(text + "\n", encoding="utf-8")
        os.replace(partial, target)
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        if "\0" not in str(partial):
            partial.unlink(missing_ok=True)
        raise InvalidInput("--output", f"must be a file that can be written: {exc}") from None
    size = target.stat().st_size
    streams = len({e.stream_id for e in events})
    return Output(
        {
            "blackboard_id": args.board,
            "events": len(events),
            "streams": streams,
            "output": str(target),
            "bytes": size,
        },
        f"exported blackboard {args.board}: {len(events)} events in {streams} streams to {target} ({size} bytes)",
    )


@inject
def import_board(args: argparse.Namespace, transfer: Any = Provide[Container.transfer.provider]) -> Output:
    board, events = from_document(_read(args.file))
    done = transfer().import_board(board, events)
    where = (
        "the export's own positions"
        if done.kept_positions
        else f"new positions {done.positions[0]}..{done.positions[-1]}, in the export's order"
    )
    return Output(
        {
            "blackboard_id": board,
            "events": done.events,
            "streams": done.streams,
            "kept_positions": done.kept_positions,
            "first_position": done.positions[0],
            "last_position": done.positions[-1],
        },
        f"imported blackboard {board}: {done.events} events in {done.streams} streams, at {where}; "
        "the read model is caught up",
    )


def dump(document: dict[str, Any]) -> str:
    # keys sorted: the same board exports as the same bytes (ASCII escapes keep it so whatever the locale)
    return json.dumps(document, indent=2, sort_keys=True)


def to_document(blackboard_id: str, events: list[StoredEvent]) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "blackboard_id": blackboard_id,
        "events": [
            {
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
            for e in events
        ],
    }


def from_document(text: str) -> tuple[str, list[StoredEvent]]:
    """The board and its events, or InvalidInput naming the first field that breaks a rule."""
    from blackboard.application.ports import StoredEvent

    def refuse(constant: str) -> None:
        raise InvalidInput("FILE", f"must be JSON: {constant} is not JSON")

    try:
        document = json.loads(text, parse_constant=refuse)
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            "FILE", f"must be JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except RecursionError:
        raise InvalidInput("FILE", "must be JSON nested less deeply (thousands of levels)") from None
    if not isinstance(document, dict):
        raise InvalidInput("FILE", f"must be a JSON object (an export document), got {_kind(document)}")
    if document.get("format") != FORMAT:
        raise InvalidInput("format", f"must be {FORMAT!r}, got {document.get('format')!r}")
    if document.get("format_version") != FORMAT_VERSION or isinstance(document.get("format_version"), bool):
        raise InvalidInput(
            "format_version",
            f"must be {FORMAT_VERSION} (the only version this blackboard reads), "
            f"got {document.get('format_version')!r}",
        )
    board = document.get("blackboard_id")
    if (
        not isinstance(board, str)
        or not 1 <= len(board) <= 200
        or any(ord(c) < 32 or ord(c) == 127 for c in board)
    ):
        raise InvalidInput(
            "blackboard_id", f"must be 1..200 characters without control characters, got {board!r}"
        )
    items = document.get("events")
    if not isinstance(items, list):
        raise InvalidInput("events", f"must be an array of events, got {_kind(items)}")
    return board, [StoredEvent(**_event(f"events[{i}]", item)) for i, item in enumerate(items)]


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


def _read(path: str) -> str:
    try:
        if path == "-":
            return sys.stdin.read()
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError, ValueError) as exc:  # ValueError: a NUL in the path
        raise InvalidInput("FILE", f"must be a readable UTF-8 file: {exc}") from None
