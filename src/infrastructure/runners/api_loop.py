"""What the model API runners share: a tool loop on a thread of its own that the worker's thread watches,
the model named by the file or the worker, rate limits waited out, turns and budget counted.

The loop runs apart so that a stop (the timeout, the worker's grace over, the claim lost, a cancel) never
waits for an API call to return: the board tools are closed at once (every later call refused, nothing more
recorded), and the call is cut off (calls.py: its connection shut down, so the API stops sending, and
spending, at once) and its thread left to end.

Each message of the conversation is kept in the transcript as it is added (a `message` record), so a later
attempt at the signal continues from the latest earlier attempt's conversation it finds, up to its last
whole turn, told to go on (`Loop.opening`), rather than starting afresh (docs/agents.md, "Resume instead of
restart"); its usage counts its own calls alone.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from blackboard.application.rates import napped
from blackboard.application.runners import BoardTools, RunControl, RunOutcome, RunRequest, ToolAnswer
from blackboard.infrastructure.runners.answers import SOURCE, ToolCall, Unreadable
from blackboard.infrastructure.runners.calls import CALLS
from blackboard.infrastructure.runners.prompt import resumed_prompt
from blackboard.infrastructure.runners.rate_headers import headers_of, rate_said
from blackboard.infrastructure.runners.transcript import Transcript
from blackboard.infrastructure.runners.usage import Tally, resolved_model

logger = logging.getLogger("blackboard.worker")
T = TypeVar("T")

POLL = 0.05  # seconds between looks at the control while the loop runs
MAX_TOKENS = 16384  # of one answer
MESSAGE = '{"type": "message"'  # how a transcript's line of the conversation starts (transcript._stamped)
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
        self.tally = Tally(runner, model, session_id=request.session_id)
        self.transcript = Transcript(request.transcript_path, request.output)
        self.stopped = threading.Event()
        self.progressed: Callable[[], None] = lambda: None  # the control's (run_watched): a sign of progress
        self.headers: Any = None  # the last answer's headers, as the runner's call found them
        self.control: RunControl | None = None  # the worker's, once the run is watched (run_watched)

    def opening(self) -> list[dict[str, Any]]:
        """The conversation the run starts with (its system prompt apart): the latest earlier attempt's it
        finds, and a message telling it to go on; else the prompt alone. Each message kept in the transcript."""
        messages: list[dict[str, Any]] = []
        earlier = earlier_conversation(self.request, self.runner)
        if earlier is None:
            self.told(messages, {"role": "user", "content": self.request.prompt})
            return messages
        self.tally.resumed_from, conversation = earlier
        for message in conversation:
            self.told(messages, message)
        self.told(messages, {"role": "user", "content": resumed_prompt(self.request, earlier[0])})
        return messages

    def told(self, messages: list[dict[str, Any]], message: dict[str, Any]) -> None:
        """`message` added to the conversation, and kept in the transcript for a later attempt."""
        messages.append(message)
        self.transcript.record("message", runner=self.runner, message=message)

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
        self.progressed()
        return said

    def streamed(self, items: Iterable[T]) -> Iterator[T]:
        """`items` (an answer's stream of events) as they come, each one a sign of progress."""
        for item in items:
            self.progressed()
            yield item

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
        from a second when it says nothing): such an answer is not a failed attempt, only a wait. Under a
        rate limit (the request's `rate`), each call first takes its room in the key's shared window, and
        what it cost and what the API said (a 429's retry-after, the rate-limit headers) are reported to it."""
        delay, gate = FIRST_WAIT, self.request.rate
        while True:
            self.go_on()
            if gate is not None and not gate.before_call(self.stopped, self.progressed):
                raise Stopped
            self.headers = None
            try:
                answer = call()
            except Exception as exc:
                wait = retry_after(exc)
                if gate is not None:
                    gate.after_call(
                        None, rate_said(headers_of(exc), wait if wait is not None and wait > 0 else None)
                    )
                if wait is None:
                    raise
                wait = wait if wait > 0 else delay
                delay = min(LONGEST_WAIT, delay * 2)
                self.transcript.record("rate_limited", error=str(exc)[:500], wait_seconds=wait)
                logger.info("%s: %s; waiting %.1fs", self.request.signal_id, str(exc)[:200], wait)
                if self._waited_out(wait):
                    raise Stopped from exc
                continue
            self.progressed()
            if gate is not None:
                usage = getattr(answer, "usage", None)
                gate.after_call(sum(usage[:2]) if usage else None, rate_said(self.headers))
            return answer

    def _waited_out(self, seconds: float) -> bool:
        """Wait out a rate limit, True if stopped meanwhile. The API answered: waiting as it says is progress,
        so a wait longer than the stall timeout is no stall (docs/control.md, "Stalls")."""
        return napped(self.stopped, seconds, self.progressed)


def earlier_conversation(request: RunRequest, runner: str) -> tuple[str, list[dict[str, Any]]] | None:
    """The latest earlier attempt's conversation this runner kept, with its session's id; None when no
    earlier attempt's transcript is here or holds a whole turn of this runner's."""
    for run in request.earlier:
        messages = kept_conversation(Path(run.transcript_path), runner)
        if messages:
            return run.session_id, messages
    return None


def kept_conversation(path: Path, runner: str) -> list[dict[str, Any]]:
    """The conversation a transcript kept, up to its last whole turn: an answer whose tool calls have no
    results yet (the run stopped between them) is left out, and so is a conversation with no answer."""
    messages: list[dict[str, Any]] = []
    try:
        with path.open(encoding="utf-8", errors="replace") as lines:
            for line in lines:
                if not line.startswith(MESSAGE):
                    continue
                try:
                    record = json.loads(line)
                except ValueError:  # its last line, cut by a worker that died as it wrote it
                    continue
                if record.get("runner") == runner and isinstance(record.get("message"), dict):
                    messages.append(record["message"])
    except OSError:
        return []
    while messages and messages[-1].get("role") == "assistant":
        messages.pop()
    return messages if any(m.get("role") == "assistant" for m in messages) else []


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

    loop.progressed = control.progressed
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
