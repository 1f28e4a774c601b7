"""Event histories for contract tests, made by the real aggregate so they are always valid."""

from __future__ import annotations

from datetime import timedelta

from blackboard.domain.blackboard import BlackboardAggregate
from blackboard.domain.events import BlackboardEvent
from blackboard.domain.signals import SignalPayload, SignalResult, SignalType
from tests.fakes import T0, agent

RESEARCHER = agent("ps-researcher", RESEARCH=0.9, REVIEW=0.85, ANALYSIS=0.95)


def payload(n: int = 1, **context: object) -> SignalPayload:
    return SignalPayload(ps_id="ps-1", entry_id=f"e-{n}", topic=f"topic {n}", prompt="dig", context=context)


def post(
    board: BlackboardAggregate, n: int, kind: str = "RESEARCH", after: tuple[str, ...] = (), minute: int = 0
):
    return board.post_signal(
        signal_id=f"sig-{n:08x}",
        signal_type=SignalType(kind),
        payload=payload(n, nested={"k": [1, 2]}),
        posted_by="ps-skill",
        at=T0 + timedelta(minutes=minute),
        after=after,
        dedupe_key=f"key-{n}",
    )


def every_event_type(board_id: str = "bb-1") -> list[BlackboardEvent]:
    """One board whose history holds each event type at least once."""
    board = BlackboardAggregate(board_id)
    post(board, 1)
    post(board, 2, "REVIEW", after=("sig-00000001",), minute=1)
    post(board, 3, "ANALYSIS", minute=2)
    post(board, 4, minute=3)
    post(board, 5, "REVIEW", after=("sig-00000004",), minute=4)
    board.claim_signal("sig-00000001", RESEARCHER, T0 + timedelta(minutes=5))
    board.complete_signal(
        "sig-00000001",
        "ps-researcher",
        SignalResult(artifact_path="r.md", knowledge_items=("a", "b")),
        T0 + timedelta(minutes=6),
    )
    board.claim_signal("sig-00000004", RESEARCHER, T0 + timedelta(minutes=7))
    board.fail_signal("sig-00000004", "ps-researcher", "no sources", T0 + timedelta(minutes=8))
    board.mark_unclaimed("sig-00000003", "nobody", T0 + timedelta(minutes=9))
    post(board, 6, "DECISION", minute=10)
    post(board, 7, "DECISION", after=("sig-00000006",), minute=11)
    board.cancel_signal("sig-00000006", "alice", "the plan changed", T0 + timedelta(minutes=12))  # and sig-7
    return board.collect_events()


def posts(board_id: str, count: int, first: int = 1) -> list[BlackboardEvent]:
    board = BlackboardAggregate(board_id)
    for n in range(first, first + count):
        post(board, n)
    return board.collect_events()
