"""A solve run's appends that record its controller's spend and `blackboard budget` on the same board, at once,
on PostgreSQL (real concurrency: writers commit side by side): both take the board's budget row before the log's
lock (unit_of_work.commit_in), so neither is ever chosen as a deadlock's victim."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

from blackboard.application.commands import SetBudget
from blackboard.domain.events import SolveDecisionFailed, SolveStarted
from blackboard.domain.signals import SignalUsage
from blackboard.infrastructure.composition.container import Container
from blackboard.infrastructure.composition.settings import BlackboardSettings
from blackboard.infrastructure.persistence.solve.log import SqlSolveLog

ROUNDS = 150


def test_solve_appends_and_budget_changes_of_one_board_at_once_never_deadlock(pg_engine, pg_database_url):
    container = Container(config=BlackboardSettings(db=pg_database_url))
    service, log = container.service(), SqlSolveLog(pg_engine)
    service.set_budget(SetBudget(board="ps-1", tokens=10**9, set_by="alice"))  # the row exists from now on
    now = datetime.now(UTC)
    common = {"blackboard_id": "ps-1", "run_id": "solve-0000000a", "actor": "controller", "occurred_at": now}
    log.append(
        [
            SolveStarted(
                **common,
                version=1,
                problem="p",
                problem_key="k",
                controller="c",
                runner="r",
                max_iterations=1,
            )
        ],
        {},
    )
    errors: list[BaseException] = []
    start = threading.Barrier(2)

    def solve() -> None:
        start.wait()
        for n in range(ROUNDS):
            spent = SignalUsage(runner="anthropic", input_tokens=10, output_tokens=1)
            event = SolveDecisionFailed(**common, version=n + 2, iteration=1, error="e", usage=spent)
            try:
                log.append([event], {})
            except Exception as exc:  # noqa: BLE001 - each one is the failure
                errors.append(exc)
                return

    def budget() -> None:
        start.wait()
        for n in range(ROUNDS):
            try:
                service.set_budget(SetBudget(board="ps-1", tokens=10**9 + n, set_by="alice"))
            except Exception as exc:  # noqa: BLE001
                errors.append(exc)
                return

    threads = [threading.Thread(target=solve), threading.Thread(target=budget)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)

    assert errors == [], [f"{type(e).__name__}: {e} ({e.__cause__})" for e in errors][:3]
    assert container.read_model().budgets("ps-1")["ps-1"].tokens == 10**9 + ROUNDS - 1
    assert (
        sum(u.input_tokens for u in container.read_model().usage_totals("ps-1")["ps-1"].values())
        == ROUNDS * 10
    )
