"""Snapshots: taken as the board grows, used by a cold load, ignored when unreadable."""

from __future__ import annotations

from sqlalchemy import update

from blackboard.application.commands import ClaimSignal, PostSignal
from blackboard.application.service import Settings
from blackboard.domain.blackboard import BlackboardAggregate
from blackboard.infrastructure.persistence.tables import SNAPSHOTS
from tests.fakes import CountingStore
from tests.integration.conftest import SqlBoard


def grow(board: SqlBoard, count: int) -> list[str]:
    return [
        board.service.post_signal(
            PostSignal(signal_type="RESEARCH", ps_id="ps-1", entry_id=f"e-{n}", topic="t")
        ).signal_id
        for n in range(count)
    ]


def test_a_snapshot_is_taken_once_the_events_since_the_last_reach_the_threshold(sql_engine):
    board = SqlBoard(sql_engine, Settings(snapshot_every=10))
    grow(board, 9)
    assert board.snapshots.get("ps-1") is None

    grow(board, 1)

    version, signals = board.snapshots.get("ps-1")
    assert version == 10 and len(signals) == 10
    assert BlackboardAggregate.restore("ps-1", version, signals).signals == (
        BlackboardAggregate.replay("ps-1", board.store.load("ps-1")).signals
    )


def test_a_cold_load_reads_only_the_events_after_the_snapshot(sql_engine):
    board = SqlBoard(sql_engine, Settings(snapshot_every=10))
    ids = grow(board, 13)
    board.store = counting = CountingStore(board.store)

    board.fresh_service().claim_signal(ClaimSignal(signal_id=ids[0], agent_id="ps-researcher"))

    assert counting.loads == [10]


def test_a_snapshot_of_another_shape_is_ignored_and_the_events_replayed(sql_engine):
    board = SqlBoard(sql_engine, Settings(snapshot_every=10))
    ids = grow(board, 12)
    with sql_engine.begin() as conn:
        conn.execute(update(SNAPSHOTS).values(schema_version=1))
    board.store = counting = CountingStore(board.store)

    claimed = board.fresh_service().claim_signal(ClaimSignal(signal_id=ids[11], agent_id="ps-researcher"))

    assert counting.loads == [0] and claimed.claimed_by == "ps-researcher"


def test_an_older_snapshot_never_replaces_a_newer_one(sql_engine):
    board = SqlBoard(sql_engine)
    board.snapshots.save("ps-1", 20, [])

    board.snapshots.save("ps-1", 10, [])

    assert board.snapshots.get("ps-1")[0] == 20
