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
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
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
    agent: AgentDefinition,
    document: Mapping[str, Any],
    extra_env: Mapping[str, str] | None = None,
    *,
    tick: Callable[[], None] | None = None,
    tick_every: float = 60.0,
    cancel: threading.Event | None = None,
) -> HandlerOutcome:
    """Run the agent's command on one signal document and say how it ended.

    While it runs, `tick` is called every `tick_every` seconds (a worker renews its claim there;
    if `tick` raises, the command is stopped and the outcome is a failure naming why). Setting
    `cancel` stops the command too. The command runs in a session of its own, so a Ctrl-C meant
    for the worker reaches the worker alone, which decides what happens to its handlers.
    """
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
    process = subprocess.Popen(
        agent.command, shell=True, cwd=agent.path.resolve().parent, env=env, text=True, start_new_session=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    collected: dict[str, str] = {}
    talker = threading.Thread(target=lambda: collected.update(zip(("out", "err"), process.communicate(json.dumps(document)))))
    talker.start()
    deadline, next_tick = time.monotonic() + timeout, time.monotonic() + tick_every
    stopped: str | None = None
    while talker.is_alive():
        talker.join(timeout=min(0.05, max(0.0, deadline - time.monotonic())))
        now = time.monotonic()
        if not talker.is_alive():
            break
        if cancel is not None and cancel.is_set():
            stopped = "stopped: the worker is shutting down and its grace period is over"
        elif now >= deadline:
            stopped = f"timed out after {timeout:g}s"
        elif tick is not None and now >= next_tick:
            next_tick = now + tick_every
            try:
                tick()
            except Exception as exc:  # noqa: BLE001 - the reason becomes the failure
                stopped = f"stopped: {exc}"
        if stopped:
            _kill(process)
            talker.join()
    tail = _tail(collected.get("err"))
    if stopped:
        return HandlerOutcome(False, error=stopped + (f": {tail}" if tail else ""))
    if process.returncode != 0:
        return HandlerOutcome(False, error=f"exit {process.returncode}: {tail or '(no stderr)'}")
    return _result(collected.get("out", ""))


def _kill(process: subprocess.Popen[str]) -> None:
    """The command and everything it started."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


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
