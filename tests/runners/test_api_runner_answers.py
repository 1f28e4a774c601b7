"""What the anthropic and openai runners make of odd answers, through the real worker and the official SDKs
against the stand-in sending them as given: a body that is not JSON, an answer with no message, missing or
odd usage, odd stop reasons, content blocks of unknown types. The run ends as a success with warnings in its
transcript, or as a failure in the board's words (not the SDK's internals), never a traceback, its usage
kept. Before, each of these ended in `the model API answered with an error: AttributeError ...` (or a
TypeError, an IndexError, the SDK's JSONDecodeError), or passed a refusal off as an answer."""

from __future__ import annotations

import pytest

from tests.runners.standins import call, completion_of, raw, say, stand_in, stream_of, text_block

ANTHROPIC = "runner: anthropic\nmodel: sonnet\n"
OPENAI = "runner: openai\nmodel: gpt-4o\n"
USAGE = {"input_tokens": 100, "output_tokens": 20}
CHAT_USAGE = {"prompt_tokens": 100, "completion_tokens": 20}
ANSWER = "the model API's answer"


def api_env(url: str) -> dict[str, str]:
    return {
        "ANTHROPIC_BASE_URL": url,
        "ANTHROPIC_API_KEY": "sk-ant-test",
        "OPENAI_BASE_URL": f"{url}/v1",
        "OPENAI_API_KEY": "sk-test",
    }


def run_with(board, frontmatter: str, turns: list) -> dict:
    board.agent("writer", frontmatter, "Write.")
    signal = board.post("writer")
    with stand_in(turns) as api:
        board.cli("worker", "--agent", "writer", "--once", env=api_env(api.url)).expect(0)
    return board.show(signal["signal_id"])


def warnings_of(board, done: dict) -> list[str]:
    return [r["warning"] for r in board.transcript(done) if r["type"] == "warning"]


SUCCEEDS = {
    "anthropic-no-usage": (
        ANTHROPIC,
        [raw(stream_of([text_block("hello")]))],
        "hello",
        (0, 0),
        f"{ANSWER}: no usage.input_tokens; counted as 0",
    ),
    "anthropic-odd-usage": (
        ANTHROPIC,
        [
            raw(
                stream_of(
                    [text_block("hello")],
                    {"input_tokens": "many", "output_tokens": 1},
                    {"output_tokens": 2.5},
                )
            )
        ],
        "hello",
        (0, 0),
        f'{ANSWER}: usage.input_tokens is str "many", not a whole number from 0 to 9007199254740991: counted as 0',
    ),
    "anthropic-text-not-text-and-an-unknown-block": (
        ANTHROPIC,
        [
            raw(
                stream_of(
                    [({"type": "hologram", "beam": 1}, None), text_block(42)], USAGE, {"output_tokens": 20}
                )
            )
        ],
        "42",
        (100, 20),
        f'{ANSWER}: a content block is dict {{"type": "hologram", "beam": 1}}, not a text, tool_use or thinking '
        "block: left out",
    ),
    "anthropic-max-tokens": (
        ANTHROPIC,
        [raw(stream_of([text_block("cut sh")], USAGE, {"output_tokens": 20}, stop="max_tokens"))],
        "cut sh",
        (100, 20),
        f"{ANSWER} ended at stop_reason max_tokens (16384 tokens at most): it may be cut short",
    ),
    "anthropic-unknown-stop": (
        ANTHROPIC,
        [raw(stream_of([text_block("hm")], USAGE, {"output_tokens": 20}, stop=["odd"]))],
        "hm",
        (100, 20),
        f'{ANSWER} ended with stop_reason list ["odd"], which the runner does not know: taken as it is',
    ),
    "openai-content-parts": (
        OPENAI,
        [
            raw(
                completion_of(
                    {"role": "assistant", "content": [{"type": "text", "text": "from parts"}]}, CHAT_USAGE
                )
            )
        ],
        "from parts",
        (100, 20),
        None,
    ),
    "openai-odd-usage": (
        OPENAI,
        [
            raw(
                completion_of(
                    {"role": "assistant", "content": "hi"}, {"prompt_tokens": "x", "completion_tokens": -1}
                )
            )
        ],
        "hi",
        (0, 0),
        f"{ANSWER}: usage.completion_tokens is int -1, not a whole number from 0 to 9007199254740991: counted as 0",
    ),
    "openai-odd-tool-call-beside-text": (
        OPENAI,
        [
            raw(
                completion_of(
                    {"role": "assistant", "content": "said", "tool_calls": [{"id": 7, "function": "x"}]},
                    CHAT_USAGE,
                    finish="tool_calls",
                )
            )
        ],
        "said",
        (100, 20),
        f'{ANSWER}: a tool call is dict {{"id": 7, "function": "x"}}, not one with an id and a function: left '
        "out, as it cannot be answered",
    ),
}


