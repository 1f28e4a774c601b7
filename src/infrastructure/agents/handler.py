"""Running an agent's handler, a shell `command` or a Python `entrypoint`, as docs/agents.md says.

A command runs through the shell, in the agent file's folder, with the signal document (and the
agent under `agent`: name, description, instructions, model, tools) on standard input and
BLACKBOARD_SIGNAL_ID, BLACKBOARD_AGENT and BLACKBOARD_PROMPT_FILE set (a worker adds the run's claim token and
board: keeper/marks.py). Exit 0 with a JSON
object (artifact_path and/or knowledge_items) completes the signal with that result; exit 0 with
plain text completes it with the text as its one knowledge item; any other exit, or running past
`timeout`, fails it with the end of stderr. Its standard error is handed on a line at a time as it is
written (a worker logs each line then: agents/streams.py). An entrypoint is called in this process
(`call_entrypoint_here`, on a lane the worker's supervisor watches), and its return value follows the
same rules (`outcome.from_value`).
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from blackboard.infrastructure.agents.entrypoints import EntrypointNotLoadable, invoke, load_entrypoint
from blackboard.infrastructure.agents.outcome import RETRY_EXIT, HandlerOutcome, from_stdout, from_value
from blackboard.infrastructure.agents.parsing import AgentDefinition
from blackboard.infrastructure.agents.streams import STDERR_TAIL, Streams
from blackboard.infrastructure.runners.processes import STOP_GRACE, kill_tree

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 300.0  # seconds, for an agent file that names none
AFTER_STOP = (
    2.0  # seconds a stopped command's pipes are read on (its lines as it stopped) before they are let go
)
POLL = 0.05  # seconds between looks at cancel, the deadline and the tick while a handler runs
CANCELLED = "stopped: the worker is shutting down and its grace period is over"
ABANDONED = " (the Python call was abandoned; it may still be running)"


def run_handler(
    agent: AgentDefinition,
    document: Mapping[str, Any],
    extra_env: Mapping[str, str] | None = None,
    *,
    tick: Callable[[], None] | None = None,
    tick_every: float = 60.0,
    cancel: threading.Event | None = None,
    stop: Callable[[], str | None] | None = None,
    started: Callable[[int], None] | None = None,
    marks: Mapping[str, str] | None = None,
    on_stderr: Callable[[str], None] | None = None,
    on_stdout: Callable[[str], None] | None = None,
) -> HandlerOutcome:
    """Run the agent's `command` on one signal document and say how it ended.

    While it runs, `tick` is called every `tick_every` seconds (a worker renews its claim there;
    if `tick` raises, the command is stopped and the outcome is a failure naming why). Setting
    `cancel` stops it too. The command runs in a session of its own, so a Ctrl-C meant for the
    worker reaches the worker alone, which decides what happens to its handlers. `stop` is asked every
    POLL seconds for a reason to stop (the signal was cancelled). A stopped command's process group gets
    SIGTERM, then SIGKILL (with every descendant, and every process carrying `marks`: keeper/marks.py) after
    at most a second. `started` gets the command's pid as soon as it runs (a worker's keeper holds it).
    `on_stderr` gets each line of its standard error as it is written (agents/streams.py), a stopped
    command's included; `on_stdout` each line of its standard output as it comes (kept whole for its result
    all the same). (An `entrypoint` goes through `call_entrypoint_here`.)
    """
    timeout = timeout_of(agent)
    if not agent.command:
        return HandlerOutcome(False, error=f"agent {agent.name} has no command in {agent.path}")
    document = with_agent(dict(document), agent)
    env = {
        **os.environ,
        **(extra_env or {}),
        "BLACKBOARD_SIGNAL_ID": str(document["signal_id"]),
        "BLACKBOARD_AGENT": agent.name,
        "BLACKBOARD_PROMPT_FILE": str(agent.path.resolve()),
    }
    process = subprocess.Popen(
        agent.command,
        shell=True,
        cwd=agent.path.resolve().parent,
        env=env,
        start_new_session=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    if started is not None:
        started(process.pid)
    streams = Streams(process, json.dumps(document), on_stderr, on_stdout)
    stopped = _watch(streams.wait, timeout, tick, tick_every, cancel, stop)
    if stopped:
        kill_tree(process, grace=STOP_GRACE, marks=marks)
        streams.wait(AFTER_STOP)  # the lines it wrote while it stopped; a pipe something else holds is let go
    tail = streams.tail()
    if stopped:
        return HandlerOutcome(False, error=stopped + (f": {tail}" if tail else ""))
    if process.returncode == RETRY_EXIT:  # asks for a retry: after its retry_after, or the backoff's wait
        asked = from_stdout(streams.stdout)
        wait = asked.retry_after if not asked.succeeded else None
        said = f"exit {RETRY_EXIT} (asked for a retry): {tail or '(no stderr)'}"
        return HandlerOutcome(False, error=said, retry_after=wait)
    if process.returncode != 0:
        return HandlerOutcome(False, error=f"exit {process.returncode}: {tail or '(no stderr)'}")
    return from_stdout(streams.stdout)


def call_entrypoint_here(agent: AgentDefinition, document: dict[str, Any]) -> HandlerOutcome:
    """Call the agent's entrypoint in this thread and say how it ended; never raises.

    For a caller that runs it on a thread it can give up on (a worker's lane) and watches the
    timeout itself. `document` is handed over as it is: it must be the caller's own fresh copy,
    with JSON values only (as documents.jsonable gives it). It gains the `agent` object, which
    a function taking a second argument (or `agent=`) also gets on its own."""
    try:
        function = load_entrypoint(agent)
    except EntrypointNotLoadable as exc:
        return HandlerOutcome(False, error=str(exc))
    with_agent(document, agent)
    try:
        value = invoke(function, document, document["agent"])
    except BaseException as exc:  # noqa: BLE001 - even sys.exit() in a handler is the call's outcome
        return entrypoint_outcome(agent, None, exc)
    return entrypoint_outcome(agent, value, None)


def with_agent(document: dict[str, Any], agent: AgentDefinition) -> dict[str, Any]:
    """The signal document with the agent beside the signal's fields, under `agent`: its name,
    description, instructions (the file's body), model and tools (AgentSignal allows extra properties)."""
    document["agent"] = agent.handler_view()
    return document


def entrypoint_outcome(agent: AgentDefinition, value: Any, error: BaseException | None) -> HandlerOutcome:
    """What an entrypoint's return value, or the exception it raised, makes of the signal."""
    if error is not None:
        logger.warning("entrypoint %s of agent %s raised", agent.entrypoint, agent.name, exc_info=error)
        said = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
        return HandlerOutcome(False, error=said[:STDERR_TAIL])
    return from_value(value)


def timeout_of(agent: AgentDefinition) -> float:
    return agent.timeout or DEFAULT_TIMEOUT


def _watch(
    ended: Callable[[float], bool],
    timeout: float,
    tick: Callable[[], None] | None,
    tick_every: float,
    cancel: threading.Event | None,
    stop: Callable[[], str | None] | None = None,
) -> str | None:
    """Wait for a handler to end (`ended(seconds)` waits up to that long): None when it ended by
    itself, else the reason to stop it (cancel, timeout, or a tick that raised)."""
    deadline = time.monotonic() + timeout
    next_tick = time.monotonic() + tick_every
    while not ended(min(POLL, max(0.0, deadline - time.monotonic()))):
        now = time.monotonic()
        if cancel is not None and cancel.is_set():
            return CANCELLED
        if stop is not None and (reason := stop()) is not None:
            return reason
        if now >= deadline:
            return f"timed out after {timeout:g}s"
        if tick is not None and now >= next_tick:
            next_tick = now + tick_every
            try:
                tick()
            except Exception as exc:  # noqa: BLE001 - the reason becomes the failure
                return f"stopped: {exc}"
    return None
