"""Gates (docs/control.md, "Gates"): a signal no agent claims; a person approves or rejects it, and what
waits on it follows. It expires only by a timeout of its own."""

from __future__ import annotations

from datetime import timedelta

import pytest

from blackboard.application.commands import ApproveGate, PostSignal, RejectGate
from blackboard.domain.blackboard import BlackboardAggregate, deadline, overdue
from blackboard.domain.errors import (
    GateNotClaimable,
    GateNotOpen,
    InvalidInput,
    InvalidTransition,
    NotAGate,
)
from blackboard.domain.events import AgentSignalApproved, AgentSignalExpired, AgentSignalRejected
from blackboard.domain.signals import SignalPayload, SignalResult, SignalStatus, SignalType
from tests.fakes import T0, Board, agent

BB = "bb-gates"
POST, CLAIM = timedelta(seconds=30), timedelta(seconds=300)
REVIEWER = agent("ps-reviewer", threshold=0.0, DECISION=1.0, RESEARCH=1.0)


def post(board: BlackboardAggregate, n: int, *, gate: bool = False, after=(), timeout=None, at=T0):
    return board.post_signal(
        signal_id=f"sig-{n:08x}",
        signal_type=SignalType.DECISION if gate else SignalType.RESEARCH,
        payload=SignalPayload(ps_id=BB, entry_id=f"e-{n}", topic="ship it?" if gate else "work"),
        posted_by="ps-lead",
        at=at,
        after=after,
        gate=gate,
        timeout_s=timeout,
    )


def test_no_agent_claims_a_gate_even_one_that_scores_it_perfectly():
    board = BlackboardAggregate(BB)
    gate = post(board, 1, gate=True)
    board.collect_events()

    assert not gate.is_claimable and gate.is_open_gate
    with pytest.raises(GateNotClaimable, match="is a gate"):
        board.claim_signal(gate.signal_id, REVIEWER, T0)
    assert not board.has_pending_events


def test_approving_a_gate_completes_it_and_releases_what_waits_on_it():
    board = BlackboardAggregate(BB)
    post(board, 1, gate=True)
    after = post(board, 2, after=["sig-00000001"])
    assert after.waiting_for == {"sig-00000001"}
    board.collect_events()

    approved = board.approve_gate("sig-00000001", "alice", "looks right", T0 + timedelta(seconds=5))

    (event,) = board.collect_events()
    assert isinstance(event, AgentSignalApproved) and (event.approved_by, event.note) == (
        "alice",
        "looks right",
    )
    assert approved.status is SignalStatus.COMPLETED
    assert (approved.decided_by, approved.decision_note) == ("alice", "looks right")
    assert board.signal("sig-00000002").is_claimable
    board.claim_signal("sig-00000002", REVIEWER, T0 + timedelta(seconds=6))  # it runs now


def test_rejecting_a_gate_fails_it_and_expires_what_waits_on_it():
    board = BlackboardAggregate(BB)
    post(board, 1, gate=True)
    post(board, 2, after=["sig-00000001"])
    board.collect_events()

    rejected = board.reject_gate("sig-00000001", "bob", "the plan is wrong", T0)

    rejection, expiry = board.collect_events()
    assert isinstance(rejection, AgentSignalRejected) and rejection.reason == "the plan is wrong"
    assert isinstance(expiry, AgentSignalExpired) and expiry.signal_id == "sig-00000002"
    assert rejected.status is SignalStatus.FAILED
    assert rejected.result.error == "rejected by bob: the plan is wrong"
    assert board.signal("sig-00000002").result.error == (
        "upstream sig-00000001 ended FAILED: rejected by bob: the plan is wrong"
    )


@pytest.mark.parametrize(
    ("decide", "error", "words"),
    [
        (lambda b: b.approve_gate("sig-00000002", "alice", None, T0), NotAGate, "is not a gate"),
        (lambda b: b.reject_gate("sig-00000003", "alice", "no", T0), GateNotOpen, "waits for sig-00000001"),
        (lambda b: b.approve_gate("sig-00000001", "", None, T0), InvalidInput, "by: must name"),
        (lambda b: b.reject_gate("sig-00000001", "bob", "", T0), InvalidInput, "reason: must say"),
    ],
)
def test_a_decision_on_what_is_not_an_open_gate_or_without_a_name_is_refused_and_records_nothing(
    decide, error, words
):
    board = BlackboardAggregate(BB)
    post(board, 1, gate=True)
    post(board, 2)
    post(board, 3, gate=True, after=["sig-00000001"])
    board.collect_events()

    with pytest.raises(error, match=words):
        decide(board)
    assert not board.has_pending_events


