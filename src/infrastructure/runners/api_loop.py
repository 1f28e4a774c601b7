"""What the model API runners share: a tool loop on a thread of its own that the worker's thread watches,
the model named by the file or the worker, rate limits waited out, turns and budget counted.

The loop runs apart so that a stop (the timeout, the worker's grace over, the claim lost, a cancel) never
waits for an API call to return: the board tools are closed at once (every later call refused, nothing more
recorded), and the call is cut off (calls.py: its connection shut down, so the API stops sending, and
spending, at once) and its thread left to end.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable
from typing import Any

from blackboard.application.runners import BoardTools, RunControl, RunOutcome, RunRequest, ToolAnswer
from blackboard.infrastructure.runners.answers import SOURCE, ToolCall, Unreadable
from blackboard.infrastructure.runners.calls import CALLS
from blackboard.infrastructure.runners.transcript import Transcript
from blackboard.infrastructure.runners.usage import Tally, resolved_model

logger = logging.getLogger("blackboard.worker")

POLL = 0.05  # seconds between looks at the control while the loop runs
MAX_TOKENS = 16384  # of one answer
FIRST_WAIT, LONGEST_WAIT = 1.0, 60.0  # seconds, when a rate limit says no retry-after


class Stopped(Exception):
    """The run was told to stop while the loop waited out a rate limit."""


_CLIENTS: dict[str, object] = {}  # one SDK client per runner and process: its connections are reused
_CLIENTS_LOCK = threading.Lock()
# The SDKs' HTTP transports log an INFO line per call (`HTTP Request: POST ... "HTTP/1.1 200 OK"`): a line per
# model call in the worker's log. Theirs are held to WARNING unless the user turned an SDK's log on.
SDK_LOGGERS = ("httpx", "httpx2", "httpcore", "httpcore2", "anthropic", "openai")
SDK_LOG_SWITCHES = ("ANTHROPIC_LOG", "OPENAI_LOG")  # each SDK's own: `debug` or `info`


class Loop:
    """One run's state, shared by the loop's thread and the watching one."""

    def __init__(self, request: RunRequest, runner: str, model: str) -> None:
        self.runner = runner
        self.request = request
        self.tally = Tally(runner, model)
        self.transcript = Transcript(request.transcript_path)
        self.stopped = threading.Event()
        self.control: RunControl | None = None  # the worker's, once the run is watched (run_watched)

    def client(self, make: Callable[[], Any]) -> Any:
        """The runner's SDK client, made on first use (it reads its API's environment then)."""
        with _CLIENTS_LOCK:
            if self.runner not in _CLIENTS:
                quiet_sdk_logs()
                _CLIENTS[self.runner] = make()
            return _CLIENTS[self.runner]

    @property
    def tools(self) -> BoardTools:
        assert self.request.tools is not None, "a model API run needs the board's tools"
        return self.request.tools

    def ended(self, succeeded: bool, answer: str = "", error: str | None = None) -> RunOutcome:
        self.transcript.record(
            "result", succeeded=succeeded, answer=answer, error=error, usage=self.usage_now()
        )
        return RunOutcome(succeeded, self.tally.usage(self.request.transcript_path), answer, error)

    def usage_now(self) -> dict[str, object]:
        return self.tally.usage().model_dump(mode="json", exclude={"transcript_path"})

    def call_tool(self, call: ToolCall) -> ToolAnswer:
        """One of the model's tool calls, recorded in the transcript; arguments that could not be read are
        answered with why, as a refused call is."""
        if call.arguments is None:
            said = ToolAnswer(call.unreadable or "arguments: must be a JSON object", True)
        else:
            said = self.tools.call(call.name, call.arguments)
        self.transcript.record(
            "tool_call", name=call.name, arguments=call.arguments, result=said.text, is_error=said.is_error
        )
        return said

    def nudged(self) -> list[str]:
        """Before each model call: the nudges a person sent since the last (docs/agents.md, "Nudges"), as the
        user messages the model reads next, each recorded in the transcript."""
        if self.control is None:
            return []
        said = []
        for nudge in self.control.nudges():
            self.transcript.record("nudge", by=nudge.by, text=nudge.text)
            said.append(nudge.message)
        return said

    def go_on(self) -> None:
        """Before each call out (to the model, to a tool): a stopped run goes no further."""
        if self.stopped.is_set():
            raise Stopped

    def over_limits(self, wants_more: bool) -> str | None:
        """Why the run must end now, after an answer: its turns or its budget spent while it wants more."""
        limits = self.request.limits
        budget = budget_of(self.request)
        if wants_more and budget is not None and (self.tally.cost_usd or 0.0) >= budget:
            return f"budget spent: ${self.tally.cost_usd:.4f} of ${budget:g} before the final answer"
        if wants_more and limits.max_turns is not None and self.tally.turns >= limits.max_turns:
            return f"max_turns reached: {limits.max_turns} turn(s) without a final answer"
        return None

    def waiting_out(
        self, call: Callable[[], object], retry_after: Callable[[Exception], float | None]
    ) -> object:
        """`call`, again after each rate-limit or overload answer, as long as its retry-after says (doubling
        from a second when it says nothing): such an answer is not a failed attempt, only a wait."""
        delay = FIRST_WAIT
        while True:
            self.go_on()
            try:
                return call()
            except Exception as exc:
                wait = retry_after(exc)
                if wait is None:
                    raise
                wait = wait if wait > 0 else delay
                delay = min(LONGEST_WAIT, delay * 2)
                self.transcript.record("rate_limited", error=str(exc)[:500], wait_seconds=wait)
                logger.info("%s: %s; waiting %.1fs", self.request.signal_id, str(exc)[:200], wait)
                if self.stopped.wait(wait):
                    raise Stopped from exc


def quiet_sdk_logs() -> None:
    """The SDKs' loggers at WARNING, unless ANTHROPIC_LOG or OPENAI_LOG asks for their log (then as it says)."""
    if any(os.environ.get(switch) for switch in SDK_LOG_SWITCHES):
        return
    for name in SDK_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)


