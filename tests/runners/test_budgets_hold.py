"""Budgets that hold under concurrency (docs/control.md, "Limits"), through real workers and the real CLI on
SQLite and PostgreSQL: the anthropic runner against the local stand-in of the Messages API reports what each
run spent. Claims reserve their estimate, so six runner slots on a budget spend within it; a model without a
price waits under a USD budget until it is priced; a solve controller's runs are charged to its board; and a
lapsed claim's concurrency slot is free for the next claim without a sweep. No test calls a real model."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator

import pytest

from blackboard.infrastructure.solve.controller import PACKAGED
from tests.conftest import _own_pg_database
from tests.e2e.test_ui_metrics import samples
from tests.e2e.web import UiServer
from tests.runners.conftest import Board, RunnerCli
from tests.runners.standins import call, say, slow, stand_in
from tests.runners.test_solve import POST_FINDER, SOLVED, solve
from tests.waiting import wait_until

BUDGET, RUN_TOKENS = 250_000, 100_005  # each run reports 100,000 tokens in and 5 out
ESTIMATED = "runner: anthropic\nmodel: sonnet\nestimate: {tokens: 100005}\n"


def api_env(url: str, **more: str) -> dict[str, str]:
    return {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "sk-ant-test", **more}


def statuses(board: Board) -> dict[str, int]:
    found = board.cli.ok("status", "--blackboard", "ps-1")
    return found[0]["signals"] if found else {}


def test_six_runner_slots_on_a_token_budget_spend_within_it_and_the_rest_wait_saying_why(both_board):
    board = both_board
    board.agent("writer", ESTIMATED, "You write.")
    board.cli.ok("budget", "ps-1", "--tokens", str(BUDGET), "--by", "alice")
    # every run takes a while: the six claims would all be made before the first run ends
    with stand_in(lambda body: slow(1.5, say("done", input_tokens=100_000, output_tokens=5))) as api:
        env = api_env(api.url)
        workers = [
            board.cli.start("worker", "--agent", "writer", "--concurrency", "2", env=env) for _ in range(3)
        ]
        ids = [
            board.post("writer", topic=f"part {n}")["signal_id"] for n in range(6)
        ]  # the workers race for them

        wait_until(
            lambda: (s := statuses(board)).get("COMPLETED", 0) >= 2 and not s.get("CLAIMED"),
            timeout=120,
            what="the runs that fit to end",
        )
        for worker in workers:
            worker.send_signal(signal.SIGINT)
        for worker in workers:
            board.cli.finish(worker).expect(0)

    budget = board.cli.ok("budget", "ps-1")
    assert budget["spent_tokens"] <= 1.1 * BUDGET, budget  # before reservations: 600,030 (2.4x)
    assert budget["spent_tokens"] == 2 * RUN_TOKENS and budget["reserved_tokens"] == 0
    assert len(api.model_calls) == 2
    waiting = [s for s in ids if board.show(s)["status"] == "POSTED"]
    assert len(waiting) == 4
    why = f"waits for budget: {2 * RUN_TOKENS:,} of {BUDGET:,} tokens spent or reserved on ps-1"
    shown = board.cli("show", waiting[0]).expect(0).stdout
    assert f"{why}, this run reserves {RUN_TOKENS:,} tokens (agent writer's estimate)" in shown
    planned = board.cli.ok("next", "--blackboard", "ps-1")
    assert planned["next"] == [] and {m["signal_id"] for m in planned["waiting_for_a_budget"]} == set(waiting)
    assert all(why in m["reason"] for m in planned["waiting_for_a_budget"])
    assert "waiting for room in a budget" in board.cli("next").expect(0).stdout


def test_a_usd_budget_claims_nothing_for_a_model_without_a_price_until_one_is_configured(both_board):
    board = both_board
    board.agent("local", "runner: anthropic\nmodel: my-local-model\n", "You write.")
    board.cli.ok("budget", "ps-1", "--usd", "5", "--by", "alice")
    sig = board.post("local")["signal_id"]
    with stand_in([say("done", input_tokens=1000, output_tokens=100)]) as api:
        board.cli("worker", "--agent", "local", "--once", env=api_env(api.url)).expect(0)

        assert board.show(sig)["status"] == "POSTED" and api.model_calls == []
        refused = board.cli("claim", sig, "--agent", "local").expect(3)
        assert "no price for its model my-local-model" in refused.stderr
        assert "BLACKBOARD_PRICES='{\"my-local-model\": [3, 15]}'" in refused.stderr
        [planned] = board.cli.ok("next", "--blackboard", "ps-1")["waiting_for_a_budget"]
        assert planned["signal_id"] == sig and "my-local-model" in planned["reason"]
        assert "has a USD budget" in board.cli("show", sig).expect(0).stdout

        priced = api_env(api.url, BLACKBOARD_PRICES='{"my-local-model": [1, 2]}')
        board.cli("worker", "--agent", "local", "--once", env=priced).expect(0)

    done = board.show(sig)
    assert done["status"] == "COMPLETED" and done["usage"]["cost_usd"] == pytest.approx(
        (1000 * 1 + 100 * 2) / 1e6
    )


@pytest.fixture
def solve_board(both_board) -> Board:
    both_board.agent(
        "finder",
        "capabilities:\n  - type: RESEARCH\n    score: 0.95\ndescription: Finds facts.\ncommand: echo found\n",
        "You find.",
    )
    return both_board


def test_a_solve_controller_s_runs_are_charged_to_its_board(solve_board):
    board = solve_board
    board.cli.ok("budget", "ps-1", "--usd", "1", "--by", "alice")
    script = [
        say(POST_FINDER, input_tokens=1000, output_tokens=100),
        say(SOLVED, input_tokens=2000, output_tokens=200),
    ]
    with stand_in(script) as api:
        solve(board, api.url, "--start-workers", "--max-iterations", "4").expect(0)

    tokens, usd = 1000 + 100 + 2000 + 200, (3000 * 2 + 300 * 10) / 1e6  # sonnet 5.5: $2 in, $10 out
    budget = board.cli.ok("budget", "ps-1")
    assert budget["spent_tokens"] == tokens and budget["spent_usd"] == pytest.approx(usd)
    [status] = board.cli.ok("status", "--blackboard", "ps-1")
    assert status["budget"]["spent_tokens"] == tokens
    controller = status["usage"]["by_agent"]["controller"]
    assert (controller["runs"], controller["input_tokens"], controller["output_tokens"]) == (2, 3000, 300)
    summary = board.cli.ok("summary", "--blackboard", "ps-1")
    assert summary["usage"]["by_agent"]["controller"]["cost_usd"] == pytest.approx(usd)
    board.cli.ok("projection", "rebuild")  # the fold and the fast replay count them alike
    assert board.cli.ok("budget", "ps-1") == budget

    server = UiServer(board.cli).wait_ready()
    try:
        code, _, body = server.get("/metrics")
    finally:
        server.stop()
    assert code == 200
    found = samples(body.decode())
    by = {"agent": "controller", "board": "ps-1"}
    assert found[("blackboard_runner_tokens_total", tuple(sorted({**by, "kind": "input"}.items())))] == 3000
    assert found[("blackboard_runner_cost_usd_total", tuple(sorted(by.items())))] == pytest.approx(usd)


def test_a_solve_whose_board_is_over_budget_stops_before_asking_the_controller_again(solve_board):
    board = solve_board
    board.cli.ok("budget", "ps-1", "--usd", "0.0001", "--by", "alice")
    script = [say("not a decision", input_tokens=1000, output_tokens=100), say(SOLVED)]
    with stand_in(script) as api:
        done = solve(board, api.url, "--max-iterations", "4").expect(3)

    assert len(api.model_calls) == 1  # its first answer spent the budget: it is not asked again
    assert "budget reached" in done.stderr and "blackboard budget ps-1" in done.stderr
    run = done.json()
    assert run["state"] == "stopped" and "budget reached" in run["reason"]


def test_a_lapsed_claim_frees_its_concurrency_slot_for_the_next_claim_without_a_sweep(both_board):
    board = both_board
    keyed = "command: echo done\nconcurrency: {key: one-at-a-time, max: 1}\n"
    board.agent("keyed", keyed, "One at a time.")
    first, second = (board.post("keyed", topic=t)["signal_id"] for t in ("first", "second"))
    short = {"BLACKBOARD_CLAIM_TIMEOUT": "2"}
    board.cli("claim", first, "--agent", "keyed", env=short).expect(0)  # one process claims, then is gone
    assert (
        "concurrency key one-at-a-time"
        in board.cli("claim", second, "--agent", "keyed", env=short).expect(3).stderr
    )

    # another process, no worker and so no sweep: once the first claim lapses its slot is free
    wait_until(
        lambda: board.cli("claim", second, "--agent", "keyed", env=short).returncode == 0,
        timeout=60,
        what="the second claim to go through",
    )
    assert board.show(first)["status"] == "CLAIMED"  # nothing swept it; it counts no more
    assert board.show(second)["claimed_by"] == "keyed"


def test_a_solve_whose_step_the_budget_holds_stops_saying_why_instead_of_waiting_forever(solve_board):
    board = solve_board
    board.cli.ok("budget", "ps-1", "--tokens", "1000", "--by", "alice")
    script = [say(POST_FINDER, input_tokens=1000, output_tokens=100), say(SOLVED)]
    with stand_in(script) as api:  # the decision that posts the step spends the budget: the step waits
        done = board.cli(
            "--json",
            "solve",
            "a problem",
            "--blackboard",
            "ps-1",
            "--runner",
            "anthropic",
            "--start-workers",
            env=api_env(api.url),
            timeout=90,  # before: still waiting for its step when the call was cut off
        ).expect(3)

    assert len(api.model_calls) == 1
    assert "budget reached: 1100 of 1000 tokens spent" in done.stderr
    assert "raise it with blackboard budget ps-1" in done.stderr and "Traceback" not in done.stderr
    run = done.json()
    [step] = run["steps"]
    # The decision's spend is recorded just after its step is posted (docs/control.md): a worker that claims
    # the step in between runs it, and the run stops before its next decision instead. Either way it stops.
    held = "waits for a budget" in done.stderr
    assert run["state"] == "stopped" and ("waits for a budget" in run["reason"]) == held
    assert step["status"] == ("CANCELLED" if held else "COMPLETED")  # a stopped run leaves no work behind
    assert board.cli.ok("solve", "--status", run["run_id"], "--blackboard", "ps-1") == run
    assert "stopped the workers" in done.stderr


def test_solve_refuses_a_controller_whose_model_has_no_price_under_a_usd_budget_until_it_is_priced(
    solve_board,
):
    board = solve_board
    board.cli.ok("budget", "ps-1", "--usd", "1", "--by", "alice")
    local = board.workdir / "local.md"  # the packaged controller's body, its model one without a price
    local.write_text(
        PACKAGED.read_text(encoding="utf-8").replace("model: sonnet", "model: my-local-model"),
        encoding="utf-8",
    )
    with stand_in([say(POST_FINDER), say(SOLVED)]) as api:
        args = ("--json", "solve", "a problem", "--blackboard", "ps-1", "--controller", str(local))
        done = board.cli(*args, "--runner", "anthropic", env=api_env(api.url)).expect(3)
        assert api.model_calls == []  # before: the controller ran, each decision's cost unknown (null)
        assert "has a USD budget" in done.stderr and "no price for its model my-local-model" in done.stderr
        assert "BLACKBOARD_PRICES='{\"my-local-model\": [3, 15]}'" in done.stderr
        assert "Traceback" not in done.stderr
        kinds = [e["event_type"] for e in board.cli.ok("events")]
        assert kinds == ["BoardBudgetSet"]  # nothing written: no problem entry, no run

        priced = api_env(api.url, BLACKBOARD_PRICES='{"my-local-model": [1, 2]}')
        run = board.cli(*args, "--runner", "anthropic", "--start-workers", env=priced).expect(0).json()
    assert run["state"] == "solved"
    assert board.cli.ok("budget", "ps-1")["spent_usd"] > 0  # its decisions priced, charged to the budget


def test_a_cancelled_run_s_spend_is_charged_to_its_board_and_shown(both_board):
    board = both_board
    board.agent("spender", "runner: anthropic\nmodel: sonnet\n", "You spend.")
    board.cli.ok("budget", "ps-1", "--tokens", "1000000", "--by", "alice")
    spent = 5000 + 50  # its first turn's; the second is under way when the run is cancelled
    script = [call("blackboard_summary", {}, input_tokens=5000, output_tokens=50), slow(60, say("late"))]
    with stand_in(script) as api:
        worker = board.cli.start("worker", "--agent", "spender", env=api_env(api.url))
        sig = board.post("spender", topic="spend")["signal_id"]
        wait_until(lambda: len(api.model_calls) == 2, timeout=60, what="the run's second call")
        board.cli.ok("cancel", sig, "--reason", "enough", "--by", "alice")

        # before: the cancelled run's 5,050 tokens were never recorded, and the budget read 0 spent
        budget = wait_until(
            lambda: (b := board.cli.ok("budget", "ps-1"))["spent_tokens"] and b,
            timeout=60,
            what="the cancelled run's spend charged",
        )
        worker.send_signal(signal.SIGINT)
        board.cli.finish(worker).expect(0)
    assert budget["spent_tokens"] == spent and budget["spent_usd"] == pytest.approx(
        (5000 * 2 + 50 * 10) / 1e6
    )
    shown = board.show(sig)
    assert shown["status"] == "CANCELLED" and shown["usage"]["input_tokens"] == 5000
    [status] = board.cli.ok("status", "--blackboard", "ps-1")
    assert status["usage"]["by_agent"]["spender"]["input_tokens"] == 5000
    summary = board.cli.ok("summary", "--blackboard", "ps-1")
    assert summary["usage"]["by_agent"]["spender"]["output_tokens"] == 50
    [charged] = [
        e
        for e in board.cli.ok("events", "--blackboard", "ps-1")
        if e["event_type"] == "AgentSignalRunCharged"
    ]
    assert charged["data"]["charged_to"] == "spender" and "CANCELLED" in charged["data"]["reason"]
    board.cli.ok("projection", "rebuild")  # the fold and the fast replay count it alike
    assert board.cli.ok("budget", "ps-1") == budget


def test_a_run_whose_claim_lapsed_while_its_worker_was_stopped_is_charged_once_it_stops(both_board):
    board = both_board
    board.agent("spender", "runner: anthropic\nmodel: sonnet\n", "You spend.")
    board.cli.ok("budget", "ps-1", "--tokens", "1000000", "--by", "alice")
    script = [call("blackboard_summary", {}, input_tokens=5000, output_tokens=50), slow(60, say("late"))]
    short = {"BLACKBOARD_CLAIM_TIMEOUT": "3"}  # the expirer's: the claim lapses 3 s after its last renewal
    with stand_in(script) as api:
        sig = board.post("spender", topic="spend")["signal_id"]
        worker = board.cli.start(  # its own claim timeout leaves room for a loaded machine's first calls
            "worker",
            "--agent",
            "spender",
            "--once",
            env={**api_env(api.url), "BLACKBOARD_CLAIM_TIMEOUT": "9"},
        )
        wait_until(lambda: len(api.model_calls) == 2, timeout=60, what="the run's second call")
        os.kill(worker.call_pid, signal.SIGSTOP)
        try:  # another process expires the lapsed claim meanwhile
            wait_until(
                lambda: board.cli.ok("expire", env=short) and board.show(sig)["status"] == "EXPIRED",
                timeout=60,
                what="the lapsed claim to expire",
            )
        finally:
            os.kill(worker.call_pid, signal.SIGCONT)
        stopped = board.cli.finish(worker).expect(0)

    assert "only CLAIMED signals can be failed" in stopped.stderr  # its outcome refused: the claim had lapsed
    # before: the run's 5,050 tokens were lost with its refused outcome
    assert board.cli.ok("budget", "ps-1")["spent_tokens"] == 5000 + 50
    assert board.show(sig)["status"] == "EXPIRED"


@pytest.fixture
def fresh_store(both_board, tmp_path) -> Iterator[str]:
    """An empty store of the board's kind, to import an export into."""
    if both_board.cli.db_url.startswith("sqlite"):
        yield f"sqlite:///{tmp_path / 'imported.db'}"
    else:
        yield from _own_pg_database()


