"""Running an agent's handler `command` exactly as contracts/agent-file.md says.

The command runs through the shell, in the agent file's folder, with the signal document on
standard input and BLACKBOARD_SIGNAL_ID, BLACKBOARD_AGENT and BLACKBOARD_PROMPT_FILE set. Exit 0
with a JSON object (artifact_path and/or knowledge_items) completes the signal with that result;
exit 0 with plain text completes it with the text as its one knowledge item; any other exit, or
running past `timeout`, fails it with the end of stderr.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from infrastructure.agents.parsing import AgentDefinition

DEFAULT_TIMEOUT = 300.0  # seconds, for an agent file that names none
STDERR_TAIL = 2000  # characters of stderr kept as the failure's error


@dataclass(frozen=True, slots=True)
class HandlerOutcome:
    succeeded: bool
    artifact_path: str | None = None
    knowledge_items: tuple[str, ...] = field(default_factory=tuple)
    error: str | None = None


def run_handler(
    agent: AgentDefinition, document: Mapping[str, Any], extra_env: Mapping[str, str] | None = None
) -> HandlerOutcome:
    """Run the agent's command on one signal document and say how it ended."""
    if not agent.command:
        return HandlerOutcome(False, error=f"agent {agent.name} has no command in {agent.path}")
    timeout = agent.timeout or DEFAULT_TIMEOUT
    env = {
        **os.environ,
        **(extra_env or {}),
        "BLACKBOARD_SIGNAL_ID": str(document["signal_id"]),
        "BLACKBOARD_AGENT": agent.name,
        "BLACKBOARD_PROMPT_FILE": str(agent.path.resolve()),
    }
    try:
        done = subprocess.run(
            agent.command, shell=True, cwd=agent.path.resolve().parent, env=env, input=json.dumps(document),
            capture_output=True, text=True, timeout=timeout,
        )
    except subprocess.TimeoutExpired as expired:
        tail = _tail(expired.stderr)
        return HandlerOutcome(False, error=f"timed out after {timeout:g}s" + (f": {tail}" if tail else ""))
    if done.returncode != 0:
        tail = _tail(done.stderr) or "(no stderr)"
        return HandlerOutcome(False, error=f"exit {done.returncode}: {tail}")
    return _result(done.stdout)


def _result(stdout: str) -> HandlerOutcome:
    text = stdout.strip()
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        value = None
    if isinstance(value, dict) and ("artifact_path" in value or "knowledge_items" in value):
        items = value.get("knowledge_items") or []
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            return HandlerOutcome(False, error="handler output: knowledge_items must be a list of strings")
        artifact = value.get("artifact_path")
        if artifact is not None and not isinstance(artifact, str):
            return HandlerOutcome(False, error="handler output: artifact_path must be a string")
        return HandlerOutcome(True, artifact, tuple(items))
    return HandlerOutcome(True, knowledge_items=(text,) if text else ())


def _tail(stderr: str | bytes | None) -> str:
    if stderr is None:
        return ""
    text = stderr.decode(errors="replace") if isinstance(stderr, bytes) else stderr
    return text.strip()[-STDERR_TAIL:]
