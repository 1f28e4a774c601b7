"""Shared rate limits (docs/control.md, "Rate limits") through real workers and the real CLI on SQLite and
PostgreSQL, the anthropic runner against the local stand-in of the Messages API keeping a rate limit of its
own: eight runner slots in two worker processes keep to the key's window (the API never answers 429), what
waits says `waiting: rate limit K`; a 429's retry-after closes the window for every process holding the key,
the remaining requests the API's headers say (Anthropic's and OpenAI's) bound it, and a multi-turn run takes
room for each call. No test calls a real model."""

from __future__ import annotations

import signal
import threading
import time
from datetime import datetime
from typing import Any

import pytest

from tests.runners.conftest import Board
from tests.runners.standins import ApiLimit, Turn, call, fail, say, stand_in
from tests.runners.test_budgets_hold import api_env
from tests.waiting import wait_until

KEY = "model-api"


def limited(rpm: int) -> str:
    return (
        f"capabilities: {{WRITING: 0.9}}\nrunner: anthropic\nmodel: sonnet\n"
        f"rate_limit: {{key: {KEY}, requests_per_minute: {rpm}}}\n"
    )


def statuses(board: Board) -> dict[str, int]:
    found = board.cli.ok("status", "--blackboard", "ps-1")
    return found[0]["signals"] if found else {}


def stop(board: Board, workers: list[Any]) -> None:
    for worker in workers:
        worker.send_signal(signal.SIGINT)
    for worker in workers:
        board.cli.finish(worker).expect(0)


def test_eight_slots_in_two_processes_keep_to_the_window_and_what_waits_says_so(both_board):
    board = both_board
    board.agent("writer", limited(12), "You write.")  # the API's own limit: the same 12 a minute
    ids = [board.post("WRITING", topic=f"part {n}")["signal_id"] for n in range(15)]
    with stand_in(lambda body: say("done"), ApiLimit(12)) as api:
        env = api_env(api.url)
        workers = [
            board.cli.start("worker", "--agent", "writer", "--concurrency", "4", env=env) for _ in range(2)
        ]
        planned = wait_until(
            lambda: (p := board.cli.ok("next", "--blackboard", "ps-1"))["waiting_for_a_rate_limit"] and p,
            timeout=60,
            what="a signal the window holds",
        )
        held = planned["waiting_for_a_rate_limit"][0]
        assert held["key"] == KEY and held["reason"] == f"waiting: rate limit {KEY}"
        wait_until(lambda: statuses(board).get("COMPLETED") == 15, timeout=120, what="every run to end")
        stop(board, workers)

    assert all(status == 200 for _, status in api.limit.answered), api.limit.answered
    assert len(api.model_calls) == 15
    assert {board.show(s)["status"] for s in ids} == {"COMPLETED"}


def test_a_429_closes_the_window_for_every_process_holding_the_key(both_board):
    board = both_board
    board.agent("writer", limited(600), "You write.")  # room enough: only the API's word holds it
    calls: list[float] = []
    lock = threading.Lock()

    def answer(body: dict[str, Any]) -> Turn:
        with lock:
            calls.append(time.monotonic())
            first = len(calls) == 1
        return fail(429, "rate_limit_error", "slow down", {"retry-after": "8"}) if first else say("done")

    first = board.post("WRITING", topic="first")["signal_id"]
    with stand_in(answer) as api:
        env = api_env(api.url)
        workers = [board.cli.start("worker", "--agent", "writer", env=env)]
        wait_until(lambda: calls, timeout=60, what="the first call")
        second = board.post("WRITING", topic="second")["signal_id"]
        workers.append(board.cli.start("worker", "--agent", "writer", env=env))  # another process
        planned = wait_until(
            lambda: (p := board.cli.ok("next", "--blackboard", "ps-1"))["waiting_for_a_rate_limit"] and p,
            timeout=30,
            what="the window closed for everyone",
        )
        assert [m["signal_id"] for m in planned["waiting_for_a_rate_limit"]] == [second]
        assert f"waiting: rate limit {KEY}" in board.cli("show", second).expect(0).stdout
        wait_until(lambda: statuses(board).get("COMPLETED") == 2, timeout=120, what="both runs to end")
        stop(board, workers)

    assert len(calls) == 3  # the 429, then one call a run
    assert all(later - calls[0] >= 7.5 for later in calls[1:]), calls
    assert board.show(first)["status"] == board.show(second)["status"] == "COMPLETED"


def test_a_multi_turn_run_takes_room_for_each_call(both_board):
    board = both_board
    board.agent("writer", limited(6), "You write.")  # a minute's worth is 6 calls, then one every 10 s
    calls: list[float] = []
    lock = threading.Lock()

    def answer(body: dict[str, Any]) -> Turn:
        with lock:
            calls.append(time.time())
            n = len(calls)
        return call("blackboard_summary", {}) if n < 7 else say("done")

    sig = board.post("WRITING", topic="a long run")["signal_id"]
    with stand_in(answer) as api:
        board.cli("worker", "--agent", "writer", "--once", env=api_env(api.url)).expect(0)

    done = board.show(sig)
    assert done["status"] == "COMPLETED" and len(calls) == 7
    # a full window holds six calls (the claim took the first's room): the seventh waits until a request
    # came back, 10 s after the claim at the earliest
    claimed = datetime.fromisoformat(done["claimed_at"]).timestamp()
    assert calls[6] - claimed >= 9.9, (claimed, calls)


@pytest.mark.parametrize("runner", ["anthropic", "openai"])
def test_the_apis_remaining_requests_bound_the_window_for_everyone(both_board, runner):
    board = both_board
    board.agent(  # the file says 2 a minute; the API has room for 1 only, and says so in its headers
        "writer",
        f"capabilities: {{WRITING: 0.9}}\nrunner: {runner}\nmodel: a-model\n"
        f"rate_limit: {{key: {KEY}, requests_per_minute: 2}}\n",
        "You write.",
    )
    first = board.post("WRITING", topic="first")["signal_id"]
    with stand_in(lambda body: say("done"), ApiLimit(1)) as api:
        env = {**api_env(api.url), "OPENAI_BASE_URL": f"{api.url}/v1", "OPENAI_API_KEY": "sk-test"}
        board.cli("worker", "--agent", "writer", "--once", env=env).expect(0)
        second = board.post("WRITING", topic="second")["signal_id"]

        planned = board.cli.ok("next", "--blackboard", "ps-1")  # well within the 30 s a request takes back
        refused = board.cli("claim", second, "--agent", "writer").expect(3)

    assert board.show(first)["status"] == "COMPLETED"
    assert [m["signal_id"] for m in planned["waiting_for_a_rate_limit"]] == [second]
    assert f"waiting: rate limit {KEY}" in refused.stderr
    assert [status for _, status in api.limit.answered] == [200]
