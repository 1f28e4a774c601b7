"""ps-writer's handler: the document a signal asks for, written by Claude through the official `anthropic` SDK.

`entrypoint: handlers.writer:handle` in agents/ps-writer.md. The worker calls `handle(document, agent)`:
`agent["instructions"]` (the agent file's body) is the system prompt, `agent["model"]` the model, and the
signal (topic, prompt, context, the results it came after) the user message. The SDK reads
ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL, which the tests point at a local stand-in for the API). With no
key, or without the SDK, the signal fails with a plain sentence saying which, and nothing is sent.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

# Claude Code's model aliases, as agent files write them, and the model ids the API takes for them
ALIASES = {"sonnet": "claude-sonnet-4-5", "opus": "claude-opus-4-1", "haiku": "claude-haiku-4-5"}
DEFAULT_MODEL = ALIASES["sonnet"]  # for `inherit` or no model at all
MAX_TOKENS = 4096


class NoModel(RuntimeError):
    """There is no model to call: no key, or no SDK. Said to the user as it is."""


def handle(document: dict[str, Any], agent: dict[str, Any]) -> dict[str, Any]:
    client = make_client()
    model = model_id(agent.get("model"))
    reply = client.messages.create(
        model=model,
        max_tokens=MAX_TOKENS,
        system=agent.get("instructions") or "",
        messages=[{"role": "user", "content": user_message(document)}],
    )
    text = "".join(block.text for block in reply.content if getattr(block, "type", "") == "text").strip()
    if not text:
        raise RuntimeError(f"{model} answered with no text (stop reason: {reply.stop_reason})")
    path = write_artifact(document, agent.get("name") or "ps-writer", text)
    summary = next(line.strip("# ").strip() for line in text.splitlines() if line.strip())
    return {"artifact_path": str(path), "knowledge_items": [summary[:300]]}


def make_client() -> Any:
    if not os.environ.get("ANTHROPIC_API_KEY"):
        raise NoModel(
            "no model to call: ANTHROPIC_API_KEY is not set (ps-writer writes with Claude through the "
            "anthropic SDK; set the key in the worker's environment to run it)"
        )
    try:
        import anthropic  # imported here: a worker of another agent, or one without the [llm] extra, never needs it
    except ImportError:
        raise NoModel(
            "no model to call: the anthropic SDK is not installed (pip install 'agent-blackboard[llm]')"
        ) from None
    return anthropic.Anthropic(timeout=150.0, max_retries=2)  # below the agent file's timeout of 180 s


def model_id(model: str | None) -> str:
    if not model or model == "inherit":
        return DEFAULT_MODEL
    return ALIASES.get(model, model)


def user_message(document: dict[str, Any]) -> str:
    payload = document.get("payload") or {}
    context = dict(payload.get("context") or {})
    upstream = context.pop("upstream", None) or {}
    parts = [
        f"Topic: {payload.get('topic', '')}",
        f"Request: {payload.get('prompt') or 'write about the topic'}",
    ]
    if context:
        parts.append("Context:\n" + json.dumps(context, indent=2, ensure_ascii=False, sort_keys=True))
    for signal_id, done in sorted(upstream.items()):
        result = (done or {}).get("result") or {} if isinstance(done, dict) else {}
        items = (
            "\n".join(f"- {item}" for item in result.get("knowledge_items") or []) or "- (no knowledge items)"
        )
        failed = f" (it FAILED: {result['error']})" if result.get("error") else ""
        parts.append(f"Result of {signal_id}{failed}:\n{items}")
    return "\n\n".join(parts)


def write_artifact(document: dict[str, Any], agent: str, text: str) -> Path:
    folder = Path(os.environ.get("BLACKBOARD_ARTIFACTS_DIR") or "artifacts")  # the worker's working directory
    folder.mkdir(parents=True, exist_ok=True)
    topic = str((document.get("payload") or {}).get("topic", ""))
    slug = re.sub(r"[^a-z0-9]+", "-", topic.lower()).strip("-")[:40] or "untitled"
    path = (folder / f"{document['signal_id']}-{agent}-{slug}.md").resolve()
    path.write_text(text + "\n", encoding="utf-8")
    return path
