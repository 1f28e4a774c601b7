"""The knowledge side's ports: UnitOfWork.entry and EntryReadModel, held to one behaviour on every adapter."""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from blackboard.application.knowledge.commands import ResolveEntry, SearchEntries, WriteEntry
from blackboard.application.knowledge.ports import EntryFilter, EntryReadModel, EntrySearch
from blackboard.application.knowledge.queries import KnowledgeQueries
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


# values and filters over a few fields and the scalars that tell JSON types apart (1, 1.0, True, "1", null)
SCALARS = st.sampled_from(["x", "1", "", 1, 1.0, 0, 2.5, True, False, None])
FIELDS = st.sampled_from(["a", "b", "value"])
VALUES = st.one_of(
    st.dictionaries(
        FIELDS, SCALARS | st.lists(SCALARS, max_size=2) | st.dictionaries(FIELDS, SCALARS, max_size=1)
    ),
    SCALARS,
    st.lists(SCALARS, max_size=2),
)
FILTERS = st.dictionaries(FIELDS, SCALARS, max_size=2)
_boards = iter(range(10**9))


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

    def search(
        self, parts: Parts, words: str, board: str = "bb-1", limit: int = 50, **more: Any
    ) -> list[str]:
        from blackboard.application.knowledge.search import words as split

        value_equals = tuple(sorted(more.pop("value_equals", {}).items()))
        offset = more.pop("offset", 0)
        criteria = EntryFilter(blackboard_id=board, value_equals=value_equals, **more)
        query = EntrySearch(criteria, tuple(split(words)), limit, offset)
        return [hit.entry.key for hit in parts.entries.search(query)]

    def test_search_finds_what_holds_every_word_in_its_key_value_strings_topics_or_author(self, parts):
        parts.write("notes/cafe", "ps-ann", {"text": "The Café opens at NINE", "tags": ["Late-Night"]})
        parts.write("plan/x_y", "ps-bob", "opens early", topics=("food.guide",))
        parts.write("n/1", "ps-bob", {"café": 7, "n": [1, 2.5, True, None]})  # no string, no word
        parts.write("n/2", "ps-bob", "cafe", board="bb-2")
        parts.write("n/3", "ps-bob", "cafe", board="bb-1x")  # a board whose id starts with bb-1's

        assert sorted(self.search(parts, "cafe")) == ["notes/cafe"]  # accents and case aside; not object keys
        assert sorted(self.search(parts, "OPENS")) == ["notes/cafe", "plan/x_y"]
        assert self.search(parts, "opens nine") == ["notes/cafe"]  # every word, any order
        assert self.search(parts, "night late") == ["notes/cafe"]  # `-` cuts words
        assert self.search(parts, "x") == ["plan/x_y"] and self.search(parts, "y plan") == ["plan/x_y"]
        assert self.search(parts, "guide") == ["plan/x_y"]  # topics
        assert sorted(self.search(parts, "bob")) == ["n/1", "plan/x_y"]  # the author's words
        assert self.search(parts, "open") == [] and self.search(parts, "opens missing") == []  # whole words
        assert self.search(parts, "7") == []  # numbers are no text

    def test_search_folds_the_case_of_what_compatibility_forms_decompose_to(self, parts):
        parts.write("units", "ps-ann", "㎒ ℌello 𝚨lpha ℇ")  # MHz, Hello, Αlpha, Ɛ once decomposed

        for query in ("mhz hello", "MHZ HELLO", "㎒ ℌello", "αlpha", "𝚨LPHA", "ɛ", "ℇ"):
            assert self.search(parts, query) == ["units"], query

    def test_search_reads_each_key_s_current_version_never_an_old_one_or_a_candidate(self, parts):
        parts.write("k", "ps-a", "alpha")
        parts.write("k", "ps-a", "beta")
        parts.write("k", "ps-b", "gamma")  # another author's different value: a candidate

        assert self.search(parts, "alpha") == [] and self.search(parts, "gamma") == []
        assert self.search(parts, "beta") == ["k"]

    def test_search_filters_as_find_does_ranks_and_pages(self, parts):
        parts.write("b/2", "ps-a", "word", topics=("t1",), entry_type="finding")
        parts.write("b/1", "ps-b", "word word word", topics=("t1", "t2"), section="s")
        parts.write("a_x", "ps-a", "word word")
        parts.write("a_x", "ps-c", "other")  # conflict: a_x keeps ps-a's value
        parts.write("c/3", "ps-a", "word", topics=("t3",))  # ties b/2 (as many words): key order breaks it

        assert self.search(parts, "word") == ["b/1", "a_x", "b/2", "c/3"]  # more often first
        assert self.search(parts, "word", author="ps-a") == ["a_x", "b/2", "c/3"]
        assert sorted(self.search(parts, "word", topic="t1")) == ["b/1", "b/2"]
        assert self.search(parts, "word", prefix="b/", limit=1) == ["b/1"]
        assert self.search(parts, "word", prefix="a%") == [] and self.search(parts, "word", prefix="a_") == [
            "a_x"
        ]
        assert self.search(parts, "word", conflicts_only=True) == ["a_x"]
        assert self.search(parts, "word", entry_type="finding") == ["b/2"]
        assert self.search(parts, "word", section="s") == ["b/1"]
        assert self.search(parts, "word", limit=2, offset=1) == ["a_x", "b/2"]
        assert self.search(parts, "word", offset=4) == []

    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(
        values=st.lists(VALUES, min_size=1, max_size=6), wanted=FILTERS, limit=st.none() | st.integers(1, 3)
    )
    def test_a_value_filter_finds_what_the_domain_s_predicate_matches(self, parts, values, wanted, limit):
        """The store's filter (SQL on each database) against EntryFilter.matches, on the same entries."""
        board = f"bb-p{next(_boards)}"  # a board per example: the fixture's database is shared by them
        for n, value in enumerate(values):
            parts.write(f"k{n}", "ps-a", value, board=board)
        criteria = EntryFilter(blackboard_id=board, value_equals=tuple(sorted(wanted.items())), limit=limit)

        found = [e.key for e in parts.entries.find(criteria)]

        everything = parts.entries.find(EntryFilter(blackboard_id=board))
        assert found == [e.key for e in everything if criteria.matches(e)][:limit]

    def test_a_current_read_tells_whether_the_rows_are_behind_the_log(self, parts):
        written = parts.write("plan", "ps-a", 1)
        entry, behind = parts.entries.get_current("bb-1", "plan")
        assert (entry, behind) in [(written, False), (None, True)]  # (None, True): the adapter cannot tell
        assert parts.entries.get_current("bb-1", "nothing") == (None, True)
        if entry is None:
            return
        # an event in the log without its rows (an import, another process's append that wrote none)
        store = parts.projector._store
        event = EntryWritten(
            blackboard_id="bb-2",
            version=1,
            occurred_at=written.current.written_at,
            key="k",
            value=2,
            author="ps-a",
        )
        store.append(event.stream_id, 0, [event])

        assert parts.entries.get_current("bb-1", "plan") == (written, True)
        parts.projector.catch_up()
        assert parts.entries.get_current("bb-1", "plan") == (written, False)

    def test_a_current_search_tells_whether_the_rows_are_behind_the_log_hits_or_none(self, parts):
        written = parts.write("plan", "ps-a", "alpha beta")

        def current(words: str, board: str = "bb-1") -> tuple[list[str], bool]:
            hits, behind = parts.entries.search_current(
                EntrySearch(EntryFilter(blackboard_id=board), (words,), 20, 0)
            )
            return [hit.entry.key for hit in hits], behind

        told = current("alpha")
        assert told in [(["plan"], False), ([], True)]  # ([], True): the adapter cannot tell
        if told == ([], True):
            assert current("gamma") == ([], True)
        else:
            assert current("gamma") == ([], False)  # no hit, and still told
            # an event in the log without its rows (an import, another process's append that wrote none)
            event = EntryWritten(
                blackboard_id="bb-2",
                version=1,
                occurred_at=written.current.written_at,
                key="k",
                value="gamma",
                author="ps-a",
            )
            parts.projector._store.append(event.stream_id, 0, [event])
            assert current("alpha") == (["plan"], True) and current("gamma", "bb-2") == ([], True)
        # the application's search catches up then, and searches again
        queries = KnowledgeQueries(parts.entries, parts.read_model, parts.projector)
        if told != ([], True):
            found = queries.search(SearchEntries(blackboard_id="bb-2", text="gamma"))
            assert [hit.entry.key for hit in found] == ["k"]
            assert current("alpha") == (["plan"], False)
        assert [hit.entry for hit in queries.search(SearchEntries(blackboard_id="bb-1", text="beta"))] == [
            written
        ]

    def test_search_filters_an_object_value_s_fields_by_json_equality(self, parts):
        parts.write("s", "ps-a", {"w": "x", "status": "done", "n": 1, "ok": True, "gone": None})
        parts.write("f", "ps-a", {"w": "x", "status": "Done", "n": 1.0, "ok": 1, "gone": "null"})
        parts.write("l", "ps-a", ["x", "status", "done"])  # not an object
        parts.write("t", "ps-a", "x status done")

        def found(**fields: Any) -> list[str]:
            return sorted(self.search(parts, "x", value_equals=fields))

        assert found() == ["f", "l", "s", "t"]
        assert found(status="done") == ["s"] and found(status="Done") == ["f"]
        assert found(n=1) == ["f", "s"] and found(n=1.0) == ["f", "s"] and found(n=2) == []
        assert found(ok=True) == ["s"] and found(ok=1) == ["f"]  # a boolean is no number
        assert found(gone=None) == ["s"] and found(gone="null") == ["f"]
        assert found(status="done", n=1) == ["s"] and found(missing="done") == []

    def test_a_rebuild_gives_search_the_same_hits(self, parts):
        parts.write("plan", "ps-a", "first words")
        parts.write("plan", "ps-b", "other words")
        parts.write("notes", "ps-a", ["words", "more words"])
        parts.write("notes", "ps-a", ["words only"])
        before = self.search(parts, "words")

        parts.projector.rebuild()

        assert self.search(parts, "words") == before and sorted(before) == ["notes", "plan"]
        assert self.search(parts, "more") == [] and self.search(parts, "first") == ["plan"]

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
        assert [e.key for e in parts.entries.find(EntryFilter(blackboard_id="bb-1", topic="t"))] == [
            "plan"
        ]  # v3, the resolution, keeps the key's topic though the pick had none

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
