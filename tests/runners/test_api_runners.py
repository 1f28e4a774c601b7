"""The anthropic and openai runners through the real worker and the official SDKs, against local stand-ins
for each API: what the model was sent, the board tools it called (bound to the claim), the outcome and the
usage recorded with it. No test calls a real model."""

from __future__ import annotations

import json
import time
from datetime import datetime

import pytest

from blackboard import Blackboard
from tests.runners.claude import BOUND_TOOLS
from tests.runners.standins import Endless, call, fail, say, slow, stand_in
from tests.waiting import wait_until

WRITER = "runner: anthropic\nmodel: sonnet\n"


def anthropic_env(url: str) -> dict[str, str]:
    return {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "sk-ant-test"}


def openai_env(url: str) -> dict[str, str]:
    return {"OPENAI_BASE_URL": f"{url}/v1", "OPENAI_API_KEY": "sk-test"}


def test_an_anthropic_run_sends_the_body_and_the_signal_and_its_tool_calls_are_held_to_the_key_permissions(
    board,
):
    board.agent("writer", WRITER, "You are WRITER-BODY.")
    signal = board.post(
        "writer", "--prompt", "P-TEXT", "--write-key", "notes/*", "--read-key", "notes/*", topic="summarise X"
    )
    script = [
        call(
            "blackboard_write", {"key": "notes/draft", "value": "inside"}, input_tokens=1000, output_tokens=50
        ),
        call("blackboard_write", {"key": "secret/x", "value": "outside"}),
        call("blackboard_complete", {"signal_id": signal["signal_id"]}),
        say("FINAL ANSWER", input_tokens=2000, output_tokens=100),
    ]
    with stand_in(script) as api:
        board.cli("worker", "--agent", "writer", "--once", env=anthropic_env(api.url)).expect(0)

    done = board.show(signal["signal_id"])
    assert (done["status"], done["result"]["knowledge_items"]) == ("COMPLETED", ["FINAL ANSWER"])
    first = api.model_calls[0].body
    assert first["model"] == "claude-sonnet-5-5"  # Claude Code's alias, as the anthropic runner maps it
    assert first["system"] == "You are WRITER-BODY."
    prompt = first["messages"][0]["content"]
    assert "summarise X" in prompt and "P-TEXT" in prompt and "notes/*" in prompt
    assert {t["name"] for t in first["tools"]} == BOUND_TOOLS
    results = [
        b
        for m in api.model_calls[3].body["messages"]
        if m["role"] == "user"
        for b in m["content"]
        if isinstance(b, dict)
    ]
    inside, outside, complete = results
    assert not inside["is_error"] and outside["is_error"] and complete["is_error"]
    assert "secret/x is not in its write keys" in outside["content"]
    assert "no tool blackboard_complete" in complete["content"]
    entries = board.entries()
    assert (
        entries["notes/draft"]["value"] == "inside"
        and entries["notes/draft"]["signal_id"] == signal["signal_id"]
    )
    assert entries["notes/draft"]["author"] == "writer" and "secret/x" not in entries
    usage = done["usage"]
    assert (usage["runner"], usage["model"], usage["turns"]) == ("anthropic", "claude-sonnet-5-5", 4)
    assert (usage["input_tokens"], usage["output_tokens"]) == (1000 + 100 + 100 + 2000, 50 + 20 + 20 + 100)
    assert usage["cost_usd"] == pytest.approx(
        (3200 * 2 + 190 * 10) / 1e6
    )  # sonnet 5.5: $2 in, $10 out per Mtok
    kinds = [r["type"] for r in board.transcript(done)]
    assert kinds[0] == "request" and kinds.count("tool_call") == 3 and kinds[-1] == "result"
    assert board.cli.ok("show", signal["signal_id"], "--transcript") == board.transcript(done)
    shown = board.cli("show", signal["signal_id"], "--transcript").expect(0).stdout.splitlines()
    assert shown[0] == f"transcript of {signal['signal_id']} (anthropic): {usage['transcript_path']}"
    assert (
        '  tool blackboard_write({"key": "secret/x", "value": "outside"}) refused: write of secret/x'
        in "\n".join(shown)
    )
    assert shown[-1] == "  result: succeeded: FINAL ANSWER"


