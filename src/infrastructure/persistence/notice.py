"""What a notification on the log's channel says (PostgreSQL): the append's last position, and, for an
append that only posted, the signals it made claimable, so a woken worker can pick among them without
asking the read model.

The payload is the position alone (`"1234"`, what every append sent before, and still sends when it
did anything but post and claim) or a JSON object `{"p": 1234, "a": [[board, id, [targets], created,
priority], ...], "t": [id, ...]}`: the signals the append posted that are claimable at once (no
upstream, no gate, due now), with what a worker's claim policy reads of a candidate, and the signals it
claimed (`t`, left out when none). Never a signal's text: any role that can connect may LISTEN, whatever
its privileges on the tables, so a payload says no more than ids, targets, times and priorities. A
signal targeting `auto` is scored by its text: its targets say so, and a worker reads its row by id.
An append posting a signal that waits on upstreams or for a later time
sends the position alone: what it makes claimable depends on more than its events. A payload that would
reach PostgreSQL's 8000 bytes falls back to the position alone. A listener that knows only positions
reads the object as "something happened" and looks at the log, as it always did.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from blackboard.domain.events import (
    AgentSignalClaimed,
    AgentSignalPosted,
    AgentSignalUnclaimed,
    BlackboardEvent,
)
from blackboard.domain.signals import Candidate

LIMIT = 8000  # bytes: PostgreSQL refuses a payload this long or longer


@dataclass(frozen=True, slots=True)
class Notice:
    """One notification: the log reached `position`; `posted` the signals that append made claimable,
    all of them (with no text), or None when it does not say (the log must be read to know); `taken`
    those it claimed."""

    position: int
    posted: tuple[Candidate, ...] | None = None
    taken: tuple[str, ...] = ()


def payload(position: int, events: Sequence[BlackboardEvent] = ()) -> str:
    """The payload of an append of `events` ending at `position`, always under LIMIT bytes."""
    told = _told(events) if events else None
    if told is None:
        return str(position)
    posted, taken = told
    fields: dict[str, Any] = {"p": position, "a": posted}
    if taken:
        fields["t"] = taken
    text = json.dumps(fields, separators=(",", ":"), ensure_ascii=False)
    return text if len(text.encode()) < LIMIT else str(position)


def read(text: str) -> Notice | None:
    """The notice a payload carries; None for one that is not ours (nothing can be told from it)."""
    if not text.startswith("{"):
        try:
            return Notice(int(text))
        except ValueError:
            return None
    try:
        fields = json.loads(text)
        return Notice(
            int(fields["p"]),
            tuple(_candidate(*row) for row in fields["a"]),
            tuple(str(t) for t in fields.get("t", ())),
        )
    except (ValueError, KeyError, TypeError):
        return None


def _told(events: Sequence[BlackboardEvent]) -> tuple[list[list[Any]], list[str]] | None:
    """Each signal the events post that is claimable at once, as a row, and each they claim; None when
    the events do anything but post and claim (or post a signal whose claimability depends on more than
    its event). A claim makes nothing claimable."""
    rows: dict[str, list[Any]] = {}
    taken: list[str] = []
    for event in events:
        if isinstance(event, AgentSignalClaimed):
            rows.pop(event.signal_id, None)
            taken.append(event.signal_id)
            continue
        if isinstance(event, AgentSignalUnclaimed):  # nobody registered can take it: not open any more
            rows.pop(event.signal_id, None)
            continue
        if not isinstance(event, AgentSignalPosted):
            return None
        if event.after or (event.not_before is not None and event.not_before > event.occurred_at):
            return None  # it waits on upstreams (some may be done) or for its time: the log tells
        if event.gate:  # a person decides it: never claimable
            continue
        row: list[Any] = [
            event.blackboard_id,
            event.signal_id,
            list(event.target_capabilities),
            event.occurred_at.isoformat(),
            event.priority,
        ]
        rows[event.signal_id] = row
    return list(rows.values()), taken


def _candidate(board: str, signal_id: str, targets: list[str], created: str, priority: int) -> Candidate:
    """A candidate as told: its text, if it targets auto, is for the reader to read (not carried)."""
    return Candidate(
        str(signal_id),
        str(board),
        tuple(str(t) for t in targets),
        datetime.fromisoformat(created),
        "",
        int(priority),
    )
