"""The rules of an entry key, on plain values: versions, conflicts, compare-and-set, resolution."""

from __future__ import annotations

from datetime import timedelta

import pytest

from blackboard.domain.events import EntryCandidateKept, EntryConflictResolved, EntryWritten, entry_stream_id
from blackboard.domain.knowledge import rules as entry_rules
from blackboard.domain.knowledge.entries import (
    CandidateNotFound,
    Entry,
    KeyInConflict,
    NotInConflict,
    StaleVersion,
)
from blackboard.infrastructure import documents
from blackboard.infrastructure.documents import jsonable
from tests.fakes import T0


def content(author: str, value, **more) -> dict:
    return {
        "value": value,
        "author": author,
        "entry_type": "note",
        "section": "default",
        "role": "assistant",
        "label": "unlabelled",
        "confidence": None,
        "depends_on": (),
        "topics": (),
        "meta": {},
        "signal_id": None,
        **more,
    }


def written(*writes: tuple[str, object], replaces: int | None = None) -> tuple[Entry | None, list]:
    """The key after these (author, value) writes, each decided by the rules and folded in."""
    entry, events = None, []
    for n, (author, value) in enumerate(writes):
        event = entry_rules.write(
            entry, "bb-1", "plan", content(author, value), T0 + timedelta(seconds=n), replaces
        )
        events.append(event)
        entry = entry_rules.evolve(entry, event, position=n + 1)
    return entry, events


def test_the_first_write_of_a_key_is_version_1():
    entry, [event] = written(("ps-a", 1))

    assert isinstance(event, EntryWritten) and event.version == 1
    assert entry.current.version == 1 and entry.current.value == 1 and not entry.in_conflict


def test_the_same_author_writes_the_next_version():
    entry, events = written(("ps-a", 1), ("ps-a", 2))

    assert [type(e) for e in events] == [EntryWritten, EntryWritten]
    assert (entry.current.version, entry.current.value) == (2, 2)


def test_another_author_with_a_json_equal_value_writes_the_next_version():
    entry, events = written(("ps-a", {"n": 1, "l": [1.0, True]}), ("ps-b", {"l": [1, True], "n": 1.0}))

    assert isinstance(events[1], EntryWritten)
    assert (entry.current.version, entry.current.author) == (2, "ps-b")


def test_another_author_with_another_value_puts_the_key_in_conflict_keeping_both_values():
    entry, events = written(("ps-a", "x"), ("ps-b", "y"))

    assert isinstance(events[1], EntryCandidateKept) and events[1].holder == "ps-a"
    assert entry.in_conflict and entry.current.value == "x"
    assert [(c.version, c.author, c.value) for c in entry.candidates] == [(1, "ps-a", "x"), (2, "ps-b", "y")]


def test_while_in_conflict_every_write_adds_a_candidate_even_the_holders():
    entry, events = written(("ps-a", "x"), ("ps-b", "y"), ("ps-a", "z"), ("ps-c", "x"))

    assert [type(e) for e in events[2:]] == [EntryCandidateKept, EntryCandidateKept]
    assert [c.version for c in entry.candidates] == [1, 2, 3, 4] and entry.current.version == 1


def test_true_is_not_json_equal_to_1():
    assert not entry_rules.json_equal(True, 1)
    assert entry_rules.json_equal([1, {"a": None}], [1.0, {"a": None}])
    assert not entry_rules.json_equal({"a": 1}, {"a": 1, "b": 2})


def test_replaces_at_the_current_version_writes_whoever_the_author():
    entry, _ = written(("ps-a", "x"))

    event = entry_rules.write(entry, "bb-1", "plan", content("ps-b", "y"), T0, replaces=1)

    assert isinstance(event, EntryWritten) and event.version == 2


def test_replaces_at_an_old_version_is_refused_and_records_nothing():
    entry, _ = written(("ps-a", "x"), ("ps-a", "y"))

    with pytest.raises(StaleVersion, match="at version 2, not 1"):
        entry_rules.write(entry, "bb-1", "plan", content("ps-a", "z"), T0, replaces=1)


def test_replaces_0_writes_only_a_key_never_written():
    assert entry_rules.write(None, "bb-1", "plan", content("ps-a", "x"), T0, replaces=0).version == 1
    entry, _ = written(("ps-a", "x"))
    with pytest.raises(StaleVersion):
        entry_rules.write(entry, "bb-1", "plan", content("ps-a", "y"), T0, replaces=0)


def test_resolving_with_a_pick_records_that_candidate_as_a_new_version_by_the_resolver():
    entry, _ = written(("ps-a", "x"), ("ps-b", "y"))

    event = entry_rules.resolve(entry, "ps-lead", "b has sources", T0, pick=2)
    after = entry_rules.evolve(entry, event, 3)

    assert isinstance(event, EntryConflictResolved) and (event.picked, event.rationale) == (
        2,
        "b has sources",
    )
    assert (after.current.version, after.current.value, after.current.author) == (3, "y", "ps-lead")
    assert not after.in_conflict


def test_resolving_with_a_merged_value_records_it_as_a_new_version():
    entry, _ = written(("ps-a", "x"), ("ps-b", "y"))

    after = entry_rules.evolve(entry, entry_rules.resolve(entry, "ps-lead", "both", T0, value=["x", "y"]), 3)

    assert after.current.value == ["x", "y"] and after.current.version == 3


def test_picking_a_version_that_is_not_a_candidate_is_not_found():
    entry, _ = written(("ps-a", "x"), ("ps-b", "y"))

    with pytest.raises(CandidateNotFound, match="candidates are 1, 2"):
        entry_rules.resolve(entry, "ps-lead", "why", T0, pick=7)


def test_a_key_not_in_conflict_cannot_be_resolved():
    entry, _ = written(("ps-a", "x"))

    with pytest.raises(NotInConflict):
        entry_rules.resolve(entry, "ps-lead", "why", T0, pick=1)


def test_the_conflict_error_says_who_holds_the_key_and_which_candidate_is_yours():
    entry, _ = written(("ps-a", "x"), ("ps-b", "y"))

    assert "held by ps-a (version 1)" in str(KeyInConflict(entry, 2)) and "candidate version 2" in str(
        KeyInConflict(entry, 2)
    )


def test_an_entry_streams_id_is_never_a_board_id_and_names_its_board():
    from blackboard.domain.events import board_of_stream

    stream = entry_stream_id("bb-1", "plan/outline")

    assert stream != "bb-1" and board_of_stream(stream) == "bb-1" and board_of_stream("bb-1") == "bb-1"


def test_the_document_carries_every_field_of_the_contract():
    entry, _ = written(("ps-a", "x"), ("ps-b", "y"))

    document = jsonable(documents.entry(entry))

    assert set(document) >= {
        "blackboard_id",
        "key",
        "version",
        "value",
        "entry_type",
        "author",
        "section",
        "role",
        "label",
        "confidence",
        "depends_on",
        "topics",
        "meta",
        "signal_id",
        "written_at",
        "position",
        "conflict",
    }
    assert [c["author"] for c in document["conflict"]["candidates"]] == ["ps-a", "ps-b"]
