"""Eight real processes writing to one database at once: nothing lost, nothing raised, one winner each."""

from __future__ import annotations

import traceback

import pytest

from blackboard.application.commands import ClaimSignal, CompleteSignal, PostSignal
from blackboard.application.ports import SignalFilter
from blackboard.domain.blackboard import BlackboardAggregate
from blackboard.domain.errors import AlreadyClaimed
from blackboard.infrastructure.composition.settings import BlackboardSettings, store_settings
from blackboard.infrastructure.persistence.engine import make_engine
from tests.integration.conftest import SqlBoard
from tests.processes import warm_context

PROCESSES = 8
SIGNALS_EACH = 15


def _board(url: str) -> SqlBoard:
    return SqlBoard(make_engine(store_settings(BlackboardSettings(db=url, sqlite_synchronous="NORMAL"))))


def _post_claim_complete(url: str, worker: int, start, results) -> None:
    try:
        board = _board(url)
        start.wait(timeout=60)
        for n in range(SIGNALS_EACH):
            signal = board.service.post_signal(
                PostSignal(
                    signal_type="RESEARCH",
                    ps_id="ps-race",
                    entry_id=f"e-{worker * 100 + n}",
                    topic="t",
                    dedupe_key=f"w{worker}-{n}",
                )
            )
            board.service.claim_signal(ClaimSignal(signal_id=signal.signal_id, agent_id="ps-researcher"))
            board.service.complete_signal(
                CompleteSignal(signal_id=signal.signal_id, agent_id="ps-researcher")
            )
        results.put(("ok", worker))
    except BaseException:  # noqa: BLE001 - the parent reports the child's traceback
        results.put(("error", traceback.format_exc()))


def _claim_everything(url: str, worker: int, signal_ids: list[str], start, results) -> None:
    try:
        board = _board(url)
        agent = ("ps-researcher", "ps-analyst")[worker % 2]
        start.wait(timeout=60)
        won = []
        for signal_id in signal_ids:
            try:
                board.service.claim_signal(ClaimSignal(signal_id=signal_id, agent_id=agent))
                won.append(signal_id)
            except AlreadyClaimed:
                pass
        results.put(("ok", won))
    except BaseException:  # noqa: BLE001 - the parent reports the child's traceback
        results.put(("error", traceback.format_exc()))


def _run(target, args_for) -> list:
    ctx = warm_context()  # real processes, forked from a server that imported the package once
    start, results = ctx.Barrier(PROCESSES), ctx.Queue()
    procs = [ctx.Process(target=target, args=(*args_for(w), start, results)) for w in range(PROCESSES)]
    for p in procs:
        p.start()
    outcomes = [results.get(timeout=240) for _ in procs]
    for p in procs:
        p.join(timeout=30)
    errors = [detail for kind, detail in outcomes if kind == "error"]
    assert errors == [], "\n".join(errors)
    return [detail for _, detail in outcomes]


@pytest.fixture(params=["sqlite", "postgresql"])
def shared_url(request, sqlite_engine, sqlite_url, pg_engine, pg_database_url) -> str:
    return sqlite_url if request.param == "sqlite" else pg_database_url


def test_eight_processes_writing_one_board_lose_nothing_and_raise_nothing(shared_url):
    _run(_post_claim_complete, lambda w: (shared_url, w))

    board = _board(shared_url)
    history = board.store.load("ps-race")
    assert [e.version for e in history] == list(range(1, PROCESSES * SIGNALS_EACH * 3 + 1))
    signals = BlackboardAggregate.replay("ps-race", history).signals
    assert len(signals) == PROCESSES * SIGNALS_EACH
    assert {s.status.value for s in signals.values()} == {"COMPLETED"}
    assert {s.signal_id: s for s in board.read_model.find(SignalFilter())} == signals


def test_eight_processes_racing_for_the_same_signals_leave_exactly_one_winner_each(shared_url):
    board = _board(shared_url)
    ids = [
        board.service.post_signal(
            PostSignal(signal_type="RESEARCH", ps_id="ps-race", entry_id=f"e-{n}", topic="t")
        ).signal_id
        for n in range(20)
    ]

    won = _run(_claim_everything, lambda w: (shared_url, w, ids))

    all_wins = [signal_id for wins in won for signal_id in wins]
    assert sorted(all_wins) == sorted(ids)  # every signal claimed, none twice
    claims = [e for e in board.store.load("ps-race") if e.event_type == "AgentSignalClaimed"]
    assert len(claims) == len(ids)
