"""Steps of features/entry_conflicts.feature: entries on the in-memory board of tests/fakes.py and on the
container over a SQLite file."""

from __future__ import annotations

import pytest
from pytest_bdd import given, parsers, scenarios, then, when

from blackboard.application.commands import CompleteSignal
from blackboard.application.knowledge.commands import ReadEntry, ResolveEntry, WriteEntry
from blackboard.application.knowledge.queries import KnowledgeQueries
from blackboard.application.knowledge.service import KnowledgeService, result_key
from blackboard.domain.errors import BlackboardError
from blackboard.domain.events import AgentSignalCompleted
from blackboard.domain.knowledge.entries import Entry, KeyInConflict
from blackboard.domain.signals import AgentSignal
from blackboard.infrastructure.documents import history_version
from tests.bdd.sqlite_board import entry_read_model
from tests.fakes import Board

scenarios("entry_conflicts.feature")

BOARD = "PROJ-001"  # the board the shared steps post signals on


@pytest.fixture
def knowledge(board: Board) -> KnowledgeService:
    """Writes through the board's own unit of work; completions land their findings, as the container wires it."""
    service = KnowledgeService(board.unit_of_work(), board.dispatcher, board.clock)
    board.dispatcher.register(AgentSignalCompleted, service.land_results)
    return service


@pytest.fixture
def queries(board: Board) -> KnowledgeQueries:
    return KnowledgeQueries(entry_read_model(board), board.read_model)


def _write(knowledge: KnowledgeService, name: str, value: str, key: str, replaces: int | None = None):
    try:
        return knowledge.write(
            WriteEntry(blackboard_id=BOARD, key=key, author=name, value=value, replaces=replaces)
        )
    except BlackboardError as refused:
        return refused


def _read(queries: KnowledgeQueries, key: str) -> Entry:
    return queries.read(ReadEntry(blackboard_id=BOARD, key=key))


@given(parsers.parse('"{name}" has written "{value}" under "{key}"'))
def has_written(knowledge: KnowledgeService, name: str, value: str, key: str) -> None:
    outcome = _write(knowledge, name, value, key)
    assert isinstance(outcome, Entry | KeyInConflict), outcome  # a candidate is written too


@when(parsers.parse('"{name}" writes "{value}" under "{key}"'), target_fixture="outcome")
def writes(knowledge: KnowledgeService, name: str, value: str, key: str):
    return _write(knowledge, name, value, key)


@when(
    parsers.parse('"{name}" replaces version {version:d} of "{key}" with "{value}"'), target_fixture="outcome"
)
def replaces(knowledge: KnowledgeService, name: str, version: int, key: str, value: str):
    return _write(knowledge, name, value, key, replaces=version)


@when(
    parsers.parse('"{name}" picks version {version:d} of "{key}" because "{why}"'), target_fixture="outcome"
)
def picks(knowledge: KnowledgeService, name: str, version: int, key: str, why: str) -> Entry:
    return knowledge.resolve(
        ResolveEntry(blackboard_id=BOARD, key=key, author=name, rationale=why, pick=version)
    )


@when(parsers.parse('"{name}" merges "{key}" into "{value}" because "{why}"'), target_fixture="outcome")
def merges(knowledge: KnowledgeService, name: str, key: str, value: str, why: str) -> Entry:
    return knowledge.resolve(
        ResolveEntry(blackboard_id=BOARD, key=key, author=name, rationale=why, value=value)
    )


@when(parsers.parse('"{name}" completes the signal with the finding "{finding}"'))
def completes_with(
    board: Board, knowledge: KnowledgeService, signal: AgentSignal, name: str, finding: str
) -> None:
    board.service.complete_signal(
        CompleteSignal(signal_id=signal.signal_id, agent_id=name, knowledge_items=(finding,))
    )


@then(parsers.parse("the write is accepted as version {version:d}"))
def accepted(outcome, version: int) -> None:
    assert isinstance(outcome, Entry) and outcome.current.version == version


@then(parsers.parse('the write is refused because "{reason}"'))
def refused(outcome, reason: str) -> None:
    assert isinstance(outcome, BlackboardError) and reason in str(outcome)


@then(parsers.parse('"{key}" reads "{value}"'))
def reads(queries: KnowledgeQueries, key: str, value: str) -> None:
    assert _read(queries, key).current.value == value


@then(parsers.parse('"{key}" is not in conflict'))
def not_in_conflict(queries: KnowledgeQueries, key: str) -> None:
    assert not _read(queries, key).in_conflict


@then(
    parsers.parse('the candidates for "{key}" are "{first}" by "{first_by}" and "{second}" by "{second_by}"')
)
def candidates_are(
    queries: KnowledgeQueries, key: str, first: str, first_by: str, second: str, second_by: str
) -> None:
    found = [(c.value, c.author) for c in _read(queries, key).candidates]
    assert found == [(first, first_by), (second, second_by)]


@then(parsers.parse('"{key}" has {count:d} candidates'))
def has_candidates(queries: KnowledgeQueries, key: str, count: int) -> None:
    assert len(_read(queries, key).candidates) == count


@then(parsers.parse('"{key}" has {count:d} versions'))
def has_versions(queries: KnowledgeQueries, key: str, count: int) -> None:
    assert len(queries.history(ReadEntry(blackboard_id=BOARD, key=key, history=True))) == count


@then(parsers.parse('the last version of "{key}" was written by "{name}" because "{why}"'))
def last_version_by(queries: KnowledgeQueries, key: str, name: str, why: str) -> None:
    last = history_version(queries.history(ReadEntry(blackboard_id=BOARD, key=key, history=True))[-1])
    assert (last.author, last.status, last.rationale) == (name, "resolution", why)


@then(parsers.parse('the board holds the finding "{finding}" by "{name}", linked to the signal'))
def holds_finding(queries: KnowledgeQueries, signal: AgentSignal, finding: str, name: str) -> None:
    landed = _read(queries, result_key(signal.signal_id, 1)).current
    assert (landed.value, landed.author, landed.signal_id, landed.entry_type) == (
        finding,
        name,
        signal.signal_id,
        "finding",
    )
