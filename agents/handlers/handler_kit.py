"""Shared by the example handlers: read the claimed signal, gather its inputs, write a Markdown artifact,
answer in JSON.

A handler is run by `blackboard worker` through the shell, in the agents folder, with the AgentSignal
JSON document on stdin and BLACKBOARD_SIGNAL_ID, BLACKBOARD_AGENT and BLACKBOARD_PROMPT_FILE in its
environment (docs/agents.md). It writes under BLACKBOARD_ARTIFACTS_DIR, the absolute path
of the worker's artifacts folder (outside the agents folder; ./artifacts when run by hand without it),
and prints {"artifact_path": ..., "knowledge_items": [...]}. Bad input: a message on stderr, exit 2.
Standard library only, no network: these examples must run anywhere the blackboard does.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

SIGNAL_ID = re.compile(r"^sig-[0-9a-f]{8}$")
STOPWORDS = frozenset(
    """
    a an and are as at be by can could do does for from
    has have how in into is it its of on or our should that
    the their them then there these this to was we what when where which
    who why will with would you your not no if than so such any
    all each about over under between after before must shall need use used using
    also more most other some very already
    """.split()  # noqa: SIM905 - a list literal would take a line a word
)


class BadInput(Exception):
    """The signal document or the environment is not what the contract promises."""


@dataclass
class Upstream:
    """The result of a signal this one came after (`payload.context.upstream[signal_id]`)."""

    signal_id: str
    signal_type: str | None = None
    topic: str | None = None
    agent: str | None = None
    artifact_path: str | None = None
    knowledge_items: list[str] = field(default_factory=list)
    error: str | None = None
    artifact_text: str | None = None  # None when no artifact was named or it cannot be read


@dataclass
class Job:
    """What a handler works from: the signal, who runs it, and its inputs."""

    signal_id: str
    signal_type: str
    agent: str
    ps_id: str
    entry_id: str
    topic: str
    prompt: str
    context: dict[str, Any]  # without `upstream`
    upstream: list[Upstream]
    prompt_file: str | None
    instructions: str  # the body of the agent file, if it could be read


@dataclass
class Report:
    """What a handler produced: the artifact's title and sections, and the knowledge items to hand back."""

    title: str
    sections: list[tuple]  # (heading, Markdown text)
    knowledge_items: list[str]


def _require(doc: dict[str, Any], key: str, where: str, kind: type) -> Any:
    value = doc.get(key)
    if not isinstance(value, kind) or (kind is str and not value.strip()):
        raise BadInput(
            f"{where}{key}: must be a non-empty {'text' if kind is str else kind.__name__}, got {value!r}"
        )
    return value


def _upstream(signal_id: str, value: Any) -> Upstream:
    """Accepts a whole AgentSignal document, a bare result {artifact_path, knowledge_items, error}, or text."""
    if isinstance(value, str):
        return Upstream(signal_id, knowledge_items=[value])
    if isinstance(value, list):
        return Upstream(signal_id, knowledge_items=[str(v) for v in value])
    if not isinstance(value, dict):
        raise BadInput(f"payload.context.upstream.{signal_id}: must be a signal document, a result or text")
    result = value.get("result") if isinstance(value.get("result"), dict) else value
    payload = value.get("payload") if isinstance(value.get("payload"), dict) else {}
    items = result.get("knowledge_items") or []
    up = Upstream(
        signal_id,
        signal_type=value.get("signal_type"),
        topic=payload.get("topic") or value.get("topic"),
        agent=value.get("claimed_by") or value.get("agent"),
        artifact_path=result.get("artifact_path"),
        knowledge_items=[str(i) for i in items] if isinstance(items, list) else [str(items)],
        error=result.get("error"),
    )
    up.artifact_text = _read_artifact(up.artifact_path)
    return up


def _read_artifact(path: str | None) -> str | None:
    if not isinstance(path, str) or not path:
        return None
    for candidate in (Path(path), artifacts_dir() / path):
        try:
            return candidate.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
    return None


def _instructions(prompt_file: str | None) -> str:
    if not prompt_file:
        return ""
    try:
        text = Path(prompt_file).read_text(encoding="utf-8")
    except OSError:
        return ""
    parts = re.split(r"^---\s*$", text, maxsplit=2, flags=re.MULTILINE)
    return parts[2].strip() if len(parts) == 3 and not parts[0].strip() else text.strip()


def _given_instructions(doc: dict[str, Any]) -> str:
    """The agent's instructions as the worker hands them over (`agent.instructions` in the document)."""
    agent = doc.get("agent")
    text = agent.get("instructions") if isinstance(agent, dict) else None
    return text.strip() if isinstance(text, str) else ""


