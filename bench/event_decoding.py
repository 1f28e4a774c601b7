"""Stored event rows into event objects, the candidate ways side by side in one run (issue 35, item 1:
"measure the two ways before choosing").

`python -m bench.event_decoding` (BENCH_DECODE_EVENTS, 50,000 by default; BENCH_DECODE_ROUNDS, 5): about
that many events (`seed_mix`: posts, claims, completions on 4 boards) in a SQLite file, read once on the
driver's cursor (`replay.read_page`, as a rebuild reads them), then each way turns every row into an
event, taking turns, BENCH_DECODE_ROUNDS times; the least CPU time of each is kept (`time.process_time`,
collector paused as a rebuild pauses it). The ways:

- *JSON only*: `msgspec.json.decode` of each row's data into a dict, no event object: the floor of any
  reader of the log;
- *the product's page decoder*: `replay.events`, what rebuilds and catch-ups run (before issue 35 msgspec
  structs restating nine event classes; after it the one generic path, `codec.event_from_row`'s);
- *pydantic, validate_json*: the model's own validator on the row's JSON with its envelope spliced in
  (the normal path's way before issue 35);
- *pydantic, validate_python*: the validator on the row's data decoded by msgspec, envelope added;
- *pydantic, model_construct*: (A) without validation: the data decoded by msgspec, each field converted
  by a converter derived once per class from its annotation (datetime, enum, tuple, nested model, ...),
  then `model_construct` (pydantic's public constructor without validation);
- *msgspec Structs*: (B) Structs derived from the pydantic models (fields, types and defaults), decoded
  typed by msgspec, the envelope set after; the event a Struct, not the domain's class.

Every way's events are checked against the validated ones (field for field; B through `asdict`).
Writes bench-results/event_decoding.json.
"""

from __future__ import annotations

import enum
import gc
import json
import os
import time
import types
import typing
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import msgspec
from pydantic import BaseModel

from bench.common import Timer, machine, progress, say, table, temp_dir, wired
from bench.seeding import seed_mix
from blackboard.domain.events import ENVELOPE, EVENT_TYPES, BlackboardEvent, board_of_stream
from blackboard.infrastructure.persistence import replay

RawRow = tuple[int, str, str, int, str, int, str, datetime]
Way = Callable[[list[RawRow]], list[Any]]


# ------------------------------------------------------------------ (A) pydantic, model_construct
def _converter(annotation: Any) -> Callable[[Any], Any] | None:
    """How a JSON value becomes the field's value (None: as it is), from the annotation alone."""
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        kept = [a for a in args if a is not type(None)]
        inner = _converter(kept[0]) if len(kept) == 1 else None
        return None if inner is None else (lambda v: None if v is None else inner(v))
    if origin is tuple:
        inner = _converter(args[0])
        return tuple if inner is None else (lambda v: tuple(map(inner, v)))
    if origin is frozenset:
        return frozenset
    if isinstance(annotation, type):
        if issubclass(annotation, BaseModel):
            return _constructor(annotation)
        if issubclass(annotation, enum.Enum):
            return annotation
        if annotation is datetime:
            return datetime.fromisoformat
        if annotation is float:
            return lambda v: v if type(v) is float else float(v)
    return None


_CONSTRUCTORS: dict[type[BaseModel], Callable[[dict[str, Any]], Any]] = {}


def _constructor(cls: type[BaseModel]) -> Callable[[dict[str, Any]], Any]:
    if (found := _CONSTRUCTORS.get(cls)) is not None:
        return found
    converting = [
        (name, c) for name, f in cls.model_fields.items() if (c := _converter(f.annotation)) is not None
    ]
    construct = cls.model_construct

    def built(values: dict[str, Any]) -> Any:
        for name, convert in converting:
            if name in values and (v := values[name]) is not None:
                values[name] = convert(v)
        return construct(**values)

    _CONSTRUCTORS[cls] = built
    return built


