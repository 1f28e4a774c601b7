"""The user message of a run: the signal's topic, prompt and context, the results of the signals it waited
for, the keys it may read and write, and how to hand back its result (docs/agents.md); and the one a run
that continues an earlier attempt's conversation gets instead (`resumed_prompt`)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from blackboard.application.runners import RunRequest

HOW_TO_ANSWER = (
    "When the work is done, give your result as your final message, with no tool call: plain text (it "
    "becomes the signal's one knowledge item, an entry on the board), or one JSON object "
    '{"artifact_path": "<a file you wrote>", "knowledge_items": ["<finding>", ...]}. That final message '
    "completes the signal; there is no tool to complete or fail it. If the work cannot be done, say why."
)


def build_prompt(document: dict[str, Any]) -> str:
    """From the signal document a handler gets (its upstreams' documents in payload.context.upstream)."""
    payload = document["payload"]
    context = dict(payload.get("context") or {})
    upstream = context.pop("upstream", {}) or {}
    parts = [
        f"Signal {document['signal_id']} on blackboard {document['blackboard_id']}: "
        f"{document['signal_type']} work posted by {document['posted_by']} "
        f"(problem {payload['ps_id']}, entry {payload['entry_id']}).",
        f"Topic: {payload['topic']}",
    ]
    if payload.get("prompt"):
        parts.append(f"Instructions:\n{payload['prompt']}")
    if context:
        parts.append("Context (JSON):\n" + json.dumps(context, indent=2, ensure_ascii=False))
    if upstream:
        parts.append(
            "Results of the signals this one waited for:\n" + "\n".join(map(_result, upstream.values()))
        )
    parts.append(_keys(document))
    parts.append(HOW_TO_ANSWER)
    return "\n\n".join(parts)


def _result(upstream: dict[str, Any]) -> str:
    result = upstream.get("result") or {}
    lines = [
        f"- {upstream['signal_id']} ({upstream['signal_type']}, {upstream['payload']['topic']!r}), "
        f"{str(upstream['status']).lower()} by {upstream.get('claimed_by') or 'nobody'}"
    ]
    if result.get("artifact_path"):
        lines.append(f"  artifact: {result['artifact_path']}")
    lines += [f"  knowledge: {item}" for item in result.get("knowledge_items") or ()]
    if result.get("error"):
        lines.append(f"  error: {result['error']}")
    return "\n".join(lines)


def _keys(document: dict[str, Any]) -> str:
    read, write = document.get("read_keys") or [], document.get("write_keys") or []
    tools = (
        "The board's tools (blackboard_read, blackboard_write, blackboard_list, blackboard_search, blackboard_summary, "
        "blackboard_post_signal, ...) act under this signal: entries you write carry it, and "
        "blackboard_post_signal posts follow-up work for other agents."
    )
    if not read and not write:
        return tools + " This signal restricts no entry keys."
    return (
        tools + f" You may read the entry keys {', '.join(read) or '(none)'} and write "
        f"{', '.join(write) or '(none)'} (a trailing * matches a prefix); other keys are refused."
    )


def resumed_prompt(request: RunRequest, session_id: str) -> str:
    """What a run that continues an earlier attempt's conversation (session `session_id`) is told: the
    signal and how to answer are in that conversation already."""
    return (
        f"This is attempt {request.attempt} at signal {request.signal_id}. The run of an earlier attempt "
        f"(session {session_id}) stopped before its final answer; its conversation so far is above. Go on "
        "from where it stopped rather than starting over: what it wrote to the board is there still. "
        + HOW_TO_ANSWER
    )
