"""Steps of features/key_permissions.feature: a signal's key permissions on the in-memory board of
tests/fakes.py and on the container over a SQLite file."""

from __future__ import annotations

import pytest
from pytest_bdd import given, parsers, scenarios, then, when

from blackboard.application.commands import ClaimSignal, CompleteSignal, PostSignal
from blackboard.application.knowledge.commands import ReadEntry, WriteEntry
from blackboard.application.knowledge.queries import KnowledgeQueries
from blackboard.application.knowledge.service import KnowledgeService
from blackboard.domain.errors import BlackboardError
from blackboard.domain.knowledge.entries import Entry, EntryNotFound
from blackboard.domain.signals import AgentSignal
from tests.bdd.sqlite_board import entry_read_model
from tests.fakes import Board

scenarios("key_permissions.feature")

BOARD = "PROJ-001"


@pytest.fixture
def knowledge(board: Board) -> KnowledgeService:
    return KnowledgeService(board.unit_of_work(), board.dispatcher, board.clock, board.settings.claim_timeout)


@pytest.fixture
def queries(board: Board) -> KnowledgeQueries:
    return KnowledgeQueries(
        entry_read_model(board),
        board.read_model,
        clock=board.clock,
        claim_timeout=board.settings.claim_timeout,
    )


def _attempt(call):
    try:
        return call()
    except BlackboardError as refused:
        return refused


@given(parsers.parse('"{name}" has written "{value}" under "{key}"'))
def has_written(knowledge: KnowledgeService, name: str, value: str, key: str) -> None:
    knowledge.write(WriteEntry(blackboard_id=BOARD, key=key, author=name, value=value))


@given(
    parsers.parse('"{name}" has posted a research signal that may read "{read}" and write "{write}"'),
    target_fixture="signal",
)
def has_posted(board: Board, name: str, read: str, write: str) -> AgentSignal:
    return board.service.post_signal(
        PostSignal(
            signal_type="RESEARCH",
            ps_id=BOARD,
            entry_id="e-1",
            topic="stores",
            posted_by=name,
            read_keys=(read,),
            write_keys=(write,),
        )
    )


@given(parsers.parse('"{name}" has claimed it with the token "{token}"'))
def has_claimed(board: Board, signal: AgentSignal, name: str, token: str) -> None:
    board.service.claim_signal(ClaimSignal(signal_id=signal.signal_id, agent_id=name, token=token))


@given(parsers.parse('"{name}" has completed it with the token "{token}"'))
def has_completed(board: Board, signal: AgentSignal, name: str, token: str) -> None:
    board.service.complete_signal(CompleteSignal(signal_id=signal.signal_id, agent_id=name, token=token))


@given("the claim timeout has passed without a renewal")
def timeout_passes(board: Board) -> None:
    board.clock.advance(board.settings.claim_timeout.total_seconds())


@when(
    parsers.parse('"{name}" writes "{value}" under "{key}" for the signal with the token "{token}"'),
    target_fixture="outcome",
)
def writes(knowledge: KnowledgeService, signal: AgentSignal, name: str, value: str, key: str, token: str):
    return _attempt(
        lambda: knowledge.write(
            WriteEntry(
                blackboard_id=BOARD,
                key=key,
                author=name,
                value=value,
                signal_id=signal.signal_id,
                token=token,
            )
        )
    )


@when(
    parsers.parse('"{name}" reads "{key}" for the signal with the token "{token}"'), target_fixture="outcome"
)
def reads(queries: KnowledgeQueries, signal: AgentSignal, name: str, key: str, token: str):
    return _attempt(
        lambda: queries.read(
            ReadEntry(blackboard_id=BOARD, key=key, signal_id=signal.signal_id, token=token, reader=name)
        )
    )


@then("the write is accepted")
def accepted(outcome) -> None:
    assert isinstance(outcome, Entry), outcome


@then(parsers.parse('"{key}" reads "{value}"'))
def key_reads(queries: KnowledgeQueries, key: str, value: str) -> None:
    assert queries.read(ReadEntry(blackboard_id=BOARD, key=key)).current.value == value


@then(parsers.parse('it reads "{value}"'))
def it_reads(outcome, value: str) -> None:
    assert isinstance(outcome, Entry), outcome
    assert outcome.current.value == value


@then(parsers.parse('it is refused because "{reason}"'))
def refused(outcome, reason: str) -> None:
    assert isinstance(outcome, BlackboardError), f"expected a refusal, got {outcome!r}"
    assert reason in str(outcome)


@then(parsers.parse('nothing is written under "{key}"'))
def nothing_written(queries: KnowledgeQueries, key: str) -> None:
    with pytest.raises(EntryNotFound):
        queries.read(ReadEntry(blackboard_id=BOARD, key=key))
