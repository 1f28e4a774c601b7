"""The fault suite's checker finds what it must: a completion by someone other than the claimer, a second
claim, a claim before the upstream completed, and a read model that differs from the replay."""

from __future__ import annotations

from datetime import timedelta

from blackboard.domain.blackboard import BlackboardAggregate
from blackboard.domain.events import AgentSignalClaimed, AgentSignalCompleted
from blackboard.domain.signals import SignalPayload, SignalResult, SignalType
from tests.fakes import T0, InMemoryEventStore, InMemorySignalReadModel, agent
from tests.faults.invariants import violations

RESEARCHER, ANALYST = agent("ps-researcher", RESEARCH=0.9), agent("ps-analyst", RESEARCH=0.85)


def _stored(decide) -> tuple[InMemoryEventStore, InMemorySignalReadModel]:
    board, store, read_model = BlackboardAggregate("bb-1"), InMemoryEventStore(), InMemorySignalReadModel()
    at = iter(T0 + timedelta(seconds=n) for n in range(100))
    payload = SignalPayload(ps_id="bb-1", entry_id="e-1", topic="t")
    for sid, after in (("sig-00000001", ()), ("sig-00000002", ("sig-00000001",))):
        board.post_signal(
            signal_id=sid,
            signal_type=SignalType.RESEARCH,
            payload=payload,
            posted_by="ps-skill",
            at=next(at),
            after=after,
        )
    board.claim_signal("sig-00000001", RESEARCHER, next(at))
    decide(board, lambda: next(at))
    store.append("bb-1", 0, board.collect_events(), {})
    read_model.apply(store.read_all())
    return store, read_model


def _forced(board: BlackboardAggregate, event_class, at, **data) -> None:
    """An event the aggregate's rules would refuse, recorded anyway (as a bug would)."""
    board._apply(
        event := event_class(blackboard_id=board.id, version=board.version + 1, occurred_at=at, **data)
    )
    board.version = event.version
    board._pending.append(event)


def test_a_sound_log_has_no_violations():
    def complete(board, at):
        board.complete_signal("sig-00000001", "ps-researcher", SignalResult(), at())
        board.claim_signal("sig-00000002", ANALYST, at())

    assert violations(*_stored(complete)) == []


def test_each_broken_rule_is_found():
    def broken(board, at):
        _forced(board, AgentSignalClaimed, at(), signal_id="sig-00000001", claimed_by="ps-analyst")
        _forced(board, AgentSignalClaimed, at(), signal_id="sig-00000002", claimed_by="ps-analyst")
        _forced(
            board,
            AgentSignalCompleted,
            at(),
            signal_id="sig-00000001",
            completed_by="ps-researcher",
            result=SignalResult(),
        )

    found = violations(*_stored(broken))
    assert any("AgentSignalClaimed from CLAIMED" in v for v in found)
    assert any("upstreams not COMPLETED" in v for v in found)
    assert any("AgentSignalCompleted by ps-researcher, claimed by ps-analyst" in v for v in found)


def test_a_read_model_that_differs_from_the_replay_is_found():
    store, read_model = _stored(lambda board, at: None)
    read_model.reset()
    assert any("read model None != replay" in v for v in violations(store, read_model))