def test_a_signal_no_runner_ran_has_no_transcript_to_show(board):
    signal = board.post("nobody")

    refused = board.cli("show", signal["signal_id"], "--transcript").expect(4)

    assert (
        refused.stderr
        == f"blackboard: {signal['signal_id']} has no transcript: no runner's run of it kept one\n"
    )


def test_an_openai_run_takes_its_model_from_the_worker_and_completes_with_the_json_answer(board):
    board.agent("analyst", "runner: openai\n", "You are ANALYST-BODY.")
    signal = board.post("analyst", topic="compare the options")
    answer = json.dumps({"knowledge_items": ["option A is cheaper", "option B is faster"]})
    script = [call("blackboard_summary", {}), say(answer, input_tokens=300, output_tokens=40)]
    with stand_in(script) as api:
        board.cli(
            "worker", "--agent", "analyst", "--once", "--model", "gpt-4o", env=openai_env(api.url)
        ).expect(0)

    done = board.show(signal["signal_id"])
    assert done["result"]["knowledge_items"] == ["option A is cheaper", "option B is faster"]
    first, second = (c.body for c in api.model_calls)
    assert first["model"] == "gpt-4o" and first["messages"][0] == {
        "role": "system",
        "content": "You are ANALYST-BODY.",
    }
    assert {t["function"]["name"] for t in first["tools"]} == BOUND_TOOLS
    summary = json.loads(second["messages"][-1]["content"])
    assert summary["blackboard_id"] == "ps-1" and summary["signals_by_status"] == {"CLAIMED": 1}
    usage = done["usage"]
    assert (usage["runner"], usage["model"], usage["turns"], usage["input_tokens"]) == (
        "openai",
        "gpt-4o",
        2,
        400,
    )
    assert usage["cost_usd"] == pytest.approx((400 * 2.5 + 60 * 10) / 1e6)


def test_an_api_run_searches_the_entries_of_its_own_board_and_of_no_other(board):
    """Issue 34, item 5: a model run through the API had no search among its tools (and no shell to run
    `blackboard search` in); its bound tools now offer blackboard_search, on the run's board only."""
    for where, text in (
        ("ps-1", "an LRU cache in front of the read model"),
        ("ps-other", "an LRU cache too"),
    ):
        board.cli.ok(
            "write", "notes/cache", "--blackboard", where, "--author", "me", "--value", json.dumps(text)
        )
    board.cli.ok("write", "notes/queue", "--blackboard", "ps-1", "--author", "me", "--value", '"a queue"')
    board.agent("finder", WRITER, "You find what the board knows.")
    signal = board.post("finder", topic="what caches do we have?")
    script = [
        call("blackboard_search", {"text": "LRU cache"}),
        call("blackboard_search", {"text": "cache", "blackboard_id": "ps-other"}),
        say("one cache: notes/cache"),
    ]
    with stand_in(script) as api:
        board.cli("worker", "--agent", "finder", "--once", env=anthropic_env(api.url)).expect(0)

    assert board.show(signal["signal_id"])["status"] == "COMPLETED"
    offered = {t["name"]: t for t in api.model_calls[0].body["tools"]}
    assert "blackboard_id" not in offered["blackboard_search"]["input_schema"]["properties"]
    results = [
        b
        for m in api.model_calls[2].body["messages"]
        if m["role"] == "user"
        for b in m["content"]
        if isinstance(b, dict)
    ]
    found, elsewhere = results
    hits = json.loads(found["content"])
    assert not found["is_error"] and [(h["blackboard_id"], h["key"]) for h in hits] == [
        ("ps-1", "notes/cache")
    ]
    assert elsewhere["is_error"] and "blackboard_id" in elsewhere["content"]  # another board: not an argument


def test_a_rate_limited_answer_is_waited_out_as_its_retry_after_says_and_is_no_failed_attempt(board):
    board.agent("writer", WRITER, "Write.")
    signal = board.post("writer")
    script = [fail(429, "rate_limit_error", "slow down", {"retry-after": "1"}), say("done after the wait")]
    with stand_in(script) as api:
        started = time.monotonic()
        board.cli("worker", "--agent", "writer", "--once", env=anthropic_env(api.url)).expect(0)
        took = time.monotonic() - started

    done = board.show(signal["signal_id"])
    assert done["status"] == "COMPLETED" and done["usage"]["turns"] == 1
    assert len(api.model_calls) == 2 and took >= 1.0
    assert "rate_limited" in [r["type"] for r in board.transcript(done)]