def budget_of(request: RunRequest) -> float | None:
    return request.limits.max_budget_usd


def model_for(request: RunRequest, aliases: dict[str, str] | None = None) -> str | None:
    """The file's model unless it is `inherit` (or, for another API than Anthropic's, one of Claude Code's
    aliases), else the worker's --model / BLACKBOARD_MODEL; Claude Code's aliases as `aliases` maps them."""
    return resolved_model("anthropic" if aliases else "openai", request.agent.model, request.model)


def run_watched(loop: Loop, work: Callable[[Loop], RunOutcome], control: RunControl) -> RunOutcome:
    """Run `work` on its own thread; end the run as soon as `control` says to stop, closing the board
    tools first, so nothing the abandoned loop sends afterwards is recorded."""
    box: list[RunOutcome] = []
    loop.control = control

    def body() -> None:
        try:
            box.append(work(loop))
        except Stopped:
            pass
        except Exception as exc:  # noqa: BLE001 - whatever the loop raised becomes the run's failure
            if not loop.stopped.is_set():
                box.append(failed(loop, exc))
            # else: its call was cut off as the run stopped; the run's outcome is said already

    thread = threading.Thread(target=body, name=f"run-{loop.request.signal_id}", daemon=True)
    thread.start()
    try:
        while thread.is_alive():
            reason = control.wait(POLL)
            if reason is not None and thread.is_alive():
                loop.stopped.set()
                CALLS.cut(thread)
                loop.tools.close()
                outcome = loop.ended(False, error=reason)
                loop.transcript.close()
                return outcome
    except BaseException:
        loop.stopped.set()  # whatever went wrong here, the run does not go on unwatched
        CALLS.cut(thread)
        loop.tools.close()
        raise
    loop.tools.close()
    loop.transcript.close()
    return box[0]


def failed(loop: Loop, error: Exception) -> RunOutcome:
    """The outcome of a loop that raised: an answer it could not read, or the API's error."""
    if isinstance(error, Unreadable):
        return loop.ended(False, error=str(error))
    if isinstance(error, json.JSONDecodeError):  # the SDK's, for a body (or an event) that is not JSON
        said_ = f"{SOURCE} could not be read: it is not JSON ({error.msg} at character {error.pos})"
        return loop.ended(False, error=said_)
    logger.debug("run of %s failed", loop.request.signal_id, exc_info=error)  # the failure says it
    return loop.ended(False, error=f"the model API answered with an error: {said(error)}")


def said(error: BaseException) -> str:
    text = str(error).strip()
    return f"{type(error).__name__}: {text[:1000]}" if text else type(error).__name__