def _envelope(row: RawRow, boards: dict[str, str]) -> dict[str, Any]:
    _, event_id, stream_id, version, _, _, _, occurred_at = row
    if (board := boards.get(stream_id)) is None:
        board = boards[stream_id] = board_of_stream(stream_id)
    return {"event_id": event_id, "blackboard_id": board, "version": version, "occurred_at": occurred_at}


def constructed(rows: list[RawRow]) -> list[Any]:
    boards: dict[str, str] = {}
    decode = msgspec.json.decode
    out = []
    for row in rows:
        cls = EVENT_TYPES[row[4]]
        values = decode(row[6])
        for name, convert in _CONVERTING[cls]:
            if (v := values.get(name)) is not None:
                values[name] = convert(v)
        values.update(_envelope(row, boards))
        out.append(cls.model_construct(**values))
    return out


_CONVERTING = {
    cls: [
        (name, c)
        for name, f in cls.model_fields.items()
        if name not in ENVELOPE and (c := _converter(f.annotation)) is not None
    ]
    for cls in EVENT_TYPES.values()
}


# ------------------------------------------------------------------ pydantic, validating
def validated_python(rows: list[RawRow]) -> list[Any]:
    boards: dict[str, str] = {}
    decode = msgspec.json.decode
    out = []
    for row in rows:
        values = decode(row[6])
        values.update(_envelope(row, boards))
        out.append(EVENT_TYPES[row[4]].__pydantic_validator__.validate_python(values))
    return out


def validated_json(rows: list[RawRow]) -> list[Any]:
    boards: dict[str, str] = {}
    out = []
    dumps = json.dumps
    for _, event_id, stream_id, version, event_type, _, data, occurred_at in rows:
        if (board := boards.get(stream_id)) is None:
            board = boards[stream_id] = board_of_stream(stream_id)
        head = (
            f'{{"event_id":{dumps(event_id)},"blackboard_id":{dumps(board)},"version":{version},'
            f'"occurred_at":"{occurred_at.isoformat()}",'
        )
        out.append(EVENT_TYPES[event_type].__pydantic_validator__.validate_json(head + data.strip()[1:]))
    return out


# ------------------------------------------------------------------ (B) msgspec Structs
def _struct_type(annotation: Any, made: dict[type, Any]) -> Any:
    if typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        return typing.Union[tuple(_struct_type(a, made) for a in args)]  # noqa: UP007 - built from a tuple
    if origin is tuple:
        return tuple[_struct_type(args[0], made), ...]  # type: ignore[misc]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _struct(annotation, made)
    return annotation


def _struct(cls: type[BaseModel], made: dict[type, Any]) -> Any:
    """A Struct of the model's fields, types and defaults (the envelope's defaulted: set after decoding)."""
    if cls in made:
        return made[cls]
    fields: list[Any] = []
    for name, f in cls.model_fields.items():
        kind = _struct_type(f.annotation, made)
        if name in ENVELOPE:
            fields.append((name, kind, None))
        elif f.default_factory is not None:
            fields.append((name, kind, msgspec.field(default_factory=f.default_factory)))  # type: ignore[arg-type]
        elif f.is_required():
            fields.append((name, kind))
        else:
            fields.append((name, kind, f.default))
    made[cls] = struct = msgspec.defstruct(cls.__name__, fields, kw_only=True)
    return struct


_MADE: dict[type, Any] = {}
_DECODERS = {name: msgspec.json.Decoder(_struct(cls, _MADE)) for name, cls in EVENT_TYPES.items()}


def structs(rows: list[RawRow]) -> list[Any]:
    boards: dict[str, str] = {}
    out = []
    for _, event_id, stream_id, version, event_type, _, data, occurred_at in rows:
        event = _DECODERS[event_type].decode(data)
        if (board := boards.get(stream_id)) is None:
            board = boards[stream_id] = board_of_stream(stream_id)
        event.event_id, event.blackboard_id, event.version, event.occurred_at = (
            event_id,
            board,
            version,
            occurred_at,
        )
        out.append(event)
    return out


