"""A worker's batch of outcomes, one of which is larger than an export carries (application/carried.py): that outcome
alone is refused, named and said why, and the others are recorded, on SQLite and PostgreSQL."""

from __future__ import annotations

from blackboard.application.carried import SIZE_RULE
from blackboard.application.commands import (
    ClaimSignals,
    CompleteSignal,
    FailSignal,
    PostSignal,
    RecordOutcomes,
)
from blackboard.domain.errors import InvalidInput
from blackboard.domain.knowledge.entries import MAX_VALUE_BYTES
from blackboard.domain.signals import SignalStatus

AGENT = "ps-researcher"
ITEMS = ("k" * (MAX_VALUE_BYTES - 2),) * 17  # each an entry's value at most; together past an event's bound


def test_an_outcome_too_large_to_carry_is_refused_alone_and_the_rest_of_the_batch_is_recorded(sql_board):
    service = sql_board.service
    ids = tuple(
        service.post_signal(
            PostSignal(signal_type="RESEARCH", ps_id="ps-1", entry_id=f"e-{n}", topic="t")
        ).signal_id
        for n in (1, 2, 3)
    )
    tokens = {signal_id: f"token-{n}" for n, signal_id in enumerate(ids)}  # a token per claim
    service.claim_signals(
        ClaimSignals(blackboard_id="ps-1", signal_ids=ids, agent_id=AGENT, tokens=tokens, limit=3)
    )

    results = service.record_outcomes(
        RecordOutcomes(
            blackboard_id="ps-1",
            agent_id=AGENT,
            outcomes=(
                CompleteSignal(
                    signal_id=ids[0], agent_id=AGENT, token=tokens[ids[0]], knowledge_items=("small",)
                ),
                CompleteSignal(signal_id=ids[1], agent_id=AGENT, token=tokens[ids[1]], knowledge_items=ITEMS),
                FailSignal(signal_id=ids[2], agent_id=AGENT, token=tokens[ids[2]], error="no sources"),
            ),
        )
    )

    assert isinstance(results[1], InvalidInput) and results[1].field == "knowledge_items"
    assert results[1].rule.startswith(SIZE_RULE)
    read = sql_board.read_model.get
    assert [read(s).status for s in ids] == [
        SignalStatus.COMPLETED,
        SignalStatus.CLAIMED,
        SignalStatus.FAILED,
    ]
    assert [r.status for r in (results[0], results[2])] == [SignalStatus.COMPLETED, SignalStatus.FAILED]
