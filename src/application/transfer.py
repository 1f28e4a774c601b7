"""Export and import of a whole board (docs/knowledge.md, "Export and import").

An export is every event of the board's stream and of its entry streams, as stored, read and written
as they stream. An import reads its document twice: a first pass checks every event against the
rules, a second writes them through the event store (which only appends, all or none, in one
transaction), then the read model catches up so the board is queryable at once. Neither pass holds
the document: memory grows with the board's signals and keys, not with its events.

The check replays the board through the domain's own rules (domain/admission.py for signals,
knowledge/rules.check_recorded and knowledge/permissions for entries): each event must be one a
command could have recorded from the state the events before it left, judged on the log alone (the
importing machine may not have the agent files).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, MutableMapping
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any

from blackboard.application.authority import Authority
from blackboard.application.callers import Act
from blackboard.application.errors import BoardNotFound
from blackboard.application.ports import EventStore, StoredEvent
from blackboard.application.projection import Projector
from blackboard.domain.admission import admit
from blackboard.domain.blackboard import BlackboardAggregate
from blackboard.domain.errors import BlackboardError, InvalidInput
from blackboard.domain.events import (
    CHECKPOINT_SEPARATOR,
    SOLVE_SEPARATOR,
    STREAM_SEPARATOR,
    BlackboardEvent,
    CheckpointEvent,
    EntryConflictResolved,
    EntryEvent,
    SolveEvent,
    board_of_stream,
    load_event,
)
from blackboard.domain.knowledge import permissions
from blackboard.domain.knowledge import rules as entry_rules
from blackboard.domain.knowledge.entries import KEY_PATTERN, Entry
from blackboard.domain.signals import AgentSignal, SignalStatus

Events = Callable[[], Iterable[StoredEvent]]  # one pass over the document's events, from the start
State = Callable[[], MutableMapping[str, Any]]  # makes a mapping for state that grows with the board


@dataclass(frozen=True, slots=True)
class Imported:
    blackboard_id: str
    events: int
    streams: int
    first_position: int
    last_position: int
    kept_positions: bool  # the export's own positions (the store's log ended before them)


@dataclass(frozen=True, slots=True)
class Checked:
    events: int
    streams: int


class BoardTransfer:
    def __init__(
        self,
        store: EventStore,
        projector: Projector,
        claim_timeout: timedelta | None = None,
        scratch: Callable[[], AbstractContextManager[State]] | None = None,
        authority: Authority | None = None,
    ) -> None:
        """`scratch`: where the check keeps the board it replays (each mapping of it), for the time of
        one import; in memory without one."""
        self._authority = authority or Authority()  # only a person imports (application/callers.py)
        self._store = store
        self._projector = projector
        self._claim_timeout = claim_timeout or timedelta.max  # how a claim's lease is judged
        self._scratch = scratch or (lambda: nullcontext(dict))

    def export(self, blackboard_id: str) -> Iterator[StoredEvent]:
        """The board's events as they are read; raises BoardNotFound before the first if there is none."""
        events = iter(self._store.stream_board_events(blackboard_id))
        first = next(events, None)
        if first is None:
            raise BoardNotFound(blackboard_id)
        return _chain(first, events)

    def import_board(self, blackboard_id: str, events: Events) -> Imported:
        """Check every event (`check`), then store them (a second pass over `events`)."""
        self._authority.check(Act.IMPORT, f"import board {blackboard_id}")
        with self._scratch() as state:
            checked = check(blackboard_id, events(), self._claim_timeout, state)
        stored = self._store.import_stream(blackboard_id, events())
        self._projector.catch_up(
            flat=True
        )  # the import only appended: its rows follow here, before anyone asks
        return Imported(
            blackboard_id,
            stored.events,
            checked.streams,
            stored.first_position,
            stored.last_position,
            stored.kept_positions,
        )


def _first_separator(stream_id: str) -> str | None:
    """Which kind of stream: the separator right after the board (a thread id may hold others)."""
    found = [(stream_id.find(s), s) for s in (STREAM_SEPARATOR, SOLVE_SEPARATOR, CHECKPOINT_SEPARATOR)]
    return min(((i, s) for i, s in found if i >= 0), default=(0, None))[1]


def _chain(first: StoredEvent, rest: Iterator[StoredEvent]) -> Iterator[StoredEvent]:
    yield first
    yield from rest


