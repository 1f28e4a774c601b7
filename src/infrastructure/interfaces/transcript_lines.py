"""A runner's transcript as readable lines, one per step: the one rendering `show --transcript` prints and
`show --follow`, the Python API's `follow`, the MCP tool `blackboard_follow` and the web view show.

A transcript line is Claude Code's stream-json for claude-code, the blackboard's own records for the model
API runners (runners/transcript.py); one of a shape no step expects is shown as its JSON, never refused.
"""

from __future__ import annotations

import json
from typing import Any

WIDTH = 160  # characters of a step shown; --json has it whole
# records a runner keeps for itself, no step of the run: the model API runners' `message`s, the conversation a
# later attempt resumes from (runners/api_loop.py), each said again by a `request`, `response` or `tool_call`
NOT_STEPS = frozenset({"message"})


def is_step(line: str) -> bool:
    """Whether a transcript line is a step a reader is shown (`show --transcript`, every follower)."""
    r = record(line)
    return not (isinstance(r, dict) and r.get("type") in NOT_STEPS)


def readable(line: str) -> str:
    """A transcript line as one readable line (its record's step); the CLI makes it safe for a terminal."""
    return shown(record(line)).strip()[:WIDTH]


def record(line: str) -> Any:
    try:
        return json.loads(line)
    except json.JSONDecodeError:
        return {"type": "text", "text": line}


def shown(r: Any) -> str:
    """A record as a line; one of a shape no step expects (a transcript holds what a run was sent) as its JSON."""
    try:
        return _step(r)
    except (KeyError, TypeError, ValueError, AttributeError):
        return f"  {_flat(r)}"


def _step(r: Any) -> str:
    if not isinstance(r, dict):
        return f"  {r!r}"
    kind = str(r.get("type"))
    if kind == "system":  # Claude Code's
        return f"  system {r.get('subtype', '')}" + (f": model {r['model']}" if r.get("model") else "")
    if kind in ("assistant", "user") and isinstance(r.get("message"), dict):
        return f"  {kind}: " + " | ".join(_block(b) for b in _content(r["message"].get("content")))
    if kind == "result" and "subtype" in r:
        cost = r.get("total_cost_usd")
        spent = f"${cost:.4f}" if isinstance(cost, int | float) and not isinstance(cost, bool) else "$?"
        turns = _flat(r.get("num_turns"))
        return f"  result {_flat(r['subtype'])}: {turns} turn(s), {spent}: {_flat(r.get('result'))}"
    if kind == "request":  # the model API runners'
        return f"  request: model {r.get('model')}, {len(r.get('tools') or [])} tool(s): {_flat(r.get('prompt'))}"
    if kind == "response":
        said = r.get("content") or [r.get("message") or {}]
        return "  response: " + " | ".join(_block(b) for b in _content(said))
    if kind == "tool_call":
        mark = "refused" if r.get("is_error") else "ok"
        return f"  tool {r.get('name')}({_flat(r.get('arguments'))}) {mark}: {_flat(r.get('result'))}"
    if kind == "warning":  # the runner's own: a line it skipped, a figure that made no sense
        return f"  warning: {_flat(r.get('warning'))}"
    if kind == "text" and set(r) == {"type", "text"}:  # a line that is no JSON (record's), or a cut one
        return f"  {_flat(r['text'])}"
    if kind == "nudge":  # a person's word, given to the model at its next turn (`blackboard nudge`)
        return f"  nudge from {_flat(r.get('by'))}: {_flat(r.get('text'))}"
    if kind == "rate_limited":
        return f"  rate limited, waited {r.get('wait_seconds')}s: {_flat(r.get('error'))}"
    if kind == "result":
        ended = "succeeded" if r.get("succeeded") else "failed"
        return f"  result: {ended}: {_flat(r.get('answer') or r.get('error'))}"
    return f"  {kind}"


def _content(content: Any) -> list[Any]:
    return content if isinstance(content, list) else [{"type": "text", "text": content}]


def _block(b: Any) -> str:
    if not isinstance(b, dict):
        return _flat(b)
    kind = b.get("type")
    if kind == "text" or (kind is None and "content" in b and "tool_calls" not in b):
        return _flat(b.get("text", b.get("content")))
    if kind == "tool_use":
        return f"calls {b.get('name')}({_flat(b.get('input'))})"
    if kind == "tool_result":
        return ("refused: " if b.get("is_error") else "result: ") + _flat(b.get("content"))
    if "tool_calls" in b:  # an OpenAI message
        calls = ", ".join(
            f"calls {c['function']['name']}({c['function']['arguments']})" for c in b["tool_calls"]
        )
        return (_flat(b.get("content")) + " " + calls).strip()
    return str(kind)


def _flat(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return " ".join(str(text).split())[:WIDTH]
