"""What a notification on the log's channel says (PostgreSQL): the append's last position, and, for an
append that only posted and claimed, the signals it made claimable, so a woken worker can pick among them
without asking the read model.

A notice is one of two kinds (`Notice`): `Moved`, the position alone (`"1234"`, what every append sent
before, and still sends when it did anything but post and claim), or `Told`, a JSON object `{"p": 1234,
"a": [[board, id, [targets], created, priority], ...], "t": [id, ...]}`: the signals the append posted that
are claimable at once, with what a worker's claim policy reads of a candidate, and the signals it claimed
(`t`, left out when none). Which posted signals are claimable the domain decides (AgentSignal.claimable_at,
of each signal as the domain's own fold, domain/evolution.py, makes it from its post); a post whose
claimability depends on more than the append (it waits on upstreams, or for a later time) makes the notice
`Moved`. Never a signal's text: any role that can connect may LISTEN, whatever its privileges on the
tables, so a payload says no more than ids, targets, times and priorities. A signal targeting `auto` is
scored by its text: its targets say so, and a worker reads its row by id. A payload that would reach
PostgreSQL's 8000 bytes falls back to the position alone. A listener that knows only positions reads the
object as "something happened" and looks at the log, as it always did. `payload` writes both forms and
`read` parses both, the one place each is done.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import msgspec

from blackboard.domain.events import (
    AgentSignalClaimed,
    AgentSignalPosted,
    AgentSignalUnclaimed,
    BlackboardEvent,
)
from blackboard.domain.evolution import evolve
from blackboard.domain.signals import AgentSignal, Candidate

LIMIT = 8000  # bytes: PostgreSQL refuses a payload this long or longer


@dataclass(frozen=True, slots=True)
class Moved:
    """The log reached `position`; what the append did is for the log to tell."""

    position: int


@dataclass(frozen=True, slots=True)
class Told:
    """The log reached `position` by an append that only posted and claimed: `posted` every signal it made
    claimable (with no text), `taken` those it claimed."""

    position: int
    posted: tuple[Candidate, ...] = ()
    taken: tuple[str, ...] = ()


Notice = Moved | Told

_Row = tuple[str, str, tuple[str, ...], datetime, int]  # board, id, targets, created, priority


class _Wire(msgspec.Struct, frozen=True, omit_defaults=True):
    """`Told` as the channel carries it: short names, a candidate as an array."""

    p: int
    a: tuple[_Row, ...]
    t: tuple[str, ...] = ()


_ENCODER = msgspec.json.Encoder()
_DECODER = msgspec.json.Decoder(int | _Wire)


def payload(position: int, events: Sequence[BlackboardEvent] = ()) -> str:
    """The payload of an append of `events` ending at `position`, always under LIMIT bytes."""
    told = _told(position, events) if events else None
    if told is None:
        return str(position)
    rows = tuple(
        (c.blackboard_id, c.signal_id, c.target_capabilities, c.created_at, c.priority) for c in told.posted
    )
    text = _ENCODER.encode(_Wire(told.position, rows, told.taken))
    return text.decode() if len(text) < LIMIT else str(position)


def read(text: str) -> Notice | None:
    """The notice a payload carries; None for one that is not ours (nothing can be told from it)."""
    try:
        heard = _DECODER.decode(text)
    except msgspec.MsgspecError:
        return None
    if isinstance(heard, int):
        return Moved(heard)
    return Told(
        heard.p,
        tuple(
            Candidate(signal_id, board, targets, created, "", priority)
            for board, signal_id, targets, created, priority in heard.a
        ),
        heard.t,
    )


class _Untold(Exception):
    """A post names an upstream the append did not post: its claimability depends on the log."""


def _told(position: int, events: Sequence[BlackboardEvent]) -> Told | None:
    """What an append of only posts and claims did to the claimable signals: the signals it posted, folded
    as the domain folds them, that are claimable as of their post (`claimable_at`), and those it claimed;
    None when it did anything else, or posted a signal whose claimability depends on more than its events
    (it waits on upstreams, or for a later time)."""
    signals: dict[str, AgentSignal] = {}  # the signals this append posted, as its events leave them

    def posted_here(signal_id: str) -> AgentSignal:
        if signal_id not in signals:
            raise _Untold
        return signals[signal_id]

    taken: list[str] = []
    for event in events:
        if not isinstance(event, AgentSignalPosted | AgentSignalClaimed | AgentSignalUnclaimed):
            return None  # a completion, a retry, an expiry...: what it makes claimable the log tells
        if isinstance(event, AgentSignalClaimed):
            taken.append(event.signal_id)
        if not isinstance(event, AgentSignalPosted) and event.signal_id not in signals:
            continue  # a claim (or mark) of a signal posted before: no candidate of this append
        try:
            for signal in evolve(event, posted_here, lambda _: ()):
                signals[signal.signal_id] = signal
        except _Untold:
            return None
    if any(s.waiting_for or not s.due(s.created_at) for s in signals.values()):
        return None  # claimable once its upstreams complete, or its time comes: the log tells
    posted = tuple(
        Candidate(s.signal_id, s.blackboard_id, s.target_capabilities, s.created_at, "", s.priority)
        for s in signals.values()
        if s.claimable_at(s.created_at)
    )
    return Told(position, posted, tuple(taken))