# ------------------------------------------------------------------ the floor, the product
def json_only(rows: list[RawRow]) -> list[Any]:
    decode = msgspec.json.decode
    return [decode(row[6]) for row in rows]


def product(rows: list[RawRow]) -> list[Any]:
    return [event for _, event in replay.events(rows)]


WAYS: dict[str, Way] = {
    "JSON only (msgspec, dicts; no event)": json_only,
    "the product's page decoder (replay.events)": product,
    "pydantic validate_json (envelope spliced)": validated_json,
    "pydantic validate_python (msgspec dict)": validated_python,
    "(A) pydantic model_construct, converters per class": constructed,
    "(B) msgspec Structs from the models": structs,
}


def _same(reference: list[BlackboardEvent], found: list[Any]) -> bool:
    if len(reference) != len(found):
        return False
    for want, got in zip(reference, found, strict=True):
        if isinstance(got, BaseModel):
            if type(got) is not type(want) or got.model_dump() != want.model_dump():
                return False
        elif isinstance(got, msgspec.Struct):
            as_model = type(want).model_validate(msgspec.to_builtins(got))
            if as_model != want:
                return False
    return True


def run(total: int, rounds: int) -> dict[str, Any]:
    with temp_dir("decode") as d, wired(f"sqlite:///{d / 'blackboard.db'}") as container:
        engine = container.engine()
        progress(f"decoding: seeding about {total:,} events")
        counts = seed_mix(engine, total)
        with engine.connect() as conn:
            with Timer() as t_read:
                rows = replay.read_page(conn, 0, 10 * total)
    reference = validated_json(rows)
    cpu: dict[str, list[float]] = {name: [] for name in WAYS}
    same: dict[str, bool] = {}
    gc.collect()
    for r in range(rounds):
        for name, way in WAYS.items():
            progress(f"decoding: round {r + 1}/{rounds}, {name}")
            with replay.collector_paused():
                start = time.process_time()
                found = way(rows)
                cpu[name].append(time.process_time() - start)
            if r == 0 and name != "JSON only (msgspec, dicts; no event)":
                same[name] = _same(reference, found)
            del found
    n = len(rows)
    least = {name: min(c) for name, c in cpu.items()}
    floor = least["JSON only (msgspec, dicts; no event)"]
    return {
        "events": n,
        "events_by_type": counts,
        "rounds": rounds,
        "read_s": round(t_read.seconds, 3),
        "read_us_per_event": round(t_read.seconds / n * 1e6, 2),
        "ways": {
            name: {
                "cpu_us_per_event": round(least[name] / n * 1e6, 2),
                "over_json_only": round(least[name] / floor, 2),
                "events_per_s": round(n / least[name]),
                "same_events": same.get(name, True),
            }
            for name in WAYS
        },
    }


def main() -> None:
    total = int(os.environ.get("BENCH_DECODE_EVENTS", "50000"))
    rounds = int(os.environ.get("BENCH_DECODE_ROUNDS", "5"))
    result = run(total, rounds)
    result["machine"] = machine()
    result["load_average"] = os.getloadavg()
    say(
        table(
            f"stored event rows into events, {result['events']:,} events (posted/claimed/completed "
            f"{'/'.join(map(str, result['events_by_type'].values()))}), CPU µs an event, least of {rounds}",
            ["way", "µs/event", "x JSON only", "events/s", "same events"],
            [
                [name, w["cpu_us_per_event"], w["over_json_only"], w["events_per_s"], w["same_events"]]
                for name, w in result["ways"].items()
            ],
            f"    reading the rows on the driver's cursor: {result['read_us_per_event']} µs an event (wall, once);\n"
            f"    load average {' '.join(f'{x:.1f}' for x in result['load_average'])}",
        )
    )
    out = Path(os.environ.get("BENCH_OUT_DIR", "bench-results")) / "event_decoding.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2))
    say(f"    written: {out}")


if __name__ == "__main__":
    main()