def check(
    blackboard_id: str,
    events: Iterable[StoredEvent],
    claim_timeout: timedelta = timedelta.max,
    state: State = dict,
) -> Checked:
    """The rules an imported board keeps, each broken one as InvalidInput naming the event (`events[i]`)
    and the rule: events in position order, each stream the board's with versions 1, 2, ... without
    a gap, each event loading as its type (upcast from its schema version), and each one an event
    the board could have recorded from the state before it. Event ids are the store's to check
    (`import_stream`): it sees them all without holding them here."""
    replay = _Replay(blackboard_id, claim_timeout, state)
    versions: MutableMapping[str, int] = state()
    streams, count, last = 0, 0, 0
    for i, stored in enumerate(events):
        at = f"events[{i}]"
        count = i + 1
        if i and stored.position <= last:
            raise InvalidInput(
                f"{at}.position",
                f"must be above the one before ({last}): events come in position order, got {stored.position}",
            )
        last = stored.position
        board, key = board_of_stream(stored.stream_id), stored.stream_id.partition(STREAM_SEPARATOR)[2]
        if board != blackboard_id:
            raise InvalidInput(
                f"{at}.stream_id",
                f"must be the board {blackboard_id}'s, one of its entry keys' "
                f"(<board>\\u001f<key>), one of its solve runs' (<board>\\u001e<run>) or one of its LangGraph threads' "
                f"(<board>\\u001d<thread>), got {stored.stream_id!r}",
            )
        if _first_separator(stored.stream_id) in (SOLVE_SEPARATOR, CHECKPOINT_SEPARATOR):
            pass  # a solve run's or a LangGraph thread's: its event's own stream is checked below
        elif STREAM_SEPARATOR in stored.stream_id and not KEY_PATTERN.fullmatch(key):
            raise InvalidInput(
                f"{at}.stream_id", f"an entry key must be 1..200 of A-Z a-z 0-9 _ . : / -, got {key!r}"
            )
        expected = versions.get(stored.stream_id, 0) + 1
        streams += expected == 1
        if stored.version != expected:
            raise InvalidInput(
                f"{at}.version",
                f"must be {expected} in stream {stored.stream_id!r}: "
                f"versions go 1, 2, ... without a gap, got {stored.version}",
            )
        versions[stored.stream_id] = expected
        event = _load(at, blackboard_id, stored)
        if event.stream_id != stored.stream_id:
            raise InvalidInput(
                f"{at}.stream_id",
                f"must be its event's stream {event.stream_id!r} "
                f"(a {stored.event_type}), got {stored.stream_id!r}",
            )
        try:
            replay.admit(event, stored)
        except BlackboardError as broken:
            raise InvalidInput(
                at,
                f"the {stored.event_type} at position {stored.position} must be an event the board could "
                f"have recorded from the state before it; rule {type(broken).__name__}: {broken}",
            ) from None
    if not count:
        raise InvalidInput("events", "must hold at least one event")
    return Checked(count, streams)


class _Replay:
    """The board and its keys as the events so far leave them, slim: an entry keeps no values, only
    what the rules read (its holder, its candidates' versions)."""

    def __init__(self, blackboard_id: str, claim_timeout: timedelta, state: State) -> None:
        self.board = BlackboardAggregate(blackboard_id, state)
        self.entries: MutableMapping[str, Entry] = state()
        self.binding: dict[str, set[str]] = {}  # author -> signals with write keys it holds a claim on
        self.claim_timeout = claim_timeout

    def admit(self, event: BlackboardEvent, stored: StoredEvent) -> None:
        if isinstance(event, SolveEvent | CheckpointEvent):
            return  # a solve run's record, a LangGraph checkpoint: no rule of the board's reads it
        if isinstance(event, EntryEvent):
            self._admit_entry(event, stored)
            return
        admit(self.board, event)
        if getattr(event, "signal_id", None) is None:
            return  # the board's own event (a budget): no claim moves
        signal = self.board.signal(event.signal_id)
        held = self.binding.setdefault(signal.claimed_by, set()) if signal.claimed_by else None
        if held is not None and signal.write_keys:
            if signal.status is SignalStatus.CLAIMED:
                held.add(signal.signal_id)
            else:
                held.discard(signal.signal_id)

    def _admit_entry(self, event: EntryEvent, stored: StoredEvent) -> None:
        entry = self.entries.get(event.key)
        entry_rules.check_recorded(entry, event)
        self._check_permissions(event, stored)
        self.entries[event.key] = _slim(entry_rules.evolve(entry, event, stored.position))

    def _check_permissions(self, event: EntryEvent, stored: StoredEvent) -> None:
        """As the write was checked when it was made (application/knowledge/service.py): a signal it
        names with key lists decides alone; else the author's key-restricted claims bind it. A
        completion's landed knowledge item (`<signal>/knowledge/<n>` by its claimer) is exempt."""
        named = None
        if event.signal_id is not None and not isinstance(event, EntryConflictResolved):
            named = self.board.signal(event.signal_id)  # SignalNotFound: a write names a signal of the board
            if _landed(named, event):
                return
        at = event.occurred_at
        if named is not None and permissions.restricts(named):
            token = named.claim_token if stored.metadata.get("token_given") else None
            permissions.check(named, "write", event.key, event.author, token, at, self.claim_timeout)
            return
        held = [self.board.signal(s) for s in self.binding.get(event.author, ())]
        permissions.bound_write(held, event.key, event.author, at, self.claim_timeout)


def _landed(signal: AgentSignal, event: EntryEvent) -> bool:
    prefix = f"{signal.signal_id}/knowledge/"
    return (
        signal.status is SignalStatus.COMPLETED
        and event.author == signal.claimed_by
        and event.key.startswith(prefix)
        and event.key[len(prefix) :].isdigit()
    )


def _slim(entry: Entry) -> Entry:
    return replace(
        entry,
        current=replace(entry.current, value=None, meta=None),
        candidates=tuple(replace(c, value=None, meta=None) for c in entry.candidates),
    )


def _load(at: str, blackboard_id: str, stored: StoredEvent) -> BlackboardEvent:
    envelope = {
        "event_id": stored.event_id,
        "blackboard_id": blackboard_id,
        "version": stored.version,
        "occurred_at": stored.occurred_at,
    }
    try:
        return load_event(stored.event_type, stored.schema_version, envelope, dict(stored.data))
    except LookupError as exc:  # an unknown event type, or a schema version no upcaster brings up to date
        raise InvalidInput(
            f"{at}.event_type", f"must be a known event type at a known schema version: {exc}"
        ) from None
    except ValueError as exc:  # pydantic's ValidationError: the data does not make that event
        first = str(exc).splitlines()
        raise InvalidInput(
            f"{at}.data",
            f"must be a valid {stored.event_type} (schema version "
            f"{stored.schema_version}): {' '.join(first[1:3]).strip() or first[0]}",
        ) from None
