"""Every read of the log turns a stored row into an event by one generic path (`codec.stored_event`, the
domain's `load_event`): a rebuild's page decoder (`replay.events`) and the normal path (`event_from_row`)
give back every event type as it was appended, and a field added to an event class is read with no
change to either."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest

from blackboard.domain import events as domain_events
from blackboard.domain.events import AgentSignalClaimed, BlackboardEvent, EntryWritten
from blackboard.domain.signals import SignalUsage
from blackboard.infrastructure.persistence import replay
from blackboard.infrastructure.persistence.codec import event_from_row, event_row
from tests.unit.test_events import SAMPLES

RECORDED = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


def raw(event: BlackboardEvent, position: int = 1) -> replay.RawRow:
    """The event's row as the log stores it, as `replay.read_page` gives it."""
    row = event_row(event, {}, RECORDED)
    return (
        position,
        row["event_id"],
        row["stream_id"],
        row["version"],
        row["event_type"],
        row["schema_version"],
        row["data"],
        row["occurred_at"],
    )


def normal(row: replay.RawRow) -> BlackboardEvent:
    names = (
        "position",
        "event_id",
        "stream_id",
        "version",
        "event_type",
        "schema_version",
        "data",
        "occurred_at",
    )
    return event_from_row(SimpleNamespace(**dict(zip(names, row, strict=True))))


@pytest.mark.parametrize("event", SAMPLES, ids=lambda e: e.event_type)
def test_every_event_type_comes_back_from_its_row_equal_on_both_paths(event):
    row = raw(event, 7)

    ((position, replayed),) = replay.events([row])

    assert position == 7
    assert type(replayed) is type(event) and replayed == event
    assert normal(row) == event


def test_a_claims_score_is_kept_by_the_replay():
    """The replay's former msgspec structs had no `score`: a claim was folded without it."""
    claim = next(e for e in SAMPLES if isinstance(e, AgentSignalClaimed)).model_copy(update={"score": 0.75})

    ((_, replayed),) = replay.events([raw(claim)])

    assert replayed.score == 0.75


def later_claim() -> type[AgentSignalClaimed]:
    """The claim class as a later release might have it, under its name, its schema version unmoved: one
    more field, one more nested value."""

    class AgentSignalClaimed(domain_events.AgentSignalClaimed):
        note: str = ""
        spent: SignalUsage | None = None

    return AgentSignalClaimed


def test_a_field_added_to_an_event_class_is_read_with_no_change_to_the_decoder(monkeypatch):
    later = later_claim()
    monkeypatch.setitem(domain_events.EVENT_TYPES, "AgentSignalClaimed", later)
    claim = next(e for e in SAMPLES if isinstance(e, AgentSignalClaimed))
    fields: dict[str, Any] = {
        **claim.model_dump(),
        "note": "read back",
        "spent": SignalUsage(runner="command", input_tokens=3),
    }
    extended = later(**fields)
    row = raw(extended)
    assert row[4] == "AgentSignalClaimed"  # stored under the name the log knows

    ((_, replayed),) = replay.events([row])

    assert type(replayed) is later
    assert replayed.note == "read back" and replayed.spent == SignalUsage(runner="command", input_tokens=3)
    assert replayed == extended
    assert normal(row) == extended


def test_an_event_written_by_a_newer_blackboard_stops_the_replay_naming_its_position():
    claim = next(e for e in SAMPLES if isinstance(e, AgentSignalClaimed))
    position, event_id, stream, version, kind, schema, data, at = raw(claim, 12)

    with pytest.raises(Exception, match="position 12") as raised:
        replay.events([(position, event_id, stream, version, kind, schema + 1, data, at)])

    assert type(raised.value).__name__ == "UpgradeNeeded"


def test_a_value_only_the_standard_librarys_reader_reads_comes_back_too():
    """`json.dumps` writes a lone surrogate as its escape, which msgspec refuses to decode."""
    entry = next(e for e in SAMPLES if isinstance(e, EntryWritten))
    odd = entry.model_copy(update={"value": {"text": "half a pair: \ud800"}})
    row = raw(odd)
    assert "\\ud800" in row[6]

    ((_, replayed),) = replay.events([row])

    assert replayed == odd
