"""While a rebuild has not folded the log back yet (the read model reset, its rows gone), commands still
keep their promises: a repeated post with a dedupe key returns the first signal, and an expiry sweep still
finds the boards that hold overdue signals. Each fails against a one-line bug no other test noticed
(issue 17, item 6)."""

from __future__ import annotations

from blackboard.application.commands import ClaimSignal, ExpireSignals, PostSignal
from blackboard.application.projection import Projector
from blackboard.domain.signals import SignalStatus
from tests.fakes import SEED_RULE
from tests.integration.conftest import SqlBoard


def _post(board: SqlBoard, entry: str, key: str | None = None, ps: str = "ps-1"):
    return board.service.post_signal(
        PostSignal(signal_type="RESEARCH", ps_id=ps, entry_id=entry, topic=f"topic {entry}", dedupe_key=key)
    )


def _posted(board: SqlBoard) -> list[str]:
    return [r.event.signal_id for r in board.store.read_all() if r.event.event_type == "AgentSignalPosted"]


def test_a_repeated_post_during_an_unfinished_rebuild_returns_the_first_signal(sql_engine):
    board = SqlBoard(sql_engine)
    first = _post(board, "e-1", key="ps-1/e-1")
    _post(board, "e-2")
    board.read_model.reset()  # a rebuild has begun and folded nothing yet

    again = _post(board, "e-1", key="ps-1/e-1")

    assert again.signal_id == first.signal_id
    assert _posted(board) == [first.signal_id, _posted(board)[1]] and len(_posted(board)) == 2


def test_a_sweep_during_an_unfinished_rebuild_expires_what_is_overdue(sql_engine):
    board = SqlBoard(sql_engine, SEED_RULE)
    posted = _post(board, "e-1")
    claimed = _post(board, "e-2", ps="ps-2")
    board.service.claim_signal(ClaimSignal(signal_id=claimed.signal_id, agent_id="ps-researcher"))
    board.read_model.reset()  # a rebuild has begun: no row says which boards are live
    board.clock.advance(
        board.settings.post_timeout.total_seconds() + board.settings.claim_timeout.total_seconds()
    )

    ended = board.service.expire_signals(ExpireSignals())

    assert sorted(s.signal_id for s in ended) == sorted([posted.signal_id, claimed.signal_id])
    Projector(board.store, board.read_model).rebuild(resume=True)
    assert {board.read_model.get(s).status for s in (posted.signal_id, claimed.signal_id)} == {
        SignalStatus.EXPIRED
    }