@pytest.mark.parametrize(
    "frontmatter, turns, answer, tokens, warning", SUCCEEDS.values(), ids=SUCCEEDS.keys()
)
def test_an_odd_answer_the_run_can_use_completes_with_its_usage_and_a_warning_in_the_transcript(
    board, frontmatter, turns, answer, tokens, warning
):
    done = run_with(board, frontmatter, turns)

    assert (done["status"], done["result"]["knowledge_items"]) == ("COMPLETED", [answer])
    assert (done["usage"]["input_tokens"], done["usage"]["output_tokens"], done["usage"]["turns"]) == (
        *tokens,
        1,
    )
    said = warnings_of(board, done)
    assert (warning in said) if warning else said == [], said


FAILS = {
    "anthropic-not-json": (
        ANTHROPIC,
        [raw([("message_start", "{not json")])],
        f"{ANSWER} could not be read: it is not JSON (Expecting property name enclosed in double quotes at "
        "character 1)",
    ),
    "anthropic-no-message": (
        ANTHROPIC,
        [raw([("message_start", "[1, 2]"), ("message_stop", {"type": "message_stop"})])],
        f"{ANSWER} could not be read: its stream held no message (no message_start)",
    ),
    "anthropic-refusal": (
        ANTHROPIC,
        [raw(stream_of([text_block("I will not.")], USAGE, {"output_tokens": 20}, stop="refusal"))],
        "the model refused to answer (stop_reason refusal): I will not.",
    ),
    "openai-not-json": (
        OPENAI,
        [raw("<html>a proxy's page</html>")],
        f"{ANSWER} could not be read: it is not JSON (Expecting value at character 0)",
    ),
    "openai-no-choices": (
        OPENAI,
        [raw(completion_of(usage=CHAT_USAGE, choices=[]))],
        f"{ANSWER} could not be read: it holds no message (choices: list [])",
    ),
    "openai-no-message": (
        OPENAI,
        [raw(completion_of(usage=CHAT_USAGE))],
        f'{ANSWER} could not be read: it holds no message (choices: list [{{"finish_reason": "stop", "index": 0}}])',
    ),
    "openai-only-unreadable-tool-calls": (
        OPENAI,
        [raw(completion_of({"role": "assistant", "content": None, "tool_calls": [{"id": 7}]}, CHAT_USAGE))],
        f"{ANSWER} could not be read: it holds no text and none of its tool calls can be answered",
    ),
    "openai-content-filter": (
        OPENAI,
        [raw(completion_of({"role": "assistant", "content": None}, CHAT_USAGE, finish="content_filter"))],
        "the model refused to answer (finish_reason content_filter)",
    ),
    "openai-refusal": (
        OPENAI,
        [raw(completion_of({"role": "assistant", "content": None, "refusal": "No."}, CHAT_USAGE))],
        "the model refused to answer (finish_reason stop): No.",
    ),
}


@pytest.mark.parametrize("frontmatter, turns, error", FAILS.values(), ids=FAILS.keys())
def test_an_answer_the_run_cannot_use_fails_the_signal_in_the_board_s_words_with_its_usage(
    board, frontmatter, turns, error
):
    done = run_with(board, frontmatter, [call("blackboard_summary", {}, input_tokens=7), *turns])

    assert (done["status"], done["result"]["error"]) == ("FAILED", error)
    assert done["usage"]["input_tokens"] >= 7 and done["usage"]["turns"] >= 1  # the answers before it count
    assert board.transcript(done)[-1]["error"] == error


def test_unreadable_tool_call_arguments_are_answered_with_why_and_the_run_goes_on(board):
    board.agent("writer", ANTHROPIC, "Write.")
    signal = board.post("writer")
    opened = {"type": "tool_use", "id": "toolu_1", "name": "blackboard_summary", "input": {}}
    broken = (opened, {"type": "input_json_delta", "partial_json": '{"blackboard_id": '})
    with stand_in(
        [raw(stream_of([broken], USAGE, {"output_tokens": 20}, "tool_use")), say("recovered")]
    ) as api:
        board.cli("worker", "--agent", "writer", "--once", env=api_env(api.url)).expect(0)

    done = board.show(signal["signal_id"])
    assert (done["status"], done["result"]["knowledge_items"]) == ("COMPLETED", ["recovered"])
    sent = [b for m in api.model_calls[1].body["messages"] for b in m["content"] if isinstance(b, dict)]
    (answered,) = [b for b in sent if b.get("type") == "tool_result"]
    assert (
        answered["is_error"]
        and answered["content"] == "arguments: must be a JSON object, got '{\"blackboard_id\": '"
    )
