"""The knowledge side's ports: UnitOfWork.entry and EntryReadModel, held to one behaviour on every adapter."""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any

import pytest

from blackboard.application.knowledge.commands import ResolveEntry, WriteEntry
from blackboard.application.knowledge.ports import EntryFilter, EntryReadModel
from blackboard.application.knowledge.service import KnowledgeService
from blackboard.application.ports import SignalReadModel, UnitOfWork
from blackboard.application.projection import Projector
from blackboard.domain.events import EntryWritten
from blackboard.domain.knowledge.entries import KeyInConflict
from blackboard.infrastructure import documents
from blackboard.infrastructure.documents import jsonable
from tests.fakes import EventDispatcher, TickingClock


@dataclass
class Parts:
    uow: UnitOfWork
    entries: EntryReadModel
    projector: Projector
    read_model: SignalReadModel

    def __post_init__(self) -> None:
        self.knowledge = KnowledgeService(self.uow, EventDispatcher(), TickingClock())

    def write(self, key: str, author: str, value: Any, board: str = "bb-1", **more: Any):
        try:
            return self.knowledge.write(
                WriteEntry(blackboard_id=board, key=key, author=author, value=value, **more)
            )
        except KeyInConflict as conflict:
            return conflict.entry


def state(entries: list) -> list[dict]:
    return jsonable(documents.entries(entries))


class EntryContract(abc.ABC):
    @abc.abstractmethod
    @pytest.fixture
    def parts(self) -> Parts: ...

    def test_a_committed_write_is_read_back_with_its_version_and_log_position(self, parts):
        written = parts.write("plan", "ps-a", {"steps": [1, 2]}, topics=("plans",), confidence=0.5)

        found = parts.entries.get("bb-1", "plan")

        assert found == written
        assert (found.current.version, found.current.position, found.current.topics) == (1, 1, ("plans",))

    def test_the_next_transaction_loads_what_the_last_one_committed(self, parts):
        parts.write("plan", "ps-a", 1)

        with parts.uow.entry("bb-1", "plan") as tx:
            loaded = tx.load()

        assert loaded is not None and loaded.version == 1 and loaded.current.value == 1

    def test_a_conflict_is_kept_in_the_row_with_its_candidates(self, parts):
        parts.write("plan", "ps-a", "x")
        parts.write("plan", "ps-b", "y")

        found = parts.entries.get("bb-1", "plan")

        assert found.in_conflict and [(c.version, c.author) for c in found.candidates] == [
            (1, "ps-a"),
            (2, "ps-b"),
        ]

    def test_find_filters_and_lists_in_key_order(self, parts):
        parts.write("b/2", "ps-a", 1, topics=("t1",), entry_type="finding")
        parts.write("b/1", "ps-b", 2, topics=("t1", "t2"), section="s")
        parts.write("a_x", "ps-a", 3)
        parts.write("a_x", "ps-c", 4)  # conflict
        parts.write("other", "ps-a", 5, board="bb-2")

        def keys(**criteria: Any) -> list[str]:
            return [e.key for e in parts.entries.find(EntryFilter(blackboard_id="bb-1", **criteria))]

        assert keys() == ["a_x", "b/1", "b/2"]
        assert keys(author="ps-a") == ["a_x", "b/2"]
        assert keys(topic="t1") == ["b/1", "b/2"] and keys(topic="t2") == ["b/1"]
        assert (
            keys(prefix="b/") == ["b/1", "b/2"] and keys(prefix="a_") == ["a_x"] and keys(prefix="a%") == []
        )
        assert keys(conflicts_only=True) == ["a_x"]
        assert keys(entry_type="finding") == ["b/2"] and keys(section="s") == ["b/1"]
        assert keys(limit=2) == ["a_x", "b/1"]

    def test_records_give_a_keys_events_or_the_boards_up_to_a_position(self, parts):
        parts.write("a", "ps-a", 1)
        parts.write("b", "ps-a", 2)
        parts.write("a", "ps-a", 3)
        parts.write("a", "ps-a", 4, board="bb-2")

        assert [r.position for r in parts.entries.records("bb-1", "a")] == [1, 3]
        assert [r.position for r in parts.entries.records("bb-1", upto=2)] == [1, 2]
        assert all(isinstance(r.event, EntryWritten) for r in parts.entries.records("bb-1"))

    def test_boards_never_see_each_others_entries_even_when_one_id_starts_the_other(self, parts):
        parts.write("k", "ps-a", 1, board="bb")
        parts.write("k", "ps-a", 2, board="bb_1")

        assert [r.event.blackboard_id for r in parts.entries.records("bb")] == ["bb"]
        assert [e.blackboard_id for e in parts.entries.find(EntryFilter(blackboard_id="bb"))] == ["bb"]

    def test_a_boards_own_stream_holds_no_entry_events(self, parts):
        parts.write("k", "ps-a", 1)

        with parts.uow.board("bb-1") as tx:
            assert tx.history() == []

    def test_a_rebuild_restores_entries_conflicts_and_candidates(self, parts):
        parts.write("plan", "ps-a", "x", topics=("t",))
        parts.write("plan", "ps-b", "y")
        parts.write("notes", "ps-a", [1])
        parts.knowledge.resolve(
            ResolveEntry(blackboard_id="bb-1", key="plan", author="ps-lead", rationale="r", pick=2)
        )
        parts.write("plan", "ps-c", "z")
        before = state(parts.entries.find(EntryFilter(blackboard_id="bb-1")))

        parts.projector.rebuild()

        assert state(parts.entries.find(EntryFilter(blackboard_id="bb-1"))) == before
        assert [
            e.key for e in parts.entries.find(EntryFilter(blackboard_id="bb-1", topic="t"))
        ] == []  # v3 has no topic

    def test_while_a_rebuild_is_behind_a_write_decides_on_the_keys_events_and_the_rows_follow(self, parts):
        parts.write("plan", "ps-a", "x")
        parts.read_model.reset()  # a rebuild that has cleared the rows and not refolded them yet

        after = parts.write("plan", "ps-b", "y")
        parts.projector.catch_up()

        assert after.in_conflict and parts.entries.get("bb-1", "plan") == after

    def test_counts_tell_types_authors_conflicts_and_the_latest_entry_of_one_board(self, parts):
        parts.write("a", "ps-a", 1, entry_type="finding")
        parts.write("b", "ps-a", 2)
        parts.write("b", "ps-b", 3)  # conflict: b stays ps-a's
        parts.write("c", "ps-c", 4, board="bb-2")

        counts = parts.entries.counts("bb-1")

        assert (counts.by_type, counts.by_author) == ({"finding": 1, "note": 1}, {"ps-a": 2})
        assert counts.in_conflict == ["b"] and counts.latest.key == "b"
        assert parts.entries.counts("bb-3").latest is None
