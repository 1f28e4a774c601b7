"""Flows on the SQL stores, SQLite and PostgreSQL: the fast replay and the normal path fold a flow's signals
into the same rows, the store's counts by flow are the port's own rule counted where the rows are, and two
runs racing for one flow id leave one flow."""

from __future__ import annotations

import threading

import pytest

from blackboard.application.commands import ClaimSignal, CompleteSignal, FailSignal
from blackboard.application.flows.commands import CancelFlow, FlowSpec, GetFlow, RetryFlow, RunFlow
from blackboard.application.ports import SignalReadModel
from blackboard.domain.flows import FlowExists
from tests.integration.conftest import SqlBoard
from tests.integration.test_replay import both_paths, tables

FLOW = FlowSpec.model_validate(
    {
        "name": "f",
        "description": "three steps",
        "steps": [
            {"id": "find", "capability": "RESEARCH", "topic": "find it", "prompt": "café ☕"},
            {"id": "weigh", "agent": "ps-analyst", "topic": "weigh it", "after": "find"},
            {"id": "ok", "gate": True, "topic": "fine?", "after": ["weigh"]},
            {"id": "review", "capability": "REVIEW", "topic": "review it", "after": ["weigh", "ok"]},
        ],
    }
)


def run(board: SqlBoard, flow_id: str, on: str = "ps-f") -> list:
    return board.service.run_flow(RunFlow(blackboard_id=on, flow=FLOW, flow_id=flow_id))


def busy_flows(board: SqlBoard) -> None:
    """Flows run, advanced, failed, retried and cancelled, on two boards."""
    find, *_ = run(board, "f-1")
    board.service.claim_signal(ClaimSignal(signal_id=find.signal_id, agent_id="ps-researcher"))
    board.service.fail_signal(FailSignal(signal_id=find.signal_id, agent_id="ps-researcher", error="no"))
    retried = board.service.retry_flow(RetryFlow(blackboard_id="ps-f", flow_id="f-1"))
    board.service.claim_signal(ClaimSignal(signal_id=retried[0].signal_id, agent_id="ps-researcher"))
    board.service.complete_signal(CompleteSignal(signal_id=retried[0].signal_id, agent_id="ps-researcher"))
    run(board, "f-2")
    board.service.cancel_flow(CancelFlow(blackboard_id="ps-f", flow_id="f-2"))
    run(board, "f-1", on="ps-g")  # a flow id is a board's: another board may use it


def test_the_fast_replay_folds_a_flow_s_signals_as_the_normal_path_does(sql_engine):
    board = SqlBoard(sql_engine)
    busy_flows(board)
    live = tables(sql_engine)

    normal, fast = both_paths(board, page_size=3)

    assert fast == normal == live
    shown = board.container.flows().flow(GetFlow(blackboard_id="ps-f", flow_id="f-1"))
    assert [(s.step_id, str(s.status), s.tries) for s in shown.steps] == [
        ("find", "COMPLETED", 2),
        ("weigh", "POSTED", 2),
        ("ok", "POSTED", 2),
        ("review", "POSTED", 2),
    ]


def test_the_store_counts_each_flow_s_steps_as_the_port_s_own_rule_does(sql_engine):
    board = SqlBoard(sql_engine)
    busy_flows(board)

    counted = board.read_model.flow_counts()
    by_rule = SignalReadModel.flow_counts(board.read_model)  # the port's default: every signal read

    assert counted == by_rule
    assert [(f.blackboard_id, f.flow_id, f.state, f.counts) for f in counted] == [
        ("ps-f", "f-2", "cancelled", {"CANCELLED": 4}),
        ("ps-f", "f-1", "running", {"POSTED": 3, "COMPLETED": 1}),
        ("ps-g", "f-1", "running", {"POSTED": 4}),
    ]
    assert board.read_model.flow_counts("ps-g") == counted[2:]
    assert [s.step_id for s in board.read_model.flow_signals("ps-f", "f-1")].count("find") == 2


def test_two_runs_racing_for_one_flow_id_leave_one_flow(sql_engine):
    board = SqlBoard(sql_engine)
    outcomes: list[object] = []
    start = threading.Barrier(2)

    def racer() -> None:
        service = board.fresh_service()
        start.wait()
        try:
            outcomes.append(service.run_flow(RunFlow(blackboard_id="ps-f", flow=FLOW, flow_id="one")))
        except FlowExists as refused:
            outcomes.append(refused)

    threads = [threading.Thread(target=racer) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)

    assert sorted(type(o).__name__ for o in outcomes) == ["FlowExists", "list"]
    assert len(board.read_model.flow_signals("ps-f", "one")) == 4


@pytest.fixture(params=["sqlite", "postgresql"])
def sql_engine(request):
    return request.getfixturevalue("sqlite_engine" if request.param == "sqlite" else "pg_engine")
