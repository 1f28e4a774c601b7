"""The SignalReadModel port's contract: folding events gives what the aggregate holds."""

from __future__ import annotations

import abc
from datetime import UTC, datetime

import pytest

from application.ports import Recorded, SignalFilter, SignalReadModel
from domain.blackboard import BlackboardAggregate
from domain.signals import SignalStatus
from tests.contract.stories import every_event_type, posts


def recorded(events, first_position: int = 1) -> list[Recorded]:
    at = datetime(2026, 1, 4, tzinfo=UTC)
    return [Recorded(first_position + i, e, at) for i, e in enumerate(events)]


class ReadModelContract(abc.ABC):
    @abc.abstractmethod
    @pytest.fixture
    def read_model(self) -> SignalReadModel: ...

    def test_folding_a_history_gives_the_signals_the_aggregate_holds(self, read_model):
        events = every_event_type()

        read_model.apply(recorded(events))

        expected = BlackboardAggregate.replay("bb-1", events).signals
        assert {sid: read_model.get(sid) for sid in expected} == expected
        assert read_model.position() == len(events)

    def test_an_unknown_signal_is_none(self, read_model):
        assert read_model.get("sig-0000dead") is None

    def test_records_at_or_below_the_position_are_ignored(self, read_model):
        history = recorded(every_event_type())
        read_model.apply(history[:6])

        read_model.apply(history)  # the first six again, then the rest

        expected = BlackboardAggregate.replay("bb-1", [r.event for r in history]).signals
        assert {sid: read_model.get(sid) for sid in expected} == expected

    def test_find_filters_by_status_type_capability_and_board(self, read_model):
        events = every_event_type()
        read_model.apply(recorded(events))
        read_model.apply(recorded(posts("bb-2", 1, first=9), first_position=len(events) + 1))

        def ids(**criteria):
            return [s.signal_id for s in read_model.find(SignalFilter(**criteria))]

        assert ids(status=SignalStatus.COMPLETED) == ["sig-00000001"]
        assert ids(status=SignalStatus.EXPIRED) == ["sig-00000005"]
        assert ids(signal_type="REVIEW") == ["sig-00000002", "sig-00000005"]
        assert ids(capabilities=("ANALYSIS", "REVIEW")) == ["sig-00000002", "sig-00000003", "sig-00000005"]
        assert ids(blackboard_id="bb-2") == ["sig-00000009"]
        assert ids(status=SignalStatus.POSTED, claimable_only=True) == ["sig-00000009", "sig-00000002"]
        assert ids(limit=2) == ["sig-00000001", "sig-00000009"]  # oldest first, then by id

    def test_reset_forgets_everything(self, read_model):
        read_model.apply(recorded(every_event_type()))

        read_model.reset()

        assert read_model.position() == 0
        assert read_model.get("sig-00000001") is None
        assert read_model.find(SignalFilter()) == []
