"""Every signal event type has an import rule (domain/admission.py): an event type added without one is
refused by every import, and this test names it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from blackboard.domain.admission import NoRule, admit, has_rule
from blackboard.domain.blackboard import BlackboardAggregate
from blackboard.domain.events import EVENT_TYPES, BlackboardEvent, CheckpointEvent, EntryEvent, SolveEvent


@pytest.mark.parametrize(
    "event_type",
    sorted(
        name
        for name, cls in EVENT_TYPES.items()
        if not issubclass(cls, EntryEvent | SolveEvent | CheckpointEvent)
    ),
)
def test_each_signal_event_type_has_a_rule(event_type):
    assert has_rule(EVENT_TYPES[event_type]), f"{event_type} has no rule in domain/admission.py"


def test_an_event_type_without_a_rule_is_refused_not_folded():
    class Unknown(BlackboardEvent):
        pass

    board = BlackboardAggregate("bb")
    with pytest.raises(NoRule, match="no rule of this blackboard's judges a Unknown"):
        admit(board, Unknown(blackboard_id="bb", version=1, occurred_at=datetime.now(UTC), signal_id="s"))
    assert board.version == 0
