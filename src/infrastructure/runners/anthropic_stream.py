"""The Messages API's stream of events (message_start, content_block_start/delta/stop, message_delta,
message_stop) read into one answer by the runner, whatever each event holds: an event, a block or a delta
of a shape it does not know is skipped with a warning, and the usage is read by `reported.Reading`."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from blackboard.infrastructure.runners.answers import SOURCE, Answer, StopReasons, ToolCall, Unreadable, plain
from blackboard.infrastructure.runners.reported import Reading, shown

STOPS = StopReasons(
    "stop_reason",
    ended=frozenset({"end_turn", "stop_sequence", "tool_use"}),
    cut=frozenset({"max_tokens", "model_context_window_exceeded"}),
    refused=frozenset({"refusal"}),
)
APPENDED = {"text_delta": ("text", "text"), "thinking_delta": ("thinking", "thinking")}


def read_stream(events: Iterable[Any], warn: Callable[[str], None]) -> Answer:
    """The answer the events make up; Unreadable when they hold no message or nothing of one."""
    read = Reading(SOURCE, warn)
    blocks: dict[int, dict[str, Any]] = {}
    inputs: dict[int, list[str]] = {}
    usage: dict[str, Any] = {}
    answer, started = Answer(), False
    for item in events:
        event = plain(item)
        kind = event.get("type") if isinstance(event, dict) else None
        if kind == "message_start":
            started = True
            message = read.mapping(event.get("message"), "message_start's message", required=True)
            usage.update(read.mapping(message.get("usage"), "message_start's usage"))
        elif kind == "content_block_start":
            index, block = event.get("index"), event.get("content_block")
            if isinstance(index, int) and isinstance(block, dict):
                blocks[index] = dict(block)
            else:
                warn(f"{SOURCE}: a content_block_start without an index and a block: skipped")
        elif kind == "content_block_delta":
            _delta(blocks, inputs, event, read)
        elif kind == "message_delta":
            delta = read.mapping(event.get("delta"), "message_delta's delta")
            answer.stop = delta.get("stop_reason", answer.stop)
            more = read.mapping(event.get("usage"), "message_delta's usage")
            usage.update({k: v for k, v in more.items() if v is not None})  # its counts are the totals
        elif kind not in ("content_block_stop", "message_stop", "ping"):
            warn(
                f"{SOURCE}: an event of its stream is {shown(event)}, which the runner does not know: skipped"
            )
    if not started:
        raise Unreadable(f"{SOURCE} could not be read: its stream held no message (no message_start)")
    answer.sent = [blocks[i] for i in sorted(blocks)]
    _blocks(answer, blocks, inputs, read)
    if not answer.kept and answer.sent:
        raise Unreadable(f"{SOURCE} could not be read: none of its content blocks is one the runner knows")
    answer.usage = (
        read.count(usage.get("input_tokens"), "usage.input_tokens", required=True),
        read.count(usage.get("output_tokens"), "usage.output_tokens", required=True),
        read.count(usage.get("cache_creation_input_tokens"), "usage.cache_creation_input_tokens"),
        read.count(usage.get("cache_read_input_tokens"), "usage.cache_read_input_tokens"),
    )
    return answer


def _delta(
    blocks: dict[int, dict[str, Any]], inputs: dict[int, list[str]], event: dict, read: Reading
) -> None:
    delta, block = event.get("delta"), blocks.get(event.get("index"))  # type: ignore[arg-type]
    kind = delta.get("type") if isinstance(delta, dict) else None
    if block is None or kind is None:
        read.odd("a content_block_delta", event, "a delta of a block it started", "skipped")
    elif kind in APPENDED:
        key, given = APPENDED[kind]
        block[key] = read.text(block.get(key), key) + read.text(delta.get(given), given)
    elif kind == "input_json_delta":
        inputs.setdefault(event["index"], []).append(read.text(delta.get("partial_json"), "partial_json"))
    elif kind == "signature_delta":
        block["signature"] = read.text(delta.get("signature"), "signature")
    else:
        read.odd("a content_block_delta", kind, "a kind of delta the runner knows", "skipped")


def _blocks(
    answer: Answer, blocks: dict[int, dict[str, Any]], inputs: dict[int, list[str]], read: Reading
) -> None:
    """The text, the tool calls and the blocks given back, from the blocks as they were streamed."""
    kept, texts = [], []
    for index in sorted(blocks):
        block, kind = blocks[index], blocks[index].get("type")
        if kind == "text":
            texts.append(read.text(block.get("text"), "a text block's text"))
            kept.append({"type": "text", "text": texts[-1]})
        elif kind == "tool_use":
            call = _call(block, inputs.get(index), read)
            if index in inputs:  # the transcript shows the input as it was streamed, read or not
                block["input"] = (
                    call.arguments if call and call.arguments is not None else "".join(inputs[index])
                )
            if call is not None:
                answer.calls.append(call)
                kept.append(
                    {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments or {}}
                )
        elif kind in ("thinking", "redacted_thinking"):  # given back as they came: the API checks them
            kept.append(block)
        else:
            read.odd("a content block", block, "a text, tool_use or thinking block", "left out")
    answer.text, answer.kept = "".join(texts).strip(), kept


def _call(block: dict[str, Any], parts: list[str] | None, read: Reading) -> ToolCall | None:
    call_id = block.get("id")
    if not isinstance(call_id, str) or not call_id:
        read.odd("a tool_use block's id", call_id, "text", "the call left out, as it cannot be answered")
        return None
    name = read.text(block.get("name"), "a tool_use block's name")
    if parts is None:  # not streamed: the block's own input
        given = block.get("input")
        if isinstance(given, dict):
            return ToolCall(call_id, name, given)
        return ToolCall(call_id, name, None, f"arguments: must be a JSON object, got {shown(given)}")
    raw = "".join(parts)
    try:
        arguments = json.loads(raw) if raw.strip() else {}
    except (ValueError, RecursionError):
        return ToolCall(call_id, name, None, f"arguments: must be a JSON object, got {raw[:200]!r}")
    if not isinstance(arguments, dict):
        return ToolCall(call_id, name, None, f"arguments: must be a JSON object, got {shown(arguments)}")
    return ToolCall(call_id, name, arguments)
