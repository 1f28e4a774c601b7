"""A Chat Completion's body read into one answer by the runner, whatever it holds: its first choice's
message (text, or a list of text parts, as some compatible servers send), its tool calls, why it finished,
its usage; a field of a shape it does not know is a warning, and an answer with no message is Unreadable."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from blackboard.infrastructure.runners.answers import SOURCE, Answer, StopReasons, ToolCall, Unreadable, plain
from blackboard.infrastructure.runners.reported import Reading, shown

STOPS = StopReasons(
    "finish_reason",
    ended=frozenset({"stop", "tool_calls", "function_call"}),
    cut=frozenset({"length"}),
    refused=frozenset({"content_filter"}),
)


def read_completion(body: Any, warn: Callable[[str], None]) -> Answer:
    read = Reading(SOURCE, warn)
    data = plain(body)
    if not isinstance(data, dict):
        raise Unreadable(f"{SOURCE} could not be read: it is {shown(data)}, not a JSON object")
    choices = data.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else None
    message = first.get("message") if isinstance(first, dict) else None
    if not isinstance(message, dict):
        raise Unreadable(f"{SOURCE} could not be read: it holds no message (choices: {shown(choices)})")
    answer = Answer(stop=first.get("finish_reason"), sent=message)  # type: ignore[union-attr]
    answer.text = _text(message.get("content"), read)
    if isinstance(refusal := message.get("refusal"), str) and refusal.strip():
        answer.refusal = refusal
    given = message.get("tool_calls")
    for call in given if isinstance(given, list) else ():
        if (read_call := _call(call, read)) is not None:
            answer.calls.append(read_call)
    if given is not None and not isinstance(given, list):
        read.odd("message.tool_calls", given, "a list", "left out")
    if given and not answer.calls and not answer.text and answer.refusal is None:
        raise Unreadable(
            f"{SOURCE} could not be read: it holds no text and none of its tool calls can be answered"
        )
    answer.kept = {"role": "assistant", "content": answer.text or None}
    if answer.calls:
        answer.kept["tool_calls"] = [_given_back(call) for call in answer.calls]
    usage = read.mapping(data.get("usage"), "usage", required=True)
    prompt = read.count(usage.get("prompt_tokens"), "usage.prompt_tokens", required=True)
    details = read.mapping(usage.get("prompt_tokens_details"), "usage.prompt_tokens_details")
    cached = min(
        prompt, read.count(details.get("cached_tokens"), "usage.prompt_tokens_details.cached_tokens")
    )
    output = read.count(usage.get("completion_tokens"), "usage.completion_tokens", required=True)
    answer.usage = (prompt - cached, output, 0, cached)
    return answer


def _text(content: Any, read: Reading) -> str:
    if isinstance(content, list):  # content parts: their text
        return "".join(
            read.text(part.get("text"), "a content part's text")
            for part in content
            if isinstance(part, dict) and part.get("type") == "text"
        ).strip()
    return read.text(content, "message.content").strip()


def _call(call: Any, read: Reading) -> ToolCall | None:
    function = call.get("function") if isinstance(call, dict) else None
    call_id = call.get("id") if isinstance(call, dict) else None
    if not isinstance(call_id, str) or not call_id or not isinstance(function, dict):
        read.odd("a tool call", call, "one with an id and a function", "left out, as it cannot be answered")
        return None
    name, raw = read.text(function.get("name"), "a tool call's name"), function.get("arguments")
    try:
        arguments = json.loads(raw or "{}") if isinstance(raw, str) else raw
    except (ValueError, RecursionError):
        arguments = None
    if not isinstance(arguments, dict):
        return ToolCall(call_id, name, None, f"arguments: must be a JSON object, got {str(raw)[:200]!r}")
    return ToolCall(call_id, name, arguments)


def _given_back(call: ToolCall) -> dict[str, Any]:
    arguments = json.dumps(call.arguments if call.arguments is not None else {}, ensure_ascii=False)
    return {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": arguments}}
