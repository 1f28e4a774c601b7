"""The EventStore port's contract: one suite, run against every adapter."""

from __future__ import annotations

import abc
import threading

import pytest

from blackboard.application.errors import ConcurrencyConflict
from blackboard.application.ports import EventStore
from blackboard.domain.blackboard import BlackboardAggregate
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
            ("bb-1", 1), ("bb-1", 2), ("bb-2", 1), ("bb-1", 3)
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
                except BaseException as exc:  # surface anything else in the main thread
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


def _next(board_id: str, store: EventStore, n: int):
    board = BlackboardAggregate.replay(board_id, store.load(board_id))
    post(board, n)
    return board.collect_events()