def test_a_decided_gate_cannot_be_decided_again():
    board = BlackboardAggregate(BB)
    post(board, 1, gate=True)
    board.approve_gate("sig-00000001", "alice", None, T0)

    with pytest.raises(InvalidTransition, match="is COMPLETED; only POSTED signals can be rejected"):
        board.reject_gate("sig-00000001", "bob", "too late", T0)


def test_a_gate_without_a_timeout_of_its_own_never_expires_however_long_no_worker_fits_it():
    board = BlackboardAggregate(BB)
    gate = post(board, 1, gate=True)

    assert deadline(gate, POST, CLAIM) is None
    assert board.expire_overdue(T0 + timedelta(days=30), POST, CLAIM) == []
    assert board.signal("sig-00000001").status is SignalStatus.POSTED


def test_a_gate_with_a_timeout_expires_that_long_after_it_opens():
    board = BlackboardAggregate(BB)
    post(board, 1)
    gate = post(board, 2, gate=True, after=["sig-00000001"], timeout=3600)
    assert deadline(gate, POST, CLAIM) is None  # not open yet: it waits for sig-1
    board.claim_signal("sig-00000001", REVIEWER, T0)
    opened = T0 + timedelta(hours=5)
    board.complete_signal("sig-00000001", "ps-reviewer", SignalResult(), opened)

    gate = board.signal("sig-00000002")
    assert deadline(gate, POST, CLAIM) == opened + timedelta(hours=1)
    assert not overdue(gate, opened + timedelta(minutes=59), POST, CLAIM)
    (expired,) = board.expire_overdue(opened + timedelta(hours=1), POST, CLAIM)
    assert expired.status is SignalStatus.EXPIRED
    assert expired.result.error == "no one decided the gate within 3600s of it opening"


def test_a_retried_rejected_gate_is_a_gate_again():
    board = BlackboardAggregate(BB)
    post(board, 1, gate=True, timeout=60)
    board.reject_gate("sig-00000001", "bob", "not yet", T0)

    retry = board.retry_signal("sig-00000001", "sig-00000002", "ps-lead", T0)

    assert retry.gate and retry.timeout_s == 60 and retry.status is SignalStatus.POSTED


def test_the_service_does_not_mark_a_gate_unclaimed_though_no_agent_fits_it():
    board = Board()  # no agent at all: an ordinary post would end UNCLAIMED at once

    gate = board.service.post_signal(
        PostSignal(signal_type="DECISION", ps_id="ps-1", entry_id="e-1", topic="ship it?", gate=True)
    )
    plain = board.service.post_signal(
        PostSignal(signal_type="DECISION", ps_id="ps-1", entry_id="e-2", topic="ship it?")
    )

    assert gate.status is SignalStatus.POSTED and plain.status is SignalStatus.UNCLAIMED
    approved = board.service.approve_gate(ApproveGate(signal_id=gate.signal_id, approved_by="alice"))
    assert approved.status is SignalStatus.COMPLETED
    (stored,) = [r for r in board.store.read_all() if r.event.event_type == "AgentSignalApproved"]
    assert stored.metadata["actor"] == "alice"  # the actor of the event is who decided


def test_an_open_gate_is_listed_and_a_decided_one_is_not():
    board = Board()
    gate = board.service.post_signal(
        PostSignal(signal_type="DECISION", ps_id="ps-1", entry_id="e-1", topic="ship it?", gate=True)
    )
    assert [g.signal_id for g in board.read_model.open_gates()] == [gate.signal_id]

    board.service.reject_gate(RejectGate(signal_id=gate.signal_id, rejected_by="bob", reason="no"))

    assert board.read_model.open_gates() == []
