"""Key permissions: a signal's key lists restrict its claimer's reads and writes that name it."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from blackboard.application.commands import ClaimSignal, CompleteSignal, FailSignal, PostSignal, RetrySignal
from blackboard.application.knowledge.commands import ReadEntry, WriteEntry
from blackboard.application.knowledge.queries import KnowledgeQueries
from blackboard.application.knowledge.service import KnowledgeService
from blackboard.domain.errors import SignalNotFound
from blackboard.domain.knowledge import permissions as key_permissions
from blackboard.domain.knowledge.permissions import KeyPermissionDenied
from blackboard.domain.signals import AgentSignal, SignalPayload, SignalStatus, SignalType
from blackboard.infrastructure.memory.entries import InMemoryEntryReadModel
from tests.fakes import Board, agent

T0 = datetime(2026, 1, 1, tzinfo=UTC)
TIMEOUT = timedelta(minutes=5)


def signal(
    read: tuple[str, ...] = ("brief",), write: tuple[str, ...] = ("draft/*",), **changes
) -> AgentSignal:
    base = AgentSignal(
        signal_id="sig-0000000a",
        blackboard_id="b",
        signal_type=SignalType.RESEARCH,
        payload=SignalPayload(ps_id="ps-1", entry_id="e-1", topic="t"),
        target_capabilities=("RESEARCH",),
        posted_by="ps-skill",
        created_at=T0,
        read_keys=read,
        write_keys=write,
    ).claimed("ps-researcher", T0, "tok")
    return replace(base, **changes)


def check(s: AgentSignal, access="write", key="draft/a", author="ps-researcher", token="tok", at=T0) -> None:
    key_permissions.check(s, access, key, author, token, at, TIMEOUT)


@pytest.mark.parametrize(
    ("pattern", "key", "matches"),
    [
        ("draft/*", "draft/a", True),
        ("draft/*", "draft/", True),
        ("draft/*", "draft", False),
        ("draft/*", "drafts/a", False),
        ("brief", "brief", True),
        ("brief", "brief/2", False),
        ("*", "anything", True),
        ("brief*", "briefing", True),
    ],
)
def test_a_trailing_star_matches_a_prefix_and_any_other_pattern_only_its_own_key(pattern, key, matches):
    assert key_permissions.matches(pattern, key) is matches


def test_the_claimer_may_write_a_key_of_its_write_list_with_the_claims_token():
    check(signal())


def test_a_write_outside_the_write_list_is_refused_even_for_a_key_it_may_read():
    with pytest.raises(KeyPermissionDenied, match="brief is not in its write keys"):
        check(signal(), key="brief")


def test_a_read_is_allowed_for_a_key_of_either_list_and_refused_for_any_other():
    check(signal(), "read", "brief")
    check(signal(), "read", "draft/x")
    with pytest.raises(KeyPermissionDenied, match="secret is not in its read keys"):
        check(signal(), "read", "secret")


def test_only_the_claimer_may_read_or_write_under_the_signal():
    for access in ("read", "write"):
        with pytest.raises(KeyPermissionDenied, match="only its claimer ps-researcher may, not ps-analyst"):
            check(signal(), access, "draft/a", author="ps-analyst")


def test_a_claim_with_a_token_needs_that_token():
    with pytest.raises(KeyPermissionDenied, match="token was not presented"):
        check(signal(), token=None)
    with pytest.raises(KeyPermissionDenied, match="not the claim's"):
        check(signal(), token="other")


def test_a_claim_without_a_token_needs_none():
    check(signal(claim_token=None), token=None)


def test_a_signal_not_held_by_a_claim_allows_nothing():
    for status in (SignalStatus.POSTED, SignalStatus.COMPLETED, SignalStatus.EXPIRED):
        with pytest.raises(KeyPermissionDenied, match=f"the signal is {status.value}"):
            check(signal(status=status))


def test_a_claim_past_its_claim_timeout_counts_as_lost_and_a_renewal_counts_again():
    with pytest.raises(KeyPermissionDenied, match="ran past its claim timeout"):
        check(signal(), at=T0 + TIMEOUT)
    check(signal(renewed_at=T0 + timedelta(minutes=4)), at=T0 + TIMEOUT)


def test_a_signal_without_key_lists_restricts_nobody():
    check(signal(read=(), write=(), status=SignalStatus.COMPLETED), author="anyone", token=None, key="x")


@pytest.mark.parametrize("bad", ["", "bad key", "a*b", "**", "draft/**", "x" * 201])
def test_a_key_pattern_must_be_a_key_with_at_most_a_trailing_star(bad):
    with pytest.raises(ValidationError, match="write_keys"):
        PostSignal(signal_type="RESEARCH", ps_id="ps-1", entry_id="e-1", topic="t", write_keys=(bad,))


# --- through the services, on the in-memory adapters ------------------------------------------------


def knowledge_board() -> tuple[Board, KnowledgeService, KnowledgeQueries]:
    board = Board(agent("ps-researcher", RESEARCH=0.9), agent("ps-analyst", RESEARCH=0.9))
    timeout = board.settings.claim_timeout
    service = KnowledgeService(board.unit_of_work(), board.dispatcher, board.clock, timeout)
    queries = KnowledgeQueries(
        InMemoryEntryReadModel(board.store, board.read_model),
        board.read_model,
        clock=board.clock,
        claim_timeout=timeout,
    )
    return board, service, queries


def post_claimed(board: Board, token: str | None = "tok") -> str:
    posted = board.service.post_signal(
        PostSignal(
            signal_type="RESEARCH",
            ps_id="b",
            entry_id="e-1",
            topic="t",
            read_keys=("brief",),
            write_keys=("draft/*",),
        )
    )
    board.service.claim_signal(ClaimSignal(signal_id=posted.signal_id, agent_id="ps-researcher", token=token))
    return posted.signal_id


def write(key: str, signal_id: str, author: str = "ps-researcher", token: str | None = "tok") -> WriteEntry:
    return WriteEntry(blackboard_id="b", key=key, value="v", author=author, signal_id=signal_id, token=token)


def test_a_refused_write_records_nothing():
    board, service, _ = knowledge_board()
    signal_id = post_claimed(board)
    before = board.event_types()

    with pytest.raises(KeyPermissionDenied):
        service.write(write("elsewhere", signal_id))

    assert board.event_types() == before


def test_the_claimer_writes_its_keys_and_reads_them_back_under_the_signal():
    board, service, queries = knowledge_board()
    signal_id = post_claimed(board)

    service.write(write("draft/1", signal_id))

    read = ReadEntry(
        blackboard_id="b", key="draft/1", signal_id=signal_id, token="tok", reader="ps-researcher"
    )
    assert queries.read(read).current.value == "v"
    with pytest.raises(KeyPermissionDenied):
        queries.read(read.model_copy(update={"reader": "ps-analyst"}))


def test_a_write_after_the_claim_timeout_is_refused_though_nobody_expired_the_claim_yet():
    board, service, _ = knowledge_board()
    signal_id = post_claimed(board)
    board.clock.advance(board.settings.claim_timeout.total_seconds())

    with pytest.raises(KeyPermissionDenied, match="claim timeout"):
        service.write(write("draft/1", signal_id))


def test_naming_a_signal_the_board_does_not_hold_is_not_found():
    _, service, queries = knowledge_board()

    with pytest.raises(SignalNotFound):
        service.write(write("draft/1", "sig-ffffffff"))
    with pytest.raises(SignalNotFound):
        queries.read(ReadEntry(blackboard_id="b", key="k", signal_id="sig-ffffffff", reader="x"))


def test_a_completions_knowledge_lands_after_the_claim_ended_whatever_the_key_lists():
    board, service, _ = knowledge_board()
    signal_id = post_claimed(board)
    board.service.complete_signal(CompleteSignal(signal_id=signal_id, agent_id="ps-researcher", token="tok"))
    completion = [r.event for r in board.store.read_all() if r.event.event_type == "AgentSignalCompleted"][0]
    completion = completion.model_copy(
        update={"result": completion.result.model_copy(update={"knowledge_items": ("k",)})}
    )

    service.land_results(completion)

    assert board.event_types()[-1] == "EntryWritten"


def test_a_retry_keeps_the_key_lists_of_the_signal_it_retries():
    board, _, _ = knowledge_board()
    signal_id = post_claimed(board)
    board.service.fail_signal(
        FailSignal(signal_id=signal_id, agent_id="ps-researcher", error="x", token="tok")
    )

    retried = board.service.retry_signal(RetrySignal(signal_id=signal_id))

    assert (retried.read_keys, retried.write_keys) == (("brief",), ("draft/*",))
