"""The use cases end to end over a SQLite file and over PostgreSQL."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import select

from blackboard.application.commands import (
    ClaimSignal,
    ClaimSignals,
    CompleteSignal,
    ExpireSignals,
    FailSignal,
    GetOpenSignals,
    GetSignalById,
    ListSignals,
    PostSignal,
    RecordOutcomes,
    WatchSignals,
)
from blackboard.application.ports import SignalFilter
from blackboard.application.projection import Projector
from blackboard.domain.blackboard import BlackboardAggregate
from blackboard.domain.errors import AlreadyClaimed, DependenciesPending, NotTheClaimer
from blackboard.domain.events import AgentSignalExpired
from blackboard.domain.signals import SignalStatus
from blackboard.infrastructure.persistence.tables import EVENTS
from tests.fakes import SEED_RULE, T0
from tests.integration.conftest import SqlBoard


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
        CompleteSignal(
            signal_id=research.signal_id,
            agent_id="ps-researcher",
            artifact_path="r.md",
            knowledge_items=("one", "two"),
        )
    )
    sql_board.service.claim_signal(ClaimSignal(signal_id=review.signal_id, agent_id="ps-reviewer"))
    sql_board.service.claim_signal(ClaimSignal(signal_id=analysis.signal_id, agent_id="ps-analyst"))
    sql_board.service.fail_signal(
        FailSignal(signal_id=analysis.signal_id, agent_id="ps-analyst", error="boom")
    )

    replayed = BlackboardAggregate.replay("ps-1", sql_board.store.load("ps-1")).signals
    projected = {s.signal_id: s for s in sql_board.read_model.find(SignalFilter(blackboard_id="ps-1"))}
    assert projected == replayed
    assert replayed[review.signal_id].status is SignalStatus.CLAIMED
    assert replayed[research.signal_id].result.knowledge_items == ("one", "two")
    assert sql_board.read_model.position() == sql_board.store.last_position() == 8


def test_queries_answer_from_the_tables(sql_board):
    first = post(sql_board, entry_id="e-1")
    review = post(sql_board, "REVIEW", entry_id="e-2", after=(first.signal_id,))
    post(sql_board, "ANALYSIS", entry_id="e-3", blackboard_id="other")
    mark = sql_board.store.last_position()
    sql_board.service.claim_signal(ClaimSignal(signal_id=first.signal_id, agent_id="ps-researcher"))
    sql_board.service.complete_signal(CompleteSignal(signal_id=first.signal_id, agent_id="ps-researcher"))

    open_reviews = sql_board.queries.open_candidates(GetOpenSignals(capabilities=("REVIEW",)))
    on_other = sql_board.queries.list_signals(ListSignals(blackboard_id="other"))
    watched = sql_board.queries.watch(WatchSignals(signal_types=("RESEARCH",), since=mark))

    assert [s.signal_id for s in open_reviews] == [review.signal_id]
    assert [s.signal_type for s in on_other] == ["ANALYSIS"]
    assert [s.signal_id for s in watched.signals] == [first.signal_id]
    assert (
        sql_board.queries.get_signal(GetSignalById(signal_id=first.signal_id)).status
        is SignalStatus.COMPLETED
    )


def test_stored_rows_carry_type_schema_version_and_metadata(sql_board):
    signal = post(sql_board, correlation_id="run-42")
    sql_board.service.claim_signal(ClaimSignal(signal_id=signal.signal_id, agent_id="ps-researcher"))

    with sql_board.engine.connect() as conn:
        rows = conn.execute(select(EVENTS).order_by(EVENTS.c.position)).all()

    assert [(r.event_type, r.schema_version, r.stream_id, r.version) for r in rows] == [
        ("AgentSignalPosted", 11, "ps-1", 1),
        ("AgentSignalClaimed", 5, "ps-1", 2),
    ]
    assert json.loads(rows[0].metadata)["correlation_id"] == "run-42"
    assert json.loads(rows[1].metadata)["actor"] == "ps-researcher"
    assert "signal_id" in json.loads(rows[0].data) and "version" not in json.loads(rows[0].data)


def test_expiry_works_on_the_stored_board(sql_engine):
    sql_board = SqlBoard(sql_engine, SEED_RULE)
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


@pytest.mark.parametrize("projected_by", ["the append", "a catch-up"])
def test_a_worker_s_batches_leave_the_read_model_equal_to_the_replayed_board(sql_board, projected_by):
    if projected_by == "a catch-up":  # a bare append first: the read model is behind, the commands decide on
        # the log and leave the rows to a catch-up (Fold.apply with its prefetch)
        early = sql_board.service.post_signal(
            PostSignal(signal_type="RESEARCH", ps_id="ps-0", entry_id="e-0", topic="t")
        )
        sql_board.store.append(
            "ps-0",
            1,
            [
                AgentSignalExpired(
                    blackboard_id="ps-0",
                    version=2,
                    occurred_at=T0,
                    signal_id=early.signal_id,
                    reason="by hand",
                )
            ],
        )
    up1, up2, up3 = (post(sql_board, entry_id=f"e-{n}").signal_id for n in (1, 2, 3))
    both = post(sql_board, "REVIEW", entry_id="e-4", after=(up1, up2)).signal_id
    only = post(sql_board, "REVIEW", entry_id="e-5", after=(up1,)).signal_id
    doomed = post(sql_board, "REVIEW", entry_id="e-6", after=(up3,)).signal_id
    taken = post(sql_board, entry_id="e-7").signal_id
    sql_board.service.claim_signal(
        ClaimSignal(signal_id=taken, agent_id="ps-analyst", token="ps-analyst/w-2", blackboard_id="ps-1")
    )
    tokens = {sid: f"ps-researcher/w-1/{sid}" for sid in (taken, up1, up2, up3)}  # a token per claim

    claims = sql_board.service.claim_signals(
        ClaimSignals(
            blackboard_id="ps-1",
            signal_ids=(taken, up1, up2, up3),
            agent_id="ps-researcher",
            tokens=tokens,
            limit=3,
        )
    )
    results = sql_board.service.record_outcomes(
        RecordOutcomes(
            blackboard_id="ps-1",
            agent_id="ps-researcher",
            outcomes=(
                CompleteSignal(
                    signal_id=up1, agent_id="ps-researcher", token=tokens[up1], artifact_path="out/1.md"
                ),
                CompleteSignal(
                    signal_id=taken, agent_id="ps-researcher", token=tokens[taken]
                ),  # ps-analyst's claim
                CompleteSignal(
                    signal_id=up2, agent_id="ps-researcher", token=tokens[up2], knowledge_items=("two",)
                ),
                FailSignal(signal_id=up3, agent_id="ps-researcher", token=tokens[up3], error="no sources"),
            ),
        )
    )

    assert [s.signal_id for s in claims.claimed] == [up1, up2, up3] and list(claims.skipped) == [taken]
    assert isinstance(results[1], NotTheClaimer)
    if projected_by == "a catch-up":
        assert sql_board.read_model.get(up1) is None  # not folded by the commands: they decided on the log
        Projector(sql_board.store, sql_board.read_model).catch_up()
    replayed = BlackboardAggregate.replay("ps-1", sql_board.store.load("ps-1")).signals
    projected = {s.signal_id: s for s in sql_board.read_model.find(SignalFilter(blackboard_id="ps-1"))}
    assert projected == replayed
    assert sql_board.read_model.position() == sql_board.store.last_position()
    read = sql_board.read_model.get
    assert [(read(s).status, read(s).claimed_by) for s in (up1, up2, up3, taken)] == [
        (SignalStatus.COMPLETED, "ps-researcher"),
        (SignalStatus.COMPLETED, "ps-researcher"),
        (SignalStatus.FAILED, "ps-researcher"),
        (SignalStatus.CLAIMED, "ps-analyst"),
    ]
    assert read(up1).result.artifact_path == "out/1.md" and read(up2).result.knowledge_items == ("two",)
    assert read(both).waiting_for == frozenset() and read(only).waiting_for == frozenset()
    assert read(doomed).status is SignalStatus.EXPIRED
    open_reviews = sql_board.queries.open_candidates(GetOpenSignals(capabilities=("REVIEW",)))
    assert [s.signal_id for s in open_reviews] == [both, only]  # released: claimable now


def test_capabilities_match_in_any_case_and_the_signal_keeps_them_as_posted(sql_board):
    posted = post(sql_board, target_capabilities=("research", "Research"))  # one capability, twice

    found = sql_board.queries.open_candidates(GetOpenSignals(capabilities=("RESEARCH",)))
    listed = sql_board.queries.list_signals(ListSignals(capability="reSearch"))

    assert posted.status is SignalStatus.POSTED  # a RESEARCH agent fits it
    assert [s.signal_id for s in found] == [s.signal_id for s in listed] == [posted.signal_id]
    assert sql_board.queries.get_signal(GetSignalById(signal_id=posted.signal_id)).target_capabilities == (
        "research",
        "Research",
    )
