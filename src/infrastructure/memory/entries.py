"""The knowledge side in memory: entry transactions and the EntryReadModel, the reference for the core's tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from typing import Any

from blackboard.application.knowledge.ports import EntryFilter, EntryReadModel, EntryTransaction
from blackboard.application.ports import Recorded, SignalFilter
from blackboard.domain.blackboard import BlackboardAggregate
from blackboard.domain.events import EntryEvent, entry_stream_id
from blackboard.domain.knowledge import rules as entry_rules
from blackboard.domain.knowledge.entries import Entry
from blackboard.domain.signals import AgentSignal, SignalStatus
from blackboard.infrastructure.memory.event_store import InMemoryEventStore
from blackboard.infrastructure.memory.read_model import InMemorySignalReadModel


class InMemoryEntryTransaction(EntryTransaction):
    def __init__(
        self,
        blackboard_id: str,
        key: str,
        store: InMemoryEventStore,
        read_model: InMemorySignalReadModel,
        holds: ExitStack | None = None,
    ) -> None:
        super().__init__(blackboard_id, key)
        self._store = store
        self._read_model = read_model
        self._holds = holds or ExitStack()  # what this transaction holds besides its key, until it ends

    def signal(self, signal_id: str) -> AgentSignal | None:
        self._holds.enter_context(
            self._store.hold(self.blackboard_id)
        )  # the board's writers wait for this write
        if self._read_model.position() == self._store.last_position():
            found = self._read_model.get(signal_id)
            return found if found is not None and found.blackboard_id == self.blackboard_id else None
        board = BlackboardAggregate.replay(self.blackboard_id, self._store.load(self.blackboard_id))
        return board.signals.get(signal_id)

    def claims_of(self, agent_id: str) -> list[AgentSignal]:
        self._holds.enter_context(self._store.hold(self.blackboard_id))
        if self._read_model.position() == self._store.last_position():
            found = self._read_model.find(
                SignalFilter(status=SignalStatus.CLAIMED, blackboard_id=self.blackboard_id)
            )
        else:
            board = BlackboardAggregate.replay(self.blackboard_id, self._store.load(self.blackboard_id))
            found = [s for s in board.signals.values() if s.status is SignalStatus.CLAIMED]
        return [s for s in found if s.claimed_by == agent_id]

    def load(self) -> Entry | None:
        if self._read_model.position() == self._store.last_position():
            return self._read_model.entry(self.blackboard_id, self.key)
        return entry_rules.replay(
            (r.event, r.position) for r in _records(self._store, self.blackboard_id, self.key)
        )

    def commit(self, events: Sequence[EntryEvent], metadata: Mapping[str, Any]) -> list[Recorded]:
        if not events:
            return []
        live = self._read_model.position() == self._store.last_position()
        stream = entry_stream_id(self.blackboard_id, self.key)
        recorded = self._store.append(stream, events[0].version - 1, events, metadata)
        if live:  # as the SQL store does: the row follows the events while nothing is being rebuilt
            self._read_model.apply(recorded)
        return recorded


class InMemoryEntryReadModel(EntryReadModel):
    def __init__(self, store: InMemoryEventStore, read_model: InMemorySignalReadModel) -> None:
        self._store = store
        self._read_model = read_model

    def get(self, blackboard_id: str, key: str) -> Entry | None:
        return self._read_model.entry(blackboard_id, key)

    def find(self, criteria: EntryFilter) -> list[Entry]:
        found = [e for e in self._read_model.board_entries(criteria.blackboard_id) if criteria.matches(e)]
        return found[: criteria.limit]

    def records(self, blackboard_id: str, key: str | None = None, upto: int | None = None) -> list[Recorded]:
        return _records(self._store, blackboard_id, key, upto)


def _records(
    store: InMemoryEventStore, blackboard_id: str, key: str | None = None, upto: int | None = None
) -> list[Recorded]:
    return [
        r
        for r in store.read_all(limit=upto)
        if isinstance(r.event, EntryEvent)
        and r.event.blackboard_id == blackboard_id
        and key in (None, r.event.key)
    ]