def read_job(stdin_text: str, env: dict[str, str], default_agent: str) -> Job:
    """The signal document from stdin plus the worker's environment, checked."""
    try:
        doc = json.loads(stdin_text)
    except ValueError as exc:
        raise BadInput(f"stdin: is not a JSON signal document ({exc})") from None
    if not isinstance(doc, dict):
        raise BadInput("stdin: must be a JSON object (an AgentSignal document)")
    signal_id = _require(doc, "signal_id", "", str)
    if not SIGNAL_ID.match(signal_id):
        raise BadInput(f"signal_id: must be sig- and 8 lowercase hex digits, got {signal_id!r}")
    env_id = env.get("BLACKBOARD_SIGNAL_ID")
    if env_id and env_id != signal_id:
        raise BadInput(f"BLACKBOARD_SIGNAL_ID is {env_id} but the document on stdin is {signal_id}")
    payload = _require(doc, "payload", "", dict)
    context = payload.get("context") or {}
    if not isinstance(context, dict):
        raise BadInput(f"payload.context: must be an object, got {context!r}")
    context = dict(context)
    upstream = context.pop("upstream", None) or {}
    if not isinstance(upstream, dict):
        raise BadInput("payload.context.upstream: must be an object keyed by signal id")
    prompt = payload.get("prompt") or ""
    if not isinstance(prompt, str):
        raise BadInput(f"payload.prompt: must be text, got {prompt!r}")
    return Job(
        signal_id=signal_id,
        signal_type=str(doc.get("signal_type") or "?"),
        agent=env.get("BLACKBOARD_AGENT") or default_agent,
        ps_id=str(payload.get("ps_id", "")),
        entry_id=str(payload.get("entry_id", "")),
        topic=_require(payload, "topic", "payload.", str).strip(),
        prompt=prompt.strip(),
        context=context,
        upstream=[_upstream(str(k), v) for k, v in sorted(upstream.items())],
        prompt_file=env.get("BLACKBOARD_PROMPT_FILE"),
        instructions=_given_instructions(doc) or _instructions(env.get("BLACKBOARD_PROMPT_FILE")),
    )


# -- text helpers the handlers share ---------------------------------------------------------------
def key_terms(text: str, limit: int = 8) -> list[str]:
    """The most frequent meaningful words, most frequent first (ties in order of first appearance)."""
    words = [w for w in re.findall(r"[A-Za-z][A-Za-z0-9_-]{2,}", text.lower()) if w not in STOPWORDS]
    order = {w: i for i, w in reversed(list(enumerate(words)))}
    counts = Counter(words)
    return sorted(counts, key=lambda w: (-counts[w], order[w]))[:limit]


def sentences(text: str) -> list[str]:
    """The text cut into sentences and list items."""
    pieces = re.split(r"(?<=[.!?])\s+|\n+\s*(?:[-*]|\d+[.)])?\s*", text)
    return [p.strip() for p in pieces if p and p.strip()]


def show(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


def context_lines(context: dict[str, Any]) -> str:
    if not context:
        return "_No context was given with the signal._"
    return "\n".join(f"- **{key}**: {show(value)}" for key, value in sorted(context.items()))


def upstream_lines(upstream: list[Upstream]) -> str:
    """Each upstream result: who did what, its artifact and knowledge items."""
    if not upstream:
        return "_This signal has no upstream results._"
    blocks = []
    for up in upstream:
        head = f"### {up.signal_id}" + (f" ({up.signal_type})" if up.signal_type else "")
        lines = [head]
        if up.topic:
            lines.append(f"- topic: {up.topic}")
        if up.agent:
            lines.append(f"- done by: {up.agent}")
        if up.error:
            lines.append(f"- **error**: {up.error}")
        if up.artifact_path:
            state = "readable" if up.artifact_text is not None else "not found"
            lines.append(f"- artifact: `{up.artifact_path}` ({state})")
        lines += [f"- knows: {item}" for item in up.knowledge_items] or ["- knows: (no knowledge items)"]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


# -- writing the artifact and answering the worker -----------------------------------------------
def artifacts_dir() -> Path:
    """The worker's artifacts folder: never the agents folder this handler runs in, whose Markdown files
    are agents."""
    return Path(os.environ.get("BLACKBOARD_ARTIFACTS_DIR") or "artifacts")


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:40] or "untitled"


def write_artifact(job: Job, report: Report) -> Path:
    """`<artifacts>/<signal id>-<agent>-<topic slug>.md`, returned as an absolute path."""
    folder = artifacts_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = (folder / f"{job.signal_id}-{_slug(job.agent)}-{_slug(job.topic)}.md").resolve()
    now = datetime.now(UTC).replace(microsecond=0).isoformat()
    header = [
        f"# {report.title}",
        "",
        f"- signal: `{job.signal_id}` ({job.signal_type}), PS `{job.ps_id}`, entry `{job.entry_id}`",
        f"- topic: {job.topic}",
        f"- written by: {job.agent}, {now}",
    ]
    if job.prompt_file:
        header.append(f"- instructions: `{job.prompt_file}`")
    body = [f"## {heading}\n\n{text.strip()}" for heading, text in report.sections]
    path.write_text("\n".join(header) + "\n\n" + "\n\n".join(body) + "\n", encoding="utf-8")
    return path


def main(build: Callable[[Job], Report], default_agent: str) -> int:
    """Run one handler: stdin and env in, artifact written, JSON result out; 2 on bad input."""
    try:
        job = read_job(sys.stdin.read(), dict(os.environ), default_agent)
        time.sleep(
            float(os.environ.get("BLACKBOARD_DEMO_PACE", "0") or 0)
        )  # the demo's stand-in for thinking time
        report = build(job)
        path = write_artifact(job, report)
    except BadInput as exc:
        print(f"{default_agent}: bad input: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"{default_agent}: cannot write the artifact: {exc}", file=sys.stderr)
        return 1
    json.dump({"artifact_path": str(path), "knowledge_items": report.knowledge_items}, sys.stdout)
    sys.stdout.write("\n")
    return 0
