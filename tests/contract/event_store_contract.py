"""The EventStore port's contract: one suite, run against every adapter."""

from __future__ import annotations

import abc
import threading
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from blackboard.application.errors import BoardExists, ConcurrencyConflict
from blackboard.application.ports import EventStore, StoredEvent
from blackboard.domain.blackboard import BlackboardAggregate
from blackboard.domain.events import EntryWritten
from tests.contract.stories import every_event_type, post, posts


class EventStoreContract(abc.ABC):
    @abc.abstractmethod
    @pytest.fixture
    def store(self) -> EventStore: ...

    def test_an_empty_store_has_nothing_to_load_or_read(self, store):
        assert store.load("bb-1") == []
        assert store.read_all() == []
        assert store.last_position() == 0

    def test_every_event_type_comes_back_equal_to_what_was_appended(self, store):
        events = every_event_type()

        store.append("bb-1", 0, events)

        assert store.load("bb-1") == events
        assert [r.event for r in store.read_all()] == events

    def test_positions_follow_commit_order_across_boards(self, store):
        store.append("bb-1", 0, posts("bb-1", 2))
        store.append("bb-2", 0, posts("bb-2", 1, first=50))  # signal ids are unique across boards
        store.append("bb-1", 2, _next("bb-1", store, 3))

        recorded = store.read_all()

        positions = [r.position for r in recorded]
        assert positions == sorted(positions) and len(set(positions)) == 4
        assert [(r.event.blackboard_id, r.event.version) for r in recorded] == [
            ("bb-1", 1),
            ("bb-1", 2),
            ("bb-2", 1),
            ("bb-1", 3),
        ]
        assert all(r.recorded_at.tzinfo is not None for r in recorded)
        assert store.last_position() == positions[-1]

    def test_append_returns_the_records_with_their_positions(self, store):
        recorded = store.append("bb-1", 0, posts("bb-1", 2))

        assert [r.event.version for r in recorded] == [1, 2]
        assert [r.position for r in recorded] == [r.position for r in store.read_all()]

    def test_read_all_pages_with_after_and_limit(self, store):
        store.append("bb-1", 0, posts("bb-1", 5))
        first = store.read_all(limit=2)

        rest = store.read_all(after=first[-1].position)

        assert [r.event.version for r in first] == [1, 2]
        assert [r.event.version for r in rest] == [3, 4, 5]

    def test_load_after_a_version_returns_only_the_later_events(self, store):
        store.append("bb-1", 0, posts("bb-1", 4))

        assert [e.version for e in store.load("bb-1", after_version=2)] == [3, 4]

    def test_append_at_a_taken_version_conflicts_and_writes_nothing(self, store):
        store.append("bb-1", 0, posts("bb-1", 1))
        stale = posts("bb-1", 2, first=7)  # versions 1 and 2: version 1 is taken

        with pytest.raises(ConcurrencyConflict):
            store.append("bb-1", 0, stale)

        assert [e.version for e in store.load("bb-1")] == [1]
        assert store.last_position() == 1

    def test_append_under_a_wrong_expected_version_conflicts(self, store):
        store.append("bb-1", 0, posts("bb-1", 2))

        with pytest.raises(ConcurrencyConflict):
            store.append("bb-1", 1, _next("bb-1", store, 9))

        assert len(store.load("bb-1")) == 2

    def test_appending_the_same_events_twice_stores_them_once(self, store):
        events = posts("bb-1", 2)
        store.append("bb-1", 0, events)

        store.append("bb-1", 0, events)

        assert store.load("bb-1") == events
        assert len(store.read_all()) == 2

    def test_threads_appending_to_one_board_lose_nothing_and_never_share_a_version(self, store):
        writers, per_writer = 4, 10
        start = threading.Barrier(writers)
        errors: list[BaseException] = []

        def write(w: int) -> None:
            start.wait()
            done = 0
            while done < per_writer:
                board = BlackboardAggregate.replay("bb-1", store.load("bb-1"))
                post(board, 1000 * (w + 1) + done)
                try:
                    store.append("bb-1", board.version - 1, board.collect_events())
                    done += 1
                except ConcurrencyConflict:
                    continue
                except BaseException as exc:  # noqa: BLE001 - surfaced in the main thread
                    errors.append(exc)
                    return

        threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

        assert errors == []
        versions = [e.version for e in store.load("bb-1")]
        assert versions == list(range(1, writers * per_writer + 1))
        assert len({r.position for r in store.read_all()}) == writers * per_writer

    def test_board_events_are_the_boards_and_its_entries_as_stored_in_position_order(self, store):
        store.append("bb-1", 0, posts("bb-1", 1), {"actor": "ps-skill"})
        store.append("bb-1_x", 0, posts("bb-1_x", 1, first=50))  # `_` is no wildcard: not bb-1's
        store.append("bb-1\x1fplan", 0, [_entry("bb-1", "plan")])
        store.append("bb-2\x1fplan", 0, [_entry("bb-2", "plan")])

        exported = store.board_events("bb-1")

        assert [(e.stream_id, e.version, e.event_type) for e in exported] == [
            ("bb-1", 1, "AgentSignalPosted"),
            ("bb-1\x1fplan", 1, "EntryWritten"),
        ]
        assert exported[0].metadata == {"actor": "ps-skill"} and exported[1].data["value"] == {"v": 1}
        assert [e.position for e in exported] == [
            r.position for r in store.read_all() if r.event.blackboard_id == "bb-1"
        ]
        assert store.board_events("bb-9") == []

    def test_an_import_into_an_empty_store_keeps_positions_times_and_metadata(self, store, empty_store):
        exported = _exported(store)
        fresh = empty_store

        positions = fresh.import_events("bb-1", exported)

        assert positions == [e.position for e in exported] and fresh.board_events("bb-1") == exported
        assert [r.recorded_at for r in fresh.read_all()] == [e.recorded_at for e in exported]

    def test_an_append_after_an_import_that_kept_positions_comes_after_them(self, store, empty_store):
        exported = _exported(store)
        fresh = empty_store
        fresh.import_events("bb-1", [replace(e, position=e.position + 10) for e in exported])

        later = fresh.append("bb-2", 0, posts("bb-2", 1, first=90))

        assert later[0].position == exported[-1].position + 11 == fresh.last_position()

    def test_an_import_after_other_boards_gets_new_positions_in_the_same_order(self, store, empty_store):
        exported = _exported(store)
        fresh = empty_store
        fresh.append("bb-0", 0, posts("bb-0", 3, first=70))

        positions = fresh.import_events("bb-1", exported)

        again = fresh.board_events("bb-1")
        assert positions == [4, 5, 6] and [e.position for e in again] == positions
        assert [replace(e, position=0) for e in again] == [replace(e, position=0) for e in exported]

    def test_an_import_of_a_board_the_store_holds_is_refused_and_writes_nothing(self, store):
        exported = _exported(store)
        before = store.read_all()

        with pytest.raises(BoardExists, match="holds 2 of its streams"):
            store.import_events("bb-1", exported)

        assert store.read_all() == before

    def test_an_import_whose_entry_stream_alone_is_held_is_refused(self, store, empty_store):
        exported = _exported(store)
        fresh = empty_store
        fresh.append("bb-1\x1fplan", 0, [_entry("bb-1", "plan")])

        with pytest.raises(BoardExists):
            fresh.import_events("bb-1", exported)

        assert fresh.last_position() == 1

    @abc.abstractmethod
    @pytest.fixture
    def empty_store(self) -> EventStore:
        """Another store of the same kind, empty: where an export goes."""


def _entry(board: str, key: str, version: int = 1) -> EntryWritten:
    return EntryWritten(
        blackboard_id=board,
        version=version,
        occurred_at=datetime(2026, 1, 1, tzinfo=UTC),
        key=key,
        value={"v": version},
        author="ps-a",
    )


def _exported(store: EventStore) -> list[StoredEvent]:
    """bb-1 with two signals and an entry, appended with metadata, exported."""
    store.append("bb-1", 0, posts("bb-1", 1), {"actor": "ps-skill", "n": 1})
    store.append("bb-1\x1fplan", 0, [_entry("bb-1", "plan")], {"actor": "ps-a"})
    store.append("bb-1", 1, _next("bb-1", store, 2), {"actor": "ps-skill", "n": 2})
    return store.board_events("bb-1")


def _next(board_id: str, store: EventStore, n: int):
    board = BlackboardAggregate.replay(board_id, store.load(board_id))
    post(board, n)
    return board.collect_events()