def test_a_lapsed_attempt_s_run_is_charged_once_and_its_board_exports_imports_and_rebuilds_alike(
    both_board, fresh_store, tmp_path
):
    """A's claim of attempt 1 lapses, the signal is retried and A claims attempt 2 (another token); attempt
    1's run then stops and its refused outcome is charged, once, for attempt 1. Before: the import of that
    board refused the charge (the later claim's token stood in for the run's: InvalidTransition, CLAIMED)."""
    board = both_board
    board.agent("spender", "runner: anthropic\nmodel: sonnet\nretries: 2\n", "You spend.")
    script = [call("blackboard_summary", {}, input_tokens=5000, output_tokens=50), slow(60, say("late"))]
    with stand_in(script) as api:
        sig = board.post("spender", topic="spend")["signal_id"]
        worker = board.cli.start(
            "worker",
            "--agent",
            "spender",
            "--once",
            env={**api_env(api.url), "BLACKBOARD_CLAIM_TIMEOUT": "9"},
        )
        wait_until(lambda: len(api.model_calls) == 2, timeout=60, what="the run's second call")
        os.kill(worker.call_pid, signal.SIGSTOP)
        try:  # another process finds attempt 1's claim lapsed: retried; A claims attempt 2 once it is due
            short = {"BLACKBOARD_CLAIM_TIMEOUT": "3"}
            wait_until(
                lambda: board.cli.ok("expire", env=short) and board.show(sig)["attempt"] == 2,
                timeout=60,
                what="attempt 1's lapsed claim to be retried",
            )
            wait_until(
                lambda: board.cli("claim", sig, "--agent", "spender", "--token", "t2").returncode == 0,
                timeout=60,
                what="attempt 2 claimed",
            )
        finally:
            os.kill(worker.call_pid, signal.SIGCONT)
        board.cli.finish(worker).expect(0)

    charges = [
        e for e in board.cli.ok("events", "--blackboard", "ps-1") if e["event_type"].endswith("Charged")
    ]
    assert [(c["data"]["charged_to"], c["data"]["attempt"]) for c in charges] == [("spender", 1)]
    shown = board.show(sig)
    assert (shown["status"], shown["attempt"], shown["claimed_by"]) == ("CLAIMED", 2, "spender")
    budget = board.cli.ok("budget", "ps-1")
    assert budget["spent_tokens"] == 5000 + 50

    board.cli("export", "ps-1", "--output", str(tmp_path / "ps-1.json")).expect(0)
    imported = RunnerCli(fresh_store, board.agents, board.workdir)
    try:
        imported("db", "upgrade").expect(0)
        imported("import", str(tmp_path / "ps-1.json")).expect(0)  # before: exit 2, the charge refused
        assert imported.ok("budget", "ps-1") == budget
        assert imported.ok("show", sig)["usage"] == shown["usage"]
    finally:
        imported.close()
    board.cli.ok("projection", "rebuild")
    assert board.cli.ok("budget", "ps-1") == budget
    assert board.show(sig)["usage"] == shown["usage"]
