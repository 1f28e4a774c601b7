"""The serializer `BlackboardSaver` reads and writes checkpoints with: LangGraph's own, strict.

A checkpoint's bytes come back from the log, and a log can come from elsewhere (`blackboard import` of an edited
export, a database someone else writes to). LangGraph's `JsonPlusSerializer()` rebuilds whatever type a msgpack
extension names by importing it and calling it (`os.system` with an argument, if the bytes say so), unless the
environment sets LANGGRAPH_STRICT_MSGPACK. The board's is strict whatever the environment: it rebuilds only
LangGraph's own safe types (SAFE_MSGPACK_TYPES: datetimes, UUIDs, sets, LangChain's messages and documents,
LangGraph's Send, Command, Interrupt, ...) and the types the saver was given (`allowed_types`); any other type a
value names reads back as its data (the arguments it would have been called with), never as a call, and there is
no pickle. Values of the allowed types make the same round trip as with LangGraph's default serializer.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from blackboard.domain.errors import InvalidInput

RULE = 'must be a list of classes or (module, name) pairs of strings, as `("myapp.state", "Plan")`'


def strict_serializer(allowed_types: Iterable[Any] = ()) -> JsonPlusSerializer:
    """LangGraph's serializer rebuilding only its safe types and `allowed_types` (classes, or `(module, name)`
    pairs: a type as LangGraph names it, the module where it is defined and its name)."""
    pairs = _pairs(allowed_types)
    return JsonPlusSerializer(
        pickle_fallback=False,
        allowed_msgpack_modules=pairs or None,  # None: SAFE_MSGPACK_TYPES only (True would allow every type)
        # the older "json" format names a type by its module's parts, then its name
        allowed_json_modules=[(*module.split("."), name) for module, name in pairs] or None,
    )


def _pairs(allowed_types: Iterable[Any]) -> list[tuple[str, str]]:
    if isinstance(allowed_types, str | bytes) or not isinstance(allowed_types, Iterable):
        raise InvalidInput("allowed_types", f"{RULE}, got {type(allowed_types).__name__}")
    pairs = []
    for i, given in enumerate(allowed_types):
        if isinstance(given, type):
            pairs.append((given.__module__, given.__name__))
        elif (
            isinstance(given, tuple)
            and len(given) == 2
            and all(isinstance(part, str) and part and "\x00" not in part for part in given)
        ):
            pairs.append((given[0], given[1]))
        else:
            raise InvalidInput(f"allowed_types[{i}]", f"{RULE}, got {given!r}")
    return pairs
