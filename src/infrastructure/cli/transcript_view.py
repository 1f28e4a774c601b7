"""`show SIG --transcript`: the transcript a runner kept of its run of the signal, one line per step.

The file is the one the signal's usage links (`usage.transcript_path`): Claude Code's stream-json lines for
claude-code, the blackboard's own records for the model API runners. `--json` prints its records as they are.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from blackboard.domain.errors import NotFound
from blackboard.domain.signals import AgentSignal
from blackboard.infrastructure.cli import terminal_safe
from blackboard.infrastructure.cli.signal_text import Output

WIDTH = 160  # characters of a step shown; --json has it whole


class NoTranscript(NotFound):
    def __init__(self, signal_id: str, why: str) -> None:
        super().__init__(f"{signal_id} has no transcript: {why}")


def transcript(signal: AgentSignal) -> Output:
    path = signal.usage.transcript_path if signal.usage else None
    if path is None:
        raise NoTranscript(signal.signal_id, "no runner's run of it kept one")
    try:
        lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as exc:
        raise NoTranscript(signal.signal_id, f"{path} cannot be read ({exc.strerror or exc})") from None
    records = [_record(line) for line in lines if line.strip()]
    text = [f"transcript of {signal.signal_id} ({signal.usage.runner if signal.usage else ''}): {path}"]
    text += [terminal_safe(_shown(r))[:WIDTH] for r in records]
    return Output(records, "\n".join(text))


def _record(line: str) -> Any:
    try:
        return json.loads(line)
    except json.JSONDecodeError:
        return {"type": "text", "text": line}


def _shown(r: Any) -> str:
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