def test_an_api_error_fails_the_signal_naming_it_with_the_usage_so_far(board):
    board.agent("writer", WRITER, "Write.")
    signal = board.post("writer")
    script = [call("blackboard_summary", {}), fail(400, "invalid_request_error", "prompt is too long")]
    with stand_in(script) as api:
        board.cli("worker", "--agent", "writer", "--once", env=anthropic_env(api.url)).expect(0)

    done = board.show(signal["signal_id"])
    assert done["status"] == "FAILED"
    assert "the model API answered with an error" in done["result"]["error"]
    assert "prompt is too long" in done["result"]["error"]
    assert done["usage"]["turns"] == 1 and done["usage"]["input_tokens"] == 100


def test_the_smaller_budget_wins_and_spending_it_fails_the_run(board):
    board.agent("writer", WRITER + "max_budget_usd: 5\n", "Write.")
    signal = board.post("writer", "--budget-usd", "0.01")
    script = [call("blackboard_summary", {}, input_tokens=10_000), say("never reached")]
    with stand_in(script) as api:
        board.cli("worker", "--agent", "writer", "--once", env=anthropic_env(api.url)).expect(0)

    done = board.show(signal["signal_id"])
    assert done["budget_usd"] == 0.01 and done["status"] == "FAILED"
    assert done["result"]["error"].startswith("budget spent: $0.0202 of $0.01")
    assert len(api.model_calls) == 1


def test_max_turns_reached_fails_the_run(board):
    board.agent("writer", WRITER + "max_turns: 2\n", "Write.")
    signal = board.post("writer")
    with stand_in([call("blackboard_summary", {})] * 5) as api:
        board.cli("worker", "--agent", "writer", "--once", env=anthropic_env(api.url)).expect(0)

    done = board.show(signal["signal_id"])
    assert done["result"]["error"] == "max_turns reached: 2 turn(s) without a final answer"
    assert len(api.model_calls) == 2 and done["usage"]["turns"] == 2


def test_a_run_past_its_timeout_fails_at_once_and_nothing_its_late_answer_asks_for_is_recorded(board):
    board.agent("writer", WRITER + "timeout: 2\n", "Write.")
    signal = board.post("writer", "--write-key", "notes/*")
    script = [slow(5, call("blackboard_write", {"key": "notes/late", "value": "too late"})), say("never")]
    with stand_in(script) as api:
        worker = board.cli.start("worker", "--agent", "writer", env=anthropic_env(api.url))
        until(lambda: board.show(signal["signal_id"])["status"] == "FAILED", 60)
        until(lambda: time.monotonic() > 0 and len(api.model_calls) == 1, 5)
        time.sleep(6)  # the abandoned call's answer comes meanwhile; the worker is still up
        worker.terminate()
        board.cli.finish(worker)

    done = board.show(signal["signal_id"])
    assert done["result"]["error"] == "timed out after 2s (the agent file's timeout)"
    ran = datetime.fromisoformat(done["completed_at"]) - datetime.fromisoformat(done["claimed_at"])
    assert ran.total_seconds() < 5  # failed at its timeout, not when the slow answer came
    assert "notes/late" not in board.entries() and len(api.model_calls) == 1


