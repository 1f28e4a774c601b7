"""The `anthropic` runner: the Messages API through the official SDK (`pip install 'agent-blackboard[anthropic]'`).

The body is the system prompt, the signal the first user message, the board's tools (the MCP server's,
bound to the claim) offered as tools; each answer that calls tools gets their results and is asked
again, until one answers without a tool call: the final answer. Each answer's stream of events is read
by anthropic_stream.py, not by the SDK's accumulator, so no shape of it ends a run with the SDK's
internals. The SDK reads ANTHROPIC_API_KEY and ANTHROPIC_BASE_URL itself. Its own retries are off: a 429
or an overload is waited out here, as long as its retry-after says, and counts as no attempt.
"""

from __future__ import annotations

from typing import Any

from blackboard.application.runners import RunControl, Runner, RunOutcome, RunRequest
from blackboard.infrastructure.runners import catalog
from blackboard.infrastructure.runners.answers import Answer, judged
from blackboard.infrastructure.runners.anthropic_stream import STOPS, read_stream
from blackboard.infrastructure.runners.api_loop import MAX_TOKENS, Loop, budget_of, model_for, run_watched
from blackboard.infrastructure.runners.calls import cuttable
from blackboard.infrastructure.runners.usage import ANTHROPIC_ALIASES, Tally

RETRIED_STATUSES = frozenset({429, 529})  # rate limited, overloaded


class AnthropicRunner(Runner):
    name = "anthropic"

    def missing(self) -> str | None:
        return catalog.missing(self.name)

    def prepare(self) -> None:
        import anthropic  # noqa: F401 - the SDK takes seconds to import: once per worker, not per run

    def run(self, request: RunRequest, control: RunControl) -> RunOutcome:
        model = model_for(request, ANTHROPIC_ALIASES)
        if model is None:
            return refused(self.name, NO_MODEL)
        if budget_of(request) is not None and not Tally(self.name, model).priced():
            return refused(self.name, unpriced(model), model)
        loop = Loop(request, self.name, model)
        loop.tally.priced()
        return run_watched(loop, _converse, control)


def _converse(loop: Loop) -> RunOutcome:
    import anthropic  # the optional SDK, imported by a run only

    request = loop.request
    client = loop.client(
        lambda: anthropic.Anthropic(max_retries=0, http_client=cuttable(anthropic.DefaultHttpxClient))
    )
    tools = [
        {"name": t.name, "description": t.description, "input_schema": dict(t.input_schema)}
        for t in loop.tools.specs()
    ]
    loop.transcript.record(
        "request",
        model=loop.tally.model,
        system=request.agent.instructions,
        prompt=request.prompt,
        tools=[t["name"] for t in tools],
    )
    messages = loop.opening()
    while True:
        nudge(messages, loop.nudged())

        def ask() -> Answer:
            with client.messages.create(
                model=str(loop.tally.model),
                max_tokens=MAX_TOKENS,
                system=request.agent.instructions or anthropic.NOT_GIVEN,
                messages=messages,
                tools=tools or anthropic.NOT_GIVEN,  # none: a run with no board (solve's controller)
                stream=True,
            ) as stream:
                loop.headers = getattr(getattr(stream, "response", None), "headers", None)
                return read_stream(loop.streamed(stream), loop.transcript.warning)

        answer = loop.waiting_out(ask, _retry_after)
        assert isinstance(answer, Answer)
        loop.tally.add(*answer.usage)
        loop.transcript.record(
            "response", content=answer.sent, stop_reason=answer.stop, usage=loop.usage_now()
        )
        if (refusal := judged(answer, STOPS, loop.transcript.warning, MAX_TOKENS)) is not None:
            return loop.ended(False, error=refusal)
        if (over := loop.over_limits(wants_more=bool(answer.calls))) is not None:
            return loop.ended(False, error=over)
        if not answer.calls:
            return loop.ended(True, answer=answer.text)
        loop.told(messages, {"role": "assistant", "content": answer.kept})
        results = []
        for use in answer.calls:
            loop.go_on()
            said = loop.call_tool(use)
            results.append(
                {
                    "type": "tool_result",
                    "tool_use_id": use.id,
                    "content": said.text,
                    "is_error": said.is_error,
                }
            )
        loop.told(messages, {"role": "user", "content": results})


def nudge(messages: list[dict[str, Any]], said: list[str]) -> None:
    """The nudges as text blocks of the user turn the next call ends with (the prompt, or the tool results:
    the Messages API wants the tool results first in that turn, and takes text after them)."""
    if not said:
        return
    last = messages[-1]
    content = last["content"]
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
    last["content"] = [*blocks, *({"type": "text", "text": text} for text in said)]


def _retry_after(error: Exception) -> float | None:
    """Seconds to wait before asking again, 0 for "not said"; None when the error is no rate limit."""
    import anthropic

    if not isinstance(error, anthropic.APIStatusError) or error.status_code not in RETRIED_STATUSES:
        return None
    return retry_after_seconds(error.response.headers)


def retry_after_seconds(headers: Any) -> float:
    """`retry-after-ms`, else `retry-after` in seconds; 0 when neither is a number."""
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        try:
            return max(0.0, float(headers.get(name)) * scale)
        except (TypeError, ValueError):
            continue
    return 0.0


NO_MODEL = (
    "no model: the agent file's model is absent or inherit, and neither worker --model nor BLACKBOARD_MODEL "
    "names one"
)


def unpriced(model: str) -> str:
    return (
        f"a budget is set, but the runner has no price for {model}, so it could not keep to it "
        "(add the model to BLACKBOARD_PRICES, in USD per million tokens: '{\"" + model + "\": [3, 15]}')"
    )


def refused(runner: str, error: str, model: str | None = None) -> RunOutcome:
    """A run that could not start: nothing was spent."""
    return RunOutcome(False, Tally(runner, model).usage(), error=error)
