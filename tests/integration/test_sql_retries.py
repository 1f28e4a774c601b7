"""Retries on the SQL stores (SQLite and PostgreSQL): a retried signal's row, the usage of every attempt in
one row that summary and status total, and a rebuild from the log that gives the same rows."""

from __future__ import annotations

from sqlalchemy import select

from blackboard.application.commands import ClaimSignal, CompleteSignal, FailSignal, PostSignal
from blackboard.application.projection import Projector
from blackboard.domain.signals import SignalStatus, SignalUsage
from blackboard.infrastructure.persistence.tables import SIGNAL_USAGE

RUN = SignalUsage(runner="anthropic", model="m", input_tokens=100, output_tokens=10, cost_usd=0.5, turns=2)


def test_every_attempt_s_usage_adds_up_in_one_row_and_a_rebuild_gives_the_same_rows(sql_board):
    service = sql_board.service
    posted = service.post_signal(
        PostSignal(signal_type="RESEARCH", ps_id="ps-1", entry_id="e-1", topic="t", max_attempts=3)
    )
    sid = posted.signal_id
    for _ in range(2):
        service.claim_signal(ClaimSignal(signal_id=sid, agent_id="ps-researcher"))
        service.fail_signal(
            FailSignal(
                signal_id=sid, agent_id="ps-researcher", error="rate limited", usage=RUN, retry_after=0
            )
        )
    service.claim_signal(ClaimSignal(signal_id=sid, agent_id="ps-researcher"))
    done = service.complete_signal(CompleteSignal(signal_id=sid, agent_id="ps-researcher", usage=RUN))
    with sql_board.engine.connect() as conn:
        rows = conn.execute(select(SIGNAL_USAGE)).all()

    assert done.status is SignalStatus.COMPLETED and done.attempt == 3
    assert [(r.signal_id, r.input_tokens, r.output_tokens, r.turns) for r in rows] == [(sid, 300, 30, 6)]
    assert rows[0].cost_usd == 1.5
    stored = sql_board.read_model.get(sid)
    assert stored == done
    assert [a.error for a in stored.attempts] == ["rate limited", "rate limited"]

    Projector(sql_board.store, sql_board.read_model).rebuild()

    assert sql_board.read_model.get(sid) == done
    with sql_board.engine.connect() as conn:
        assert [(r.input_tokens, r.cost_usd) for r in conn.execute(select(SIGNAL_USAGE))] == [(300, 1.5)]
