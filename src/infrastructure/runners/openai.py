"""The `openai` runner: Chat Completions through the official SDK (`pip install 'agent-blackboard[openai]'`).

Configured by the SDK's own OPENAI_API_KEY and OPENAI_BASE_URL, so it also reaches any server that speaks
the same API (a local model server, a proxy). The body is the system message, the signal the user
message, the board's tools (the MCP server's, bound to the claim) offered as functions, in a loop until
the model answers without a tool call. A 429 is waited out as its retry-after says. Each answer's body is
read by openai_answer.py, not through the SDK's typed models.
"""

from __future__ import annotations

from typing import Any

from blackboard.application.runners import RunControl, Runner, RunOutcome, RunRequest
from blackboard.infrastructure.runners import catalog
from blackboard.infrastructure.runners.answers import Answer, judged
from blackboard.infrastructure.runners.anthropic import NO_MODEL, refused, retry_after_seconds, unpriced
from blackboard.infrastructure.runners.api_loop import Loop, budget_of, model_for, run_watched
from blackboard.infrastructure.runners.calls import cuttable
from blackboard.infrastructure.runners.openai_answer import STOPS, read_completion
from blackboard.infrastructure.runners.usage import Tally

RETRIED_STATUSES = frozenset({429, 503})  # rate limited, overloaded


class OpenAIRunner(Runner):
    name = "openai"

    def missing(self) -> str | None:
        return catalog.missing(self.name)

    def prepare(self) -> None:
        import openai  # noqa: F401 - the SDK takes seconds to import: once per worker, not per run

    def run(self, request: RunRequest, control: RunControl) -> RunOutcome:
        model = model_for(request)
        if model is None:
            return refused(self.name, NO_MODEL)
        if budget_of(request) is not None and not Tally(self.name, model).priced():
            return refused(self.name, unpriced(model), model)
        loop = Loop(request, self.name, model)
        loop.tally.priced()
        return run_watched(loop, _converse, control)


def _converse(loop: Loop) -> RunOutcome:
    import openai  # the optional SDK, imported by a run only

    request = loop.request
    client = loop.client(
        lambda: openai.OpenAI(max_retries=0, http_client=cuttable(openai.DefaultHttpxClient))
    )
    tools = [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": dict(t.input_schema)},
        }
        for t in loop.tools.specs()
    ]
    loop.transcript.record(
        "request",
        model=loop.tally.model,
        system=request.agent.instructions,
        prompt=request.prompt,
        tools=[t["function"]["name"] for t in tools],
    )
    system = [{"role": "system", "content": request.agent.instructions}] if request.agent.instructions else []
    messages: list[dict[str, Any]] = [*system, *loop.opening()]
    while True:
        messages.extend({"role": "user", "content": text} for text in loop.nudged())  # after the tool results

        def ask() -> Answer:
            raw = client.chat.completions.with_raw_response.create(
                model=str(loop.tally.model),
                messages=messages,
                tools=tools or openai.NOT_GIVEN,  # none: a run with no board (solve's controller)
            )
            loop.headers = raw.headers  # what the API says of its rate limits
            return read_completion(raw.parse(), loop.transcript.warning)

        answer = loop.waiting_out(ask, _retry_after)
        assert isinstance(answer, Answer)
        loop.tally.add(*answer.usage)
        loop.transcript.record("response", message=answer.sent, usage=loop.usage_now())
        if (refusal := judged(answer, STOPS, loop.transcript.warning)) is not None:
            return loop.ended(False, error=refusal)
        if (over := loop.over_limits(wants_more=bool(answer.calls))) is not None:
            return loop.ended(False, error=over)
        if not answer.calls:
            return loop.ended(True, answer=answer.text)
        loop.told(messages, answer.kept)
        results = []  # kept together once all are in: a later attempt continues from whole turns only
        for call in answer.calls:
            loop.go_on()
            result = loop.call_tool(call)
            results.append({"role": "tool", "tool_call_id": call.id, "content": result.text})
        for message in results:
            loop.told(messages, message)


def _retry_after(error: Exception) -> float | None:
    import openai

    if not isinstance(error, openai.APIStatusError) or error.status_code not in RETRIED_STATUSES:
        return None
    return retry_after_seconds(error.response.headers)
