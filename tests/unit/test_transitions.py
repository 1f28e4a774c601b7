"""The signal state machine of the blackboard aggregate (design 003 §7): what each command records,
and what each command refuses from every status where it is not allowed."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import pytest

from blackboard.domain.blackboard import BlackboardAggregate
from blackboard.domain.errors import (
    AlreadyClaimed,
    BelowThreshold,
    BlackboardError,
    DependenciesPending,
    DuplicateSignal,
    InvalidTransition,
    NotFound,
    NotTheClaimer,
    RuleViolation,
    SignalExpired,
    SignalNotClaimable,
    SignalNotFound,
    UnknownDependency,
)
from blackboard.domain.events import (
    AgentSignalClaimed,
    AgentSignalCompleted,
    AgentSignalExpired,
    AgentSignalFailed,
    AgentSignalPosted,
    AgentSignalUnclaimed,
    BlackboardEvent,
)
from blackboard.domain.reservations import Reservation
from blackboard.domain.signals import SignalPayload, SignalResult, SignalStatus, SignalType
from tests.fakes import T0, agent

BB = "bb-1"
A, B, C, D = "sig-0000000a", "sig-0000000b", "sig-0000000c", "sig-0000000d"
RESEARCHER = agent("ps-researcher", RESEARCH=0.9)
ANALYST = agent("ps-analyst", RESEARCH=0.85, ANALYSIS=0.95)
PAYLOAD = SignalPayload(ps_id="PS-1", entry_id="e-1", topic="Why do claims race?")
POST_TIMEOUT = timedelta(seconds=30)
CLAIM_TIMEOUT = timedelta(seconds=300)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


# ------------------------------------------------------------------ history builders
@dataclass(frozen=True)
class Fact:
    """An event without its place in the stream; `history` numbers the facts."""

    event_class: type[BlackboardEvent]
    signal_id: str
    occurred_at: datetime
    fields: dict[str, Any] = field(default_factory=dict)


def posted(
    signal_id: str = A,
    t: float = 0,
    *,
    after: tuple[str, ...] = (),
    dedupe_key: str | None = None,
    caps: tuple[str, ...] = ("RESEARCH",),
) -> Fact:
    return Fact(
        AgentSignalPosted,
        signal_id,
        at(t),
        dict(
            signal_type=SignalType.RESEARCH,
            payload=PAYLOAD,
            target_capabilities=caps,
            posted_by="ps-orchestrator",
            after=after,
            dedupe_key=dedupe_key,
        ),
    )


def claimed(signal_id: str = A, t: float = 1, by: str = "ps-researcher") -> Fact:
    return Fact(AgentSignalClaimed, signal_id, at(t), dict(claimed_by=by, score=0.9))


def completed(signal_id: str = A, t: float = 2, by: str = "ps-researcher") -> Fact:
    return Fact(
        AgentSignalCompleted,
        signal_id,
        at(t),
        dict(completed_by=by, result=SignalResult(artifact_path=f"out/{signal_id}.md")),
    )


def failed(
    signal_id: str = A, t: float = 2, by: str = "ps-researcher", error: str = "source offline"
) -> Fact:
    return Fact(AgentSignalFailed, signal_id, at(t), dict(failed_by=by, error=error))


def expired(signal_id: str = A, t: float = 2, reason: str = "timed out") -> Fact:
    return Fact(AgentSignalExpired, signal_id, at(t), dict(reason=reason))


def unclaimed(signal_id: str = A, t: float = 2, reason: str = "no capable agent") -> Fact:
    return Fact(AgentSignalUnclaimed, signal_id, at(t), dict(reason=reason))


def events_of(*facts: Fact) -> list[BlackboardEvent]:
    return [
        f.event_class(
            blackboard_id=BB, version=n, occurred_at=f.occurred_at, signal_id=f.signal_id, **f.fields
        )
        for n, f in enumerate(facts, start=1)
    ]


def history(*facts: Fact) -> BlackboardAggregate:
    return BlackboardAggregate.replay(BB, events_of(*facts))


def post(board: BlackboardAggregate, signal_id: str, t: float = 0, **kwargs: Any):
    return board.post_signal(
        signal_id=signal_id,
        signal_type=SignalType.RESEARCH,
        payload=PAYLOAD,
        posted_by="ps-orchestrator",
        at=at(t),
        **kwargs,
    )


# Histories that leave signal A in each status (A claimed by ps-researcher where it was claimed).
IN_STATUS: dict[SignalStatus, tuple[Fact, ...]] = {
    SignalStatus.POSTED: (posted(),),
    SignalStatus.CLAIMED: (posted(), claimed()),
    SignalStatus.COMPLETED: (posted(), claimed(), completed()),
    SignalStatus.FAILED: (posted(), claimed(), failed()),
    SignalStatus.EXPIRED: (posted(), expired()),
    SignalStatus.UNCLAIMED: (posted(), unclaimed()),
}
FINAL = [SignalStatus.COMPLETED, SignalStatus.FAILED, SignalStatus.EXPIRED, SignalStatus.UNCLAIMED]


def board_with_a_in(status: SignalStatus) -> BlackboardAggregate:
    board = history(*IN_STATUS[status])
    assert board.signal(A).status is status
    return board


# ======================================================================= posting
def test_posting_a_signal_records_it_as_posted_and_claimable_at_once():
    board = BlackboardAggregate(BB)

    signal = post(board, A, 0, target_capabilities=["RESEARCH", "ANALYSIS", "RESEARCH"], dedupe_key="k-1")

    [event] = board.collect_events()
    assert isinstance(event, AgentSignalPosted)
    assert (event.blackboard_id, event.version, event.occurred_at, event.signal_id) == (BB, 1, T0, A)
    assert event.target_capabilities == ("RESEARCH", "ANALYSIS")
    assert (event.posted_by, event.payload, event.after, event.dedupe_key) == (
        "ps-orchestrator",
        PAYLOAD,
        (),
        "k-1",
    )
    assert signal.status is SignalStatus.POSTED
    assert signal.is_claimable and signal.claimable_since == T0 and signal.created_at == T0
    assert (signal.claimed_by, signal.claimed_at, signal.completed_at, signal.result) == (
        None,
        None,
        None,
        None,
    )
    assert signal.version == 1 and board.version == 1
    assert board.signal(A) == signal


def test_a_signal_posted_without_target_capabilities_targets_its_own_type():
    board = BlackboardAggregate(BB)

    post(board, A)

    [event] = board.collect_events()
    assert event.target_capabilities == ("RESEARCH",)


def test_posting_again_with_the_same_dedupe_key_returns_the_first_signal_and_records_nothing():
    board = history(posted(A, dedupe_key="retry-1"), claimed(A))

    signal = post(board, B, 5, dedupe_key="retry-1")

    assert signal == board.signal(A) and signal.status is SignalStatus.CLAIMED
    assert board.collect_events() == []
    assert B not in board.signals and board.version == 2


def test_a_different_dedupe_key_posts_a_new_signal():
    board = history(posted(A, dedupe_key="retry-1"))

    signal = post(board, B, 5, dedupe_key="retry-2")

    assert signal.signal_id == B
    assert [type(e) for e in board.collect_events()] == [AgentSignalPosted]
    assert board.find_by_key("retry-2") == board.signal(B)
    assert board.find_by_key("retry-1") == board.signal(A)


def test_posting_a_signal_id_already_on_the_board_is_refused():
    board = history(posted(A))

    with pytest.raises(DuplicateSignal) as refused:
        post(board, A, 5)

    assert A in str(refused.value) and isinstance(refused.value, RuleViolation)
    assert board.collect_events() == []
    assert board.version == 1


def test_posting_after_a_signal_that_is_not_on_the_board_is_refused():
    board = history(posted(A))

    with pytest.raises(UnknownDependency) as refused:
        post(board, B, 5, after=[A, "sig-000000ff"])

    assert refused.value.signal_id == "sig-000000ff" and isinstance(refused.value, NotFound)
    assert board.collect_events() == []
    assert B not in board.signals


# ================================================================ allowed transitions
def test_posted_to_claimed_records_the_claimer_and_its_score():
    board = history(posted(A))

    signal = board.claim_signal(A, RESEARCHER, at(7))

    [event] = board.collect_events()
    assert isinstance(event, AgentSignalClaimed)
    assert (event.signal_id, event.version, event.occurred_at) == (A, 2, at(7))
    assert (event.claimed_by, event.score) == ("ps-researcher", 0.9)
    assert signal.status is SignalStatus.CLAIMED
    assert (signal.claimed_by, signal.claimed_at, signal.version) == ("ps-researcher", at(7), 2)
    assert not signal.is_claimable
    assert board.signal(A) == signal


def test_posted_to_expired_records_the_reason():
    board = history(posted(A))

    signal = board.expire_signal(A, "nobody came", at(31))

    [event] = board.collect_events()
    assert isinstance(event, AgentSignalExpired)
    assert (event.signal_id, event.version, event.occurred_at, event.reason) == (A, 2, at(31), "nobody came")
    assert signal.status is SignalStatus.EXPIRED
    assert signal.result == SignalResult(error="nobody came")
    assert (signal.completed_at, signal.claimed_by, signal.version) == (at(31), None, 2)


def test_posted_to_unclaimed_records_the_reason():
    board = history(posted(A))

    signal = board.mark_unclaimed(A, "no agent scores above 0.80", at(1))

    [event] = board.collect_events()
    assert isinstance(event, AgentSignalUnclaimed)
    assert (event.signal_id, event.version, event.occurred_at) == (A, 2, at(1))
    assert event.reason == "no agent scores above 0.80"
    assert signal.status is SignalStatus.UNCLAIMED
    assert signal.result == SignalResult(error="no agent scores above 0.80")
    assert (signal.completed_at, signal.version) == (at(1), 2)


def test_claimed_to_completed_records_the_result():
    board = history(posted(A), claimed(A, 1))
    result = SignalResult(artifact_path="docs/research/e-1.md", knowledge_items=("KI-1", "KI-2"))

    signal = board.complete_signal(A, "ps-researcher", result, at(9))

    [event] = board.collect_events()
    assert isinstance(event, AgentSignalCompleted)
    assert (event.signal_id, event.version, event.occurred_at) == (A, 3, at(9))
    assert (event.completed_by, event.result) == ("ps-researcher", result)
    assert signal.status is SignalStatus.COMPLETED
    assert (signal.result, signal.completed_at, signal.claimed_by, signal.claimed_at) == (
        result,
        at(9),
        "ps-researcher",
        at(1),
    )
    assert signal.version == 3


def test_claimed_to_failed_records_the_error():
    board = history(posted(A), claimed(A, 1))

    signal = board.fail_signal(A, "ps-researcher", "source offline", at(9))

    [event] = board.collect_events()
    assert isinstance(event, AgentSignalFailed)
    assert (event.signal_id, event.version, event.occurred_at) == (A, 3, at(9))
    assert (event.failed_by, event.error) == ("ps-researcher", "source offline")
    assert signal.status is SignalStatus.FAILED
    assert signal.result == SignalResult(error="source offline")
    assert (signal.completed_at, signal.claimed_by, signal.version) == (at(9), "ps-researcher", 3)


def test_claimed_to_expired_records_the_reason_and_keeps_the_claimer():
    board = history(posted(A), claimed(A, 1))

    signal = board.expire_signal(A, "claimer vanished", at(400))

    [event] = board.collect_events()
    assert isinstance(event, AgentSignalExpired)
    assert (event.signal_id, event.version, event.occurred_at, event.reason) == (
        A,
        3,
        at(400),
        "claimer vanished",
    )
    assert signal.status is SignalStatus.EXPIRED
    assert signal.result == SignalResult(error="claimer vanished")
    assert (signal.completed_at, signal.claimed_by, signal.version) == (at(400), "ps-researcher", 3)


# ================================================================ refused transitions
def assert_nothing_changed(board: BlackboardAggregate, before: dict) -> None:
    assert board.collect_events() == []
    assert board.signals == before


def test_a_claimed_signal_cannot_be_claimed_again_and_the_refusal_names_the_claimer():
    board = board_with_a_in(SignalStatus.CLAIMED)
    before = board.signals

    with pytest.raises(AlreadyClaimed) as refused:
        board.claim_signal(A, ANALYST, at(5))

    assert "ps-researcher" in str(refused.value)
    assert refused.value.claimed_by == "ps-researcher" and refused.value.status == SignalStatus.CLAIMED
    assert_nothing_changed(board, before)


def test_the_claimer_cannot_claim_its_own_signal_twice():
    board = board_with_a_in(SignalStatus.CLAIMED)
    before = board.signals

    with pytest.raises(AlreadyClaimed):
        board.claim_signal(A, RESEARCHER, at(5))

    assert_nothing_changed(board, before)


@pytest.mark.parametrize("status", FINAL)
def test_a_signal_in_a_final_status_cannot_be_claimed(status):
    board = board_with_a_in(status)
    before = board.signals

    with pytest.raises((SignalNotClaimable, SignalExpired)) as refused:
        board.claim_signal(A, RESEARCHER, at(5))

    # not the claim-race outcome; an expired one says when it expired and why
    assert type(refused.value) is (SignalExpired if status is SignalStatus.EXPIRED else SignalNotClaimable)
    assert refused.value.status == status and status.value in str(refused.value)
    assert_nothing_changed(board, before)


@pytest.mark.parametrize("status", [SignalStatus.POSTED, *FINAL])
@pytest.mark.parametrize("command", ["complete", "fail"])
def test_only_a_claimed_signal_can_be_completed_or_failed(command, status):
    board = board_with_a_in(status)
    before = board.signals

    with pytest.raises(InvalidTransition) as refused:
        if command == "complete":
            board.complete_signal(A, "ps-researcher", SignalResult(), at(5))
        else:
            board.fail_signal(A, "ps-researcher", "boom", at(5))

    assert refused.value.status == status
    assert refused.value.action == {"complete": "completed", "fail": "failed"}[command]
    assert "only CLAIMED signals" in str(refused.value)
    assert_nothing_changed(board, before)


@pytest.mark.parametrize("command", ["complete", "fail"])
def test_only_the_claimer_completes_or_fails_a_signal(command):
    board = board_with_a_in(SignalStatus.CLAIMED)
    before = board.signals

    with pytest.raises(NotTheClaimer) as refused:
        if command == "complete":
            board.complete_signal(A, "ps-analyst", SignalResult(), at(5))
        else:
            board.fail_signal(A, "ps-analyst", "boom", at(5))

    assert (refused.value.agent_id, refused.value.claimed_by) == ("ps-analyst", "ps-researcher")
    assert_nothing_changed(board, before)


@pytest.mark.parametrize("status", FINAL)
def test_a_signal_in_a_final_status_cannot_be_expired(status):
    board = board_with_a_in(status)
    before = board.signals

    with pytest.raises(InvalidTransition) as refused:
        board.expire_signal(A, "late", at(5))

    assert (refused.value.status, refused.value.action) == (status, "expired")
    assert "CLAIMED or POSTED" in str(refused.value)
    assert_nothing_changed(board, before)


@pytest.mark.parametrize("status", [SignalStatus.CLAIMED, *FINAL])
def test_only_a_posted_signal_can_be_marked_unclaimed(status):
    board = board_with_a_in(status)
    before = board.signals

    with pytest.raises(InvalidTransition) as refused:
        board.mark_unclaimed(A, "nobody", at(5))

    assert (refused.value.status, refused.value.action) == (status, "marked unclaimed")
    assert_nothing_changed(board, before)


@pytest.mark.parametrize("score", [0.8, 0.5, 0.0])
def test_a_claim_at_or_below_the_default_threshold_is_refused(score):
    board = history(posted(A))
    weak = agent("ps-weak", RESEARCH=score)

    with pytest.raises(BelowThreshold) as refused:
        board.claim_signal(A, weak, at(5))

    assert (refused.value.agent_id, refused.value.score, refused.value.threshold) == ("ps-weak", score, 0.8)
    assert_nothing_changed(board, history(posted(A)).signals)


def test_a_claim_just_above_the_threshold_is_accepted():
    board = history(posted(A))

    signal = board.claim_signal(A, agent("ps-keen", RESEARCH=0.81), at(5))

    assert signal.status is SignalStatus.CLAIMED
    assert [type(e) for e in board.collect_events()] == [AgentSignalClaimed]


def test_an_agent_without_a_targeted_capability_scores_zero_and_is_refused():
    board = history(posted(A, caps=("REVIEW",)))

    with pytest.raises(BelowThreshold) as refused:
        board.claim_signal(A, agent("ps-researcher", threshold=0.0, RESEARCH=1.0), at(5))

    assert refused.value.score == 0.0
    assert board.collect_events() == []


def test_an_agents_own_threshold_replaces_the_default():
    board = history(posted(A))
    picky = agent("ps-picky", threshold=0.95, RESEARCH=0.9)

    with pytest.raises(BelowThreshold) as refused:
        board.claim_signal(A, picky, at(5), default_threshold=0.1)

    assert refused.value.threshold == 0.95
    assert board.collect_events() == []
    assert board.claim_signal(A, agent("ps-lax", threshold=0.2, RESEARCH=0.3), at(6)).claimed_by == "ps-lax"


def test_the_default_threshold_given_to_the_command_is_used_and_is_strict():
    board = history(posted(A))

    with pytest.raises(BelowThreshold):
        board.claim_signal(A, RESEARCHER, at(5), default_threshold=0.9)

    assert board.collect_events() == []
    assert board.claim_signal(A, RESEARCHER, at(6), default_threshold=0.89).status is SignalStatus.CLAIMED


@pytest.mark.parametrize(
    "command",
    [
        lambda b: b.claim_signal("sig-000000ff", RESEARCHER, at(5)),
        lambda b: b.complete_signal("sig-000000ff", "ps-researcher", SignalResult(), at(5)),
        lambda b: b.fail_signal("sig-000000ff", "ps-researcher", "boom", at(5)),
        lambda b: b.expire_signal("sig-000000ff", "late", at(5)),
        lambda b: b.mark_unclaimed("sig-000000ff", "nobody", at(5)),
        lambda b: b.signal("sig-000000ff"),
    ],
    ids=["claim", "complete", "fail", "expire", "mark_unclaimed", "read"],
)
def test_every_command_on_a_signal_that_is_not_on_the_board_is_refused_as_not_found(command):
    board = history(posted(A))

    with pytest.raises(SignalNotFound) as refused:
        command(board)

    assert "sig-000000ff" in str(refused.value) and BB in str(refused.value)
    assert board.collect_events() == []


def test_every_refusal_is_a_blackboard_error():
    for error in (
        AlreadyClaimed,
        BelowThreshold,
        DependenciesPending,
        DuplicateSignal,
        InvalidTransition,
        NotTheClaimer,
        SignalNotClaimable,
        SignalNotFound,
        UnknownDependency,
    ):
        assert issubclass(error, BlackboardError)


# ======================================================================= dependencies
def test_a_signal_posted_after_an_unfinished_one_waits_and_cannot_be_claimed():
    board = history(posted(A, 0), posted(B, 1, after=(A,)))

    with pytest.raises(DependenciesPending) as refused:
        board.claim_signal(B, RESEARCHER, at(5))

    assert refused.value.pending == (A,) and A in str(refused.value)
    assert board.signal(B).waiting_for == {A} and board.signal(B).claimable_since is None
    assert not board.signal(B).is_claimable
    assert board.collect_events() == []


def test_a_signal_becomes_claimable_when_the_last_of_its_upstreams_completes():
    board = history(
        posted(A, 0),
        posted(B, 0),
        posted(C, 1, after=(A, B)),
        claimed(A, 2),
        claimed(B, 3),
        completed(A, 10),
    )
    assert board.signal(C).waiting_for == {B} and board.signal(C).claimable_since is None
    with pytest.raises(DependenciesPending):
        board.claim_signal(C, RESEARCHER, at(11))

    board.complete_signal(B, "ps-researcher", SignalResult(), at(20))

    [event] = board.collect_events()  # the dependant changes by folding, without an event of its own
    assert isinstance(event, AgentSignalCompleted) and event.signal_id == B
    waiting = board.signal(C)
    assert waiting.waiting_for == frozenset() and waiting.claimable_since == at(20) and waiting.is_claimable
    assert waiting.status is SignalStatus.POSTED
    assert board.claim_signal(C, RESEARCHER, at(21)).claimed_by == "ps-researcher"


def test_a_signal_posted_after_completed_upstreams_is_claimable_from_its_posting():
    board = history(posted(A, 0), claimed(A, 1), completed(A, 2))

    signal = post(board, B, 9, after=[A])

    assert signal.waiting_for == frozenset() and signal.claimable_since == at(9) and signal.is_claimable
    assert [type(e) for e in board.collect_events()] == [AgentSignalPosted]


@pytest.mark.parametrize(
    ("ending", "ended_status"),
    [
        (lambda b: b.fail_signal(A, "ps-researcher", "source offline", at(10)), "FAILED"),
        (lambda b: b.expire_signal(A, "too slow", at(10)), "EXPIRED"),
        (lambda b: b.mark_unclaimed(A, "nobody able", at(10)), "UNCLAIMED"),
    ],
    ids=["failed", "expired", "unclaimed"],
)
def test_an_upstream_that_ends_badly_expires_its_dependants_transitively(ending, ended_status):
    facts = [posted(A, 0), posted(B, 1, after=(A,)), posted(C, 2, after=(B,)), posted(D, 3)]
    if ended_status == "FAILED":
        facts.append(claimed(A, 4))
    board = history(*facts)
    version = board.version

    ending(board)

    events = board.collect_events()
    assert [(type(e), e.signal_id) for e in events][1:] == [(AgentSignalExpired, B), (AgentSignalExpired, C)]
    assert [e.version for e in events] == [version + 1, version + 2, version + 3]
    assert all(e.occurred_at == at(10) for e in events)
    assert events[1].reason.startswith(f"upstream {A} ended {ended_status}")
    assert events[2].reason.startswith(f"upstream {B} ended EXPIRED")
    assert board.signal(B).status is SignalStatus.EXPIRED and board.signal(C).status is SignalStatus.EXPIRED
    assert board.signal(D).status is SignalStatus.POSTED


def test_the_expiry_reason_of_a_dependant_carries_the_upstreams_own_error():
    board = history(posted(A, 0), posted(B, 1, after=(A,)), claimed(A, 2))

    board.fail_signal(A, "ps-researcher", "source offline", at(10))

    assert board.signal(B).result.error == f"upstream {A} ended FAILED: source offline"


def test_a_dependant_waiting_for_two_upstreams_expires_when_one_fails_after_the_other_completed():
    board = history(
        posted(A, 0),
        posted(B, 0),
        posted(C, 1, after=(A, B)),
        claimed(A, 2),
        claimed(B, 2),
        completed(A, 3),
    )

    board.fail_signal(B, "ps-researcher", "boom", at(10))

    assert [(type(e), e.signal_id) for e in board.collect_events()] == [
        (AgentSignalFailed, B),
        (AgentSignalExpired, C),
    ]
    assert board.signal(C).status is SignalStatus.EXPIRED


def test_completing_an_upstream_does_not_end_its_dependants():
    board = history(posted(A, 0), posted(B, 1, after=(A,)), claimed(A, 2))

    board.complete_signal(A, "ps-researcher", SignalResult(), at(10))

    assert board.signal(B).status is SignalStatus.POSTED
    assert [e.signal_id for e in board.collect_events()] == [A]


@pytest.mark.parametrize(
    "upstream_status", [SignalStatus.FAILED, SignalStatus.EXPIRED, SignalStatus.UNCLAIMED]
)
def test_posting_after_an_upstream_that_already_ended_badly_expires_the_new_signal_at_once(upstream_status):
    board = board_with_a_in(upstream_status)

    signal = post(board, B, 9, after=[A])

    events = board.collect_events()
    assert [(type(e), e.signal_id) for e in events] == [(AgentSignalPosted, B), (AgentSignalExpired, B)]
    assert events[1].reason.startswith(f"upstream {A} ended {upstream_status.value}")
    assert signal.status is SignalStatus.EXPIRED and signal.completed_at == at(9)


def test_posting_after_a_completed_and_a_failed_upstream_expires_the_new_signal_at_once():
    board = history(posted(A, 0), posted(B, 0), claimed(A, 1), completed(A, 2), claimed(B, 1), failed(B, 3))

    signal = post(board, C, 9, after=[A, B])

    assert signal.status is SignalStatus.EXPIRED and B in signal.result.error
    assert [type(e) for e in board.collect_events()] == [AgentSignalPosted, AgentSignalExpired]


# ==================================================================== expire_overdue
def test_a_posted_signal_expires_once_the_post_timeout_has_passed_since_it_became_claimable():
    board = history(posted(A, 0))

    assert board.expire_overdue(at(29.999), POST_TIMEOUT, CLAIM_TIMEOUT) == []
    assert board.collect_events() == []
    [ended] = board.expire_overdue(at(30), POST_TIMEOUT, CLAIM_TIMEOUT)

    [event] = board.collect_events()
    assert isinstance(event, AgentSignalExpired) and event.signal_id == A and event.occurred_at == at(30)
    assert "30s" in event.reason
    assert ended.signal_id == A and ended.status is SignalStatus.EXPIRED


def test_a_signal_waiting_for_its_upstreams_never_expires_by_timeout_while_it_waits():
    board = history(posted(A, 0), posted(B, 0, after=(A,)), claimed(A, 1))

    ended = board.expire_overdue(at(10_000), POST_TIMEOUT, timedelta(days=1))

    assert ended == []
    assert board.collect_events() == []
    assert board.signal(B).status is SignalStatus.POSTED


def test_the_post_timeout_of_a_dependant_counts_from_the_completion_of_its_last_upstream():
    board = history(posted(A, 0), posted(B, 0, after=(A,)), claimed(A, 1), completed(A, 100))

    assert board.expire_overdue(at(129), POST_TIMEOUT, CLAIM_TIMEOUT) == []
    ended = board.expire_overdue(at(130), POST_TIMEOUT, CLAIM_TIMEOUT)

    assert [s.signal_id for s in ended] == [B]
    assert [(type(e), e.signal_id) for e in board.collect_events()] == [(AgentSignalExpired, B)]


def test_a_claimed_signal_expires_once_the_claim_timeout_has_passed_since_it_was_claimed():
    board = history(posted(A, 0), claimed(A, 20))

    assert board.expire_overdue(at(319), POST_TIMEOUT, CLAIM_TIMEOUT) == []
    ended = board.expire_overdue(at(320), POST_TIMEOUT, CLAIM_TIMEOUT)

    [event] = board.collect_events()
    assert isinstance(event, AgentSignalExpired) and event.signal_id == A
    assert "ps-researcher" in event.reason and "300s" in event.reason
    assert [s.status for s in ended] == [SignalStatus.EXPIRED]
    assert board.signal(A).claimed_by == "ps-researcher"


def test_expiring_overdue_signals_also_ends_their_dependants_and_returns_them():
    board = history(posted(A, 0), posted(B, 1, after=(A,)), posted(C, 2, after=(B,)), posted(D, 25))

    ended = board.expire_overdue(at(30), POST_TIMEOUT, CLAIM_TIMEOUT)

    assert sorted(s.signal_id for s in ended) == [A, B, C]
    assert [e.signal_id for e in board.collect_events()] == [A, B, C]
    assert board.signal(D).status is SignalStatus.POSTED


def test_expire_overdue_leaves_final_signals_alone():
    board = history(posted(A, 0), claimed(A, 1), completed(A, 2), posted(B, 0), unclaimed(B, 1))

    assert board.expire_overdue(at(100_000), POST_TIMEOUT, CLAIM_TIMEOUT) == []
    assert board.collect_events() == []


# ========================================================================= versions
def test_events_carry_consecutive_versions_and_each_signal_counts_its_own_transitions():
    board = BlackboardAggregate(BB)
    post(board, A, 0)
    post(board, B, 1, after=[A])
    board.claim_signal(A, RESEARCHER, at(2))
    board.complete_signal(A, "ps-researcher", SignalResult(), at(3))
    board.claim_signal(B, RESEARCHER, at(4))

    board.fail_signal(B, "ps-researcher", "boom", at(5))

    assert [e.version for e in board.collect_events()] == [1, 2, 3, 4, 5, 6]
    assert board.version == 6
    assert (board.signal(A).version, board.signal(B).version) == (3, 3)


def test_collecting_events_hands_them_over_once():
    board = BlackboardAggregate(BB)
    post(board, A, 0)
    assert board.has_pending_events

    first = board.collect_events()

    assert len(first) == 1 and board.collect_events() == [] and not board.has_pending_events


def test_replaying_the_recorded_events_rebuilds_the_same_board():
    board = BlackboardAggregate(BB)
    post(board, A, 0, dedupe_key="k")
    post(board, B, 1, after=[A])
    board.claim_signal(A, RESEARCHER, at(2))
    board.fail_signal(A, "ps-researcher", "boom", at(3))

    replayed = BlackboardAggregate.replay(BB, board.collect_events())

    assert replayed.signals == board.signals and replayed.version == board.version == 5
    assert replayed.find_by_key("k") == board.signal(A)


@pytest.mark.parametrize(
    "event",
    [
        events_of(posted(A), claimed(A), completed(A))[2],  # version 3 after version 1: a gap
        events_of(posted(A), claimed(A))[0].model_copy(update={"signal_id": B}),  # version 1 again
    ],
    ids=["gap", "repeat"],
)
def test_apply_refuses_an_event_out_of_sequence(event):
    board = history(posted(A))
    before = board.signals

    with pytest.raises(ValueError, match="does not follow"):
        board.apply(event)

    assert board.version == 1 and board.signals == before


def test_apply_refuses_an_event_of_another_board():
    board = history(posted(A))
    foreign = events_of(posted(A), claimed(A))[1].model_copy(update={"blackboard_id": "bb-2"})

    with pytest.raises(ValueError, match="does not follow"):
        board.apply(foreign)

    assert board.version == 1 and board.signal(A).status is SignalStatus.POSTED


def test_apply_folds_the_next_event_in_sequence():
    board = history(posted(A))

    board.apply(events_of(posted(A), claimed(A, 3))[1])

    assert board.version == 1 + 1 and board.signal(A).claimed_at == at(3)
    assert board.collect_events() == []  # applied history is not pending


def test_a_changed_copy_keeps_every_other_field_as_dataclasses_replace_does():
    """`AgentSignal._changed` copies field by field through a function written from the dataclass's fields:
    with every field set away from its default, each one not changed comes through, and nothing is shared
    but the values themselves."""
    import dataclasses

    from blackboard.domain.signals import AgentSignal, FailedAttempt, SignalUsage, Stall

    values: dict[str, Any] = {
        "signal_id": A,
        "blackboard_id": BB,
        "signal_type": SignalType.ANALYSIS,
        "payload": PAYLOAD,
        "target_capabilities": ("ANALYSIS", "REVIEW"),
        "posted_by": "ps-skill",
        "created_at": at(0),
        "status": SignalStatus.CLAIMED,
        "after": (B,),
        "waiting_for": frozenset({C}),
        "claimable_since": at(1),
        "claimed_by": "ps-analyst",
        "claimed_at": at(2),
        "completed_at": at(3),
        "result": SignalResult(artifact_path="out/a.md"),
        "dedupe_key": "key-1",
        "retry_of": D,
        "claim_token": "token-1",
        "renewed_at": at(4),
        "read_keys": ("r/",),
        "write_keys": ("w/",),
        "budget_usd": 1.5,
        "usage": SignalUsage(runner="command", input_tokens=3),
        "priority": 0,
        "not_before": at(5),
        "attempt": 2,
        "max_attempts": 3,
        "attempts": (FailedAttempt(attempt=1, error="boom", ended_at=at(6), retry_at=at(7), max_attempts=3),),
        "gate": True,
        "timeout_s": 60.0,
        "decided_by": "someone",
        "decision_note": "fine",
        "concurrency_key": "db",
        "reserved": Reservation(usd=0.5, tokens=10),
        "flow_id": "docbot-1",
        "step_id": "plan",
        "charged_attempts": (1,),
        "stalls": (Stall(attempt=1, actor="ps-analyst", seconds_idle=300.0, at=at(6)),),
        "claim_runner": "anthropic",
        "nudges": 2,
        "version": 7,
    }
    names = [f.name for f in dataclasses.fields(AgentSignal)]
    assert sorted(values) == sorted(names)  # a field added later must be added here too
    signal = AgentSignal(**values)
    assert all(getattr(signal, f.name) != f.default for f in dataclasses.fields(AgentSignal))
    changed = signal._changed(version=8, claimed_by=None)
    assert changed == dataclasses.replace(signal, version=8, claimed_by=None)
    assert changed is not signal and signal.version == 7 and signal.claimed_by == "ps-analyst"
    assert signal._changed() == signal
    with pytest.raises(TypeError, match="no field"):
        signal._changed(colour="red")