def until(condition, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the condition did not hold in time"
        time.sleep(0.1)


def test_a_run_that_needs_a_price_it_does_not_have_for_its_budget_fails_before_calling_the_model(board):
    board.agent("local", "runner: openai\nmodel: my-local-model\nmax_budget_usd: 1\n", "Answer.")
    signal = board.post("local")
    with stand_in([say("never")]) as api:
        board.cli("worker", "--agent", "local", "--once", env=openai_env(api.url)).expect(0)

    done = board.show(signal["signal_id"])
    assert (
        "no price for my-local-model" in done["result"]["error"]
        and "BLACKBOARD_PRICES" in done["result"]["error"]
    )
    assert not api.model_calls


def test_a_price_given_in_blackboard_prices_prices_the_run(board):
    board.agent("local", "runner: openai\nmodel: my-local-model\nmax_budget_usd: 1\n", "Answer.")
    signal = board.post("local")
    env = {"BLACKBOARD_PRICES": '{"my-local-model": [1, 2]}'}
    with stand_in([say("priced", input_tokens=1_000_000, output_tokens=0)]) as api:
        board.cli("worker", "--agent", "local", "--once", env={**openai_env(api.url), **env}).expect(0)

    assert board.show(signal["signal_id"])["usage"]["cost_usd"] == pytest.approx(1.0)


def test_a_file_with_no_model_and_no_worker_model_fails_saying_where_a_model_comes_from(board):
    board.agent("writer", "runner: anthropic\nmodel: inherit\n", "Write.")
    signal = board.post("writer")
    with stand_in([say("never")]) as api:
        board.cli("worker", "--agent", "writer", "--once", env=anthropic_env(api.url)).expect(0)

    error = board.show(signal["signal_id"])["result"]["error"]
    assert "worker --model nor BLACKBOARD_MODEL" in error and not api.model_calls


def test_blackboard_model_names_the_model_and_the_alias_maps_for_anthropic(board):
    board.agent("writer", "runner: anthropic\n", "Write.")
    board.post("writer")
    with stand_in([say("ok")]) as api:
        env = {**anthropic_env(api.url), "BLACKBOARD_MODEL": "haiku"}
        board.cli("worker", "--agent", "writer", "--once", env=env).expect(0)

    assert api.model_calls[0].body["model"] == "claude-haiku-5-5"


def test_summary_and_status_total_the_usage_per_agent_and_board(board):
    board.agent("writer", WRITER, "Write.")
    board.agent("analyst", "runner: openai\nmodel: gpt-4o\n", "Analyse.")
    board.post("writer", topic="one")
    board.post("writer", topic="two")
    board.post("analyst", topic="three")
    with stand_in(
        [say("a", input_tokens=100, output_tokens=10), say("b", input_tokens=200, output_tokens=20)]
    ) as api:
        board.cli("worker", "--agent", "writer", "--once", env=anthropic_env(api.url)).expect(0)
        board.cli("worker", "--agent", "writer", "--once", env=anthropic_env(api.url)).expect(0)
    with stand_in([say("c", input_tokens=1000, output_tokens=100)]) as api:
        board.cli("worker", "--agent", "analyst", "--once", env=openai_env(api.url)).expect(0)

    usage = board.cli.ok("summary", "--blackboard", "ps-1")["usage"]
    assert (usage["runs"], usage["input_tokens"], usage["output_tokens"], usage["turns"]) == (3, 1300, 130, 3)
    assert usage["by_agent"]["writer"]["runs"] == 2 and usage["by_agent"]["writer"]["input_tokens"] == 300
    assert usage["by_agent"]["analyst"]["cost_usd"] == pytest.approx((1000 * 2.5 + 100 * 10) / 1e6)
    assert usage["cost_usd"] == pytest.approx((300 * 2 + 30 * 10 + 1000 * 2.5 + 100 * 10) / 1e6)
    (status,) = board.cli.ok("status")
    assert status["usage"] == usage
    with Blackboard(
        board.cli.db_url, agents_dir=board.agents
    ) as api:  # the Python API's document is the same
        assert api.summary(blackboard_id="ps-1").usage.model_dump(mode="json") == usage
    text = board.cli("status").expect(0).stdout
    assert "runner usage" in text and "writer" in text and "analyst" in text
    summary_text = board.cli("summary", "--blackboard", "ps-1").expect(0).stdout
    assert "runner usage: 3 run(s), 1,300 tokens in" in summary_text


def test_an_unpriced_model_s_cost_is_unknown_in_summary_and_status_never_zero(board):
    """Issue 34, item 10: a model the runner cannot price reported `cost_usd: 0.0`, which a dashboard reads as
    free. Runs none of which had a price have an unknown cost (null); a total with priced runs too is theirs,
    `unpriced_runs` saying how many are left out."""
    board.agent("local", "runner: openai\nmodel: my-local-model\n", "Work locally.")
    board.agent("analyst", "runner: openai\nmodel: gpt-4o\n", "Analyse.")
    board.post("local", topic="one")
    with stand_in([say("a", input_tokens=100, output_tokens=10)]) as api:
        board.cli("worker", "--agent", "local", "--once", env=openai_env(api.url)).expect(0)

    alone = board.cli.ok("summary", "--blackboard", "ps-1")["usage"]
    assert (alone["runs"], alone["unpriced_runs"], alone["cost_usd"]) == (1, 1, None)
    assert alone["by_agent"]["local"]["cost_usd"] is None
    (status,) = board.cli.ok("status")
    assert status["usage"] == alone
    assert "cost unknown (1 unpriced)" in board.cli("summary", "--blackboard", "ps-1").expect(0).stdout
    assert "cost unknown (1 unpriced)" in board.cli("status").expect(0).stdout
    with Blackboard(board.cli.db_url, agents_dir=board.agents) as api:
        assert api.summary(blackboard_id="ps-1").usage.cost_usd is None

    board.post("analyst", topic="two")
    with stand_in([say("b", input_tokens=1000, output_tokens=100)]) as api:
        board.cli("worker", "--agent", "analyst", "--once", env=openai_env(api.url)).expect(0)

    both = board.cli.ok("summary", "--blackboard", "ps-1")["usage"]
    priced = (1000 * 2.5 + 100 * 10) / 1e6
    assert (both["runs"], both["unpriced_runs"]) == (2, 1)
    assert both["cost_usd"] == pytest.approx(priced)  # the priced runs' cost, the unpriced one said apart
    assert both["by_agent"]["local"]["cost_usd"] is None
    assert both["by_agent"]["analyst"]["cost_usd"] == pytest.approx(priced)


@pytest.mark.parametrize("runner", ["anthropic", "openai"])
def test_a_worker_s_log_holds_no_line_per_http_call_unless_the_sdk_s_log_is_asked_for(board, runner):
    """Issue 34, item 10: the API runners' worker logged the SDK transport's `HTTP Request: POST ...` line for
    every model call. The SDKs' loggers are quiet (WARNING) in the worker, unless ANTHROPIC_LOG or OPENAI_LOG
    asks for them."""
    board.agent(
        "talker", f"runner: {runner}\nmodel: {'sonnet' if runner == 'anthropic' else 'gpt-4o'}\n", "Talk."
    )
    env_of = anthropic_env if runner == "anthropic" else openai_env
    switch = "ANTHROPIC_LOG" if runner == "anthropic" else "OPENAI_LOG"
    logs = []
    for asked in ({}, {switch: "debug"}):
        board.post("talker", topic="say something")
        with stand_in([call("blackboard_summary", {}), say("said")]) as api:
            env = {**env_of(api.url), **asked}
            logs.append(board.cli("worker", "--agent", "talker", "--once", env=env).expect(0).stderr)

    quiet, asked_for = logs
    assert "completed" in quiet and "HTTP Request" not in quiet, quiet
    assert "HTTP Request: POST" in asked_for, asked_for


@pytest.mark.parametrize(
    ("frontmatter", "env"),
    [("runner: anthropic\nmodel: sonnet\n", anthropic_env), ("runner: openai\nmodel: gpt-4o\n", openai_env)],
    ids=["anthropic", "openai"],
)
def test_a_cancelled_api_run_closes_its_model_call_at_once(board, frontmatter, env):
    """Before: the worker gave the run up, but its thread read on: the Messages API's stream went on being read
    (tokens spent), a Chat Completions call stayed open for its answer, until the worker itself ended."""
    board.agent("writer", frontmatter, "Write.")
    signal = board.post("writer")
    with Endless() as api:
        worker = board.cli.start("worker", "--agent", "writer", env=env(api.url))
        wait_until(lambda: api.calls, 60, "the model call")
        cancelled = time.monotonic()  # as the cancel starts: the CLI call itself takes some of the time
        board.cli("cancel", signal["signal_id"], "--reason", "not needed").expect(0)
        wait_until(lambda: api.closed, 30, "the worker to close the model call")
        closed_after = api.closed[0] - cancelled
        wait_until(lambda: board.show(signal["signal_id"])["status"] == "CANCELLED", 30, "the cancel")
        worker.terminate()
        stopped = board.cli.finish(worker)

    assert closed_after < 5, f"the call was closed {closed_after:.1f}s after the cancel"
    assert api.calls == 1 and "Traceback" not in stopped.stderr
