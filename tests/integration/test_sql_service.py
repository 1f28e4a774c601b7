"""The use cases end to end over a SQLite file and over PostgreSQL."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from application.commands import (
    ClaimSignal,
    CompleteSignal,
    ExpireSignals,
    FailSignal,
    GetOpenSignals,
    GetSignalById,
    ListSignals,
    PostSignal,
    WatchSignals,
)
from application.ports import SignalFilter
from domain.blackboard import BlackboardAggregate
from domain.errors import AlreadyClaimed, DependenciesPending
from domain.signals import SignalStatus
from infrastructure.persistence.tables import EVENTS


def post(board, kind="RESEARCH", **fields):
    base = dict(signal_type=kind, ps_id="ps-1", entry_id="e-1", topic=f"{kind.lower()} topic")
    return board.service.post_signal(PostSignal(**{**base, **fields}))


def test_a_whole_story_leaves_the_read_model_equal_to_the_replayed_board(sql_board):
    research = post(sql_board)
    review = post(sql_board, "REVIEW", after=(research.signal_id,))
    analysis = post(sql_board, "ANALYSIS")
    sql_board.service.claim_signal(ClaimSignal(signal_id=research.signal_id, agent_id="ps-researcher"))
    with pytest.raises(AlreadyClaimed, match="ps-researcher"):
        sql_board.service.claim_signal(ClaimSignal(signal_id=research.signal_id, agent_id="ps-analyst"))
    with pytest.raises(DependenciesPending):
        sql_board.service.claim_signal(ClaimSignal(signal_id=review.signal_id, agent_id="ps-reviewer"))
    sql_board.service.complete_signal(
        CompleteSignal(signal_id=research.signal_id, agent_id="ps-researcher", artifact_path="r.md",
                       knowledge_items=("one", "two"))
    )
    sql_board.service.claim_signal(ClaimSignal(signal_id=review.signal_id, agent_id="ps-reviewer"))
    sql_board.service.claim_signal(ClaimSignal(signal_id=analysis.signal_id, agent_id="ps-analyst"))
    sql_board.service.fail_signal(FailSignal(signal_id=analysis.signal_id, agent_id="ps-analyst", error="boom"))

    replayed = BlackboardAggregate.replay("ps-1", sql_board.store.load("ps-1")).signals
    projected = {s.signal_id: s for s in sql_board.read_model.find(SignalFilter())}
    assert projected == replayed
    assert replayed[review.signal_id].status is SignalStatus.CLAIMED
    assert replayed[research.signal_id].result.knowledge_items == ("one", "two")
    assert sql_board.read_model.position() == sql_board.store.last_position() == 8


def test_queries_answer_from_the_tables(sql_board):
    first = post(sql_board, entry_id="e-1")
    post(sql_board, "REVIEW", entry_id="e-2", after=(first.signal_id,))
    post(sql_board, "ANALYSIS", entry_id="e-3", blackboard_id="other")
    mark = sql_board.store.last_position()
    sql_board.service.claim_signal(ClaimSignal(signal_id=first.signal_id, agent_id="ps-researcher"))
    sql_board.service.complete_signal(CompleteSignal(signal_id=first.signal_id, agent_id="ps-researcher"))

    open_reviews = sql_board.queries.open_signals(GetOpenSignals(capabilities=("REVIEW",)))
    on_other = sql_board.queries.list_signals(ListSignals(blackboard_id="other"))
    watched = sql_board.queries.watch(WatchSignals(signal_types=("RESEARCH",), since=mark))

    assert [s.signal_type for s in open_reviews] == ["REVIEW"]
    assert [s.signal_type for s in on_other] == ["ANALYSIS"]
    assert [s.signal_id for s in watched.signals] == [first.signal_id]
    assert sql_board.queries.get_signal(GetSignalById(signal_id=first.signal_id)).status is SignalStatus.COMPLETED


def test_stored_rows_carry_type_schema_version_and_metadata(sql_board):
    signal = post(sql_board, correlation_id="run-42")
    sql_board.service.claim_signal(ClaimSignal(signal_id=signal.signal_id, agent_id="ps-researcher"))

    with sql_board.engine.connect() as conn:
        rows = conn.execute(select(EVENTS).order_by(EVENTS.c.position)).all()

    assert [(r.event_type, r.schema_version, r.stream_id, r.version) for r in rows] == [
        ("AgentSignalPosted", 2, "ps-1", 1), ("AgentSignalClaimed", 2, "ps-1", 2)
    ]
    assert json.loads(rows[0].metadata)["correlation_id"] == "run-42"
    assert json.loads(rows[1].metadata)["actor"] == "ps-researcher"
    assert "signal_id" in json.loads(rows[0].data) and "version" not in json.loads(rows[0].data)


def test_expiry_works_on_the_stored_board(sql_board):
    signal = post(sql_board)
    sql_board.clock.advance(31)

    ended = sql_board.service.expire_signals(ExpireSignals())

    assert [s.signal_id for s in ended] == [signal.signal_id]
    assert sql_board.read_model.get(signal.signal_id).status is SignalStatus.EXPIRED


def test_a_new_process_sees_what_another_one_wrote(sql_board):
    signal = post(sql_board)
    other_process = sql_board.fresh_service()

    claimed = other_process.claim_signal(ClaimSignal(signal_id=signal.signal_id, agent_id="ps-researcher"))

    assert claimed.claimed_by == "ps-researcher"
    with pytest.raises(AlreadyClaimed):  # the first service's cached board is stale: it must reload
        sql_board.service.claim_signal(ClaimSignal(signal_id=signal.signal_id, agent_id="ps-analyst"))
