"""Claims and outcomes hold their signals, not the board (PostgreSQL: row locks under the board's lock
taken shared; SQLite: the one writer): docs/persistence.md, "Writing"."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest

from blackboard.application.commands import ClaimSignal, ClaimSignals, CompleteSignal, PostSignal
from blackboard.application.ports import Hold, Scope, SignalFilter
from blackboard.application.projection import Projector
from blackboard.application.service import Settings
from blackboard.domain.signals import SignalStatus
from tests.integration.conftest import SqlBoard

BOARD = "b-rows"


def post(board: SqlBoard, n: int, **fields) -> list[str]:
    return [
        board.service.post_signal(
            PostSignal(signal_type="RESEARCH", ps_id=BOARD, entry_id=f"e-{i}", topic=f"t {i}", **fields)
        ).signal_id
        for i in range(n)
    ]


def in_thread(work) -> tuple[threading.Thread, list]:
    done: list = []

    def run() -> None:
        done.append(work())

    thread = threading.Thread(target=run)
    thread.start()
    return thread, done


def test_a_signal_held_by_one_transaction_is_skipped_by_claims_and_the_board_waits_for_it(pg_engine):
    board = SqlBoard(pg_engine)
    held_id, free_id, other_id = post(board, 3)
    release = threading.Event()
    loaded = threading.Event()

    def hold_one() -> None:  # a claim of `held_id` that has read its row and not committed yet
        with board.unit_of_work().board(BOARD, Hold.SIGNALS) as tx:
            tx.load(Scope(signals=(held_id,)))
            loaded.set()
            release.wait(10)

    holder = threading.Thread(target=hold_one)
    holder.start()
    assert loaded.wait(10)
    try:
        # another signal of the board is claimed meanwhile, without waiting for the holder
        started = time.monotonic()
        alone = board.fresh_service().claim_signal(ClaimSignal(signal_id=other_id, agent_id="ps-researcher"))
        # a worker's batch skips the held signal and takes the next one
        batch = board.fresh_service().claim_signals(
            ClaimSignals(blackboard_id=BOARD, signal_ids=(held_id, free_id), agent_id="ps-analyst", limit=1)
        )
        took = time.monotonic() - started
        # a command on the whole board (a post) waits until the holder ends
        poster, posted = in_thread(lambda: post(board, 1))
        time.sleep(0.3)
        waited = not posted
    finally:
        release.set()
        holder.join(10)
    poster.join(10)

    assert alone.status is SignalStatus.CLAIMED
    assert [s.signal_id for s in batch.claimed] == [free_id] and held_id in batch.skipped
    assert took < 5
    assert waited and posted


@pytest.mark.parametrize("workers", [4])
def test_claims_and_completions_side_by_side_keep_the_board_whole(sql_engine, workers):
    """Workers claiming and completing on one board at once: each signal claimed once and completed
    once, the board's events numbered 1, 2, ... in commit order, and the rows the commits wrote are
    the rows a rebuild folds from the log."""
    day = timedelta(days=1)  # the test's clock moves a second a reading: nothing expires meanwhile
    board = SqlBoard(sql_engine, Settings(claim_threshold=0.5, post_timeout=day, claim_timeout=day))
    ids = post(board, 24)
    first = post(board, 1, after=(ids[0],))  # released by the completion of ids[0]
    agents = ("ps-researcher", "ps-analyst")

    def work(n: int) -> int:
        service, agent, done = board.fresh_service(), agents[n % 2], 0
        while True:
            claims = service.claim_signals(
                ClaimSignals(blackboard_id=BOARD, signal_ids=tuple(ids + first), agent_id=agent, limit=3)
            )
            if not claims.claimed:
                return done
            for signal in claims.claimed:
                service.complete_signal(CompleteSignal(signal_id=signal.signal_id, agent_id=agent))
                done += 1

    with ThreadPoolExecutor(workers) as pool:
        done = sum(pool.map(work, range(workers)))

    records = [r for r in board.store.read_all() if r.event.blackboard_id == BOARD]
    assert [r.event.version for r in records] == list(range(1, len(records) + 1))
    claimed = [r.event.signal_id for r in records if r.event.event_type == "AgentSignalClaimed"]
    completed = [r.event.signal_id for r in records if r.event.event_type == "AgentSignalCompleted"]
    assert sorted(claimed) == sorted(completed) == sorted(ids + first) and done == len(ids) + 1
    rows = {s.signal_id: s for s in board.read_model.find(SignalFilter(blackboard_id=BOARD))}
    assert all(s.status is SignalStatus.COMPLETED for s in rows.values())
    Projector(board.store, board.read_model).rebuild()
    rebuilt = {s.signal_id: s for s in board.read_model.find(SignalFilter(blackboard_id=BOARD))}
    assert rebuilt == rows


def test_a_claim_that_finds_the_read_model_behind_decides_again_holding_the_board(pg_private_url):
    """With the read model behind the log (an import or a bare append not yet folded), a command that holds
    only its signals gives up before locking anything, and is decided again holding the board from the
    start: upgrading its shared hold in place is what two such commands deadlock on. (A database of its
    own: the read model is left behind on purpose.)"""
    from sqlalchemy import text

    from blackboard.application.ports import BoardHoldNeeded
    from blackboard.infrastructure.composition.settings import BlackboardSettings, store_settings
    from blackboard.infrastructure.persistence.engine import make_engine
    from blackboard.infrastructure.persistence.schema import ensure_schema

    engine = make_engine(store_settings(BlackboardSettings(db=pg_private_url)))
    ensure_schema(engine)
    try:
        board = SqlBoard(engine)
        first, second = post(board, 2)
        with engine.begin() as conn:  # the projection one event behind the log
            conn.execute(text("UPDATE projection_checkpoints SET position = position - 1"))

        with pytest.raises(BoardHoldNeeded), board.unit_of_work().board(BOARD, Hold.SIGNALS) as tx:
            tx.load(Scope(signals=(first,)))

        with ThreadPoolExecutor(2) as pool:  # two at once: each decided holding the board, in turn
            claims = list(
                pool.map(
                    lambda signal_id: board.fresh_service().claim_signal(
                        ClaimSignal(signal_id=signal_id, agent_id="ps-researcher")
                    ),
                    (first, second),
                )
            )
        assert [c.status for c in claims] == [SignalStatus.CLAIMED] * 2
    finally:
        engine.dispose()


def test_a_batch_claim_holds_only_as_many_candidates_as_it_may_take(pg_engine):
    """Two workers with the same eight oldest candidates, one claim each: while the first has read its
    rows and not committed, the second still takes one, the first free past what the first holds (its
    limit and the spare ones), and skips the held ones as taken by another."""
    from blackboard.application.service import CLAIM_SPARE

    board = SqlBoard(pg_engine)
    ids = post(board, 8)
    release, loaded = threading.Event(), threading.Event()

    def first_worker() -> None:  # a batch claim of limit 1 over all eight, read and not committed
        with board.unit_of_work().board(BOARD, Hold.FREE_SIGNALS) as tx:
            tx.load(Scope(signals=tuple(ids), at_most=1 + CLAIM_SPARE))
            loaded.set()
            release.wait(10)

    holder = threading.Thread(target=first_worker)
    holder.start()
    assert loaded.wait(10)
    try:
        second = board.fresh_service().claim_signals(
            ClaimSignals(blackboard_id=BOARD, signal_ids=tuple(ids), agent_id="ps-analyst", limit=1)
        )
    finally:
        release.set()
        holder.join(10)
    assert [s.signal_id for s in second.claimed] == [ids[1 + CLAIM_SPARE]]
    assert set(second.skipped) == set(ids[: 1 + CLAIM_SPARE])


def test_a_batch_claim_takes_the_first_open_signals_in_the_order_named(sql_engine):
    """The candidates are named newest first, some of them taken already: a batch claim of 3 takes the
    first three still open in that order (not the ids' order, nor the oldest), and says why it passed
    over the taken ones. The statement reading them is built once for any number of names, so two
    batches of different sizes in a row read their own names in their own order."""
    board = SqlBoard(sql_engine)
    ids = post(board, 9)
    named = tuple(reversed(ids))
    service = board.fresh_service()
    first = service.claim_signals(
        ClaimSignals(blackboard_id=BOARD, signal_ids=named, agent_id="ps-researcher", limit=2)
    )
    assert [s.signal_id for s in first.claimed] == list(named[:2])
    second = service.claim_signals(
        ClaimSignals(blackboard_id=BOARD, signal_ids=named[:7], agent_id="ps-analyst", limit=3)
    )
    assert [s.signal_id for s in second.claimed] == list(named[2:5])
    assert set(second.skipped) == set(named[:2])
