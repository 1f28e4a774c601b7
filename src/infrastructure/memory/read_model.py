"""In-memory read model: folds events through the domain's own mutators, one board at a time."""

from __future__ import annotations

import threading
from collections.abc import Iterable

from blackboard.application.ports import Recorded, SignalFilter, SignalReadModel
from blackboard.domain.blackboard import BlackboardAggregate
from blackboard.domain.events import CheckpointEvent, EntryEvent, SolveEvent
from blackboard.domain.knowledge import rules as entry_rules
from blackboard.domain.knowledge.entries import Entry
from blackboard.domain.limits import Budget
from blackboard.domain.signals import AgentSignal


class InMemorySignalReadModel(SignalReadModel):
    def __init__(self) -> None:
        self._boards: dict[str, BlackboardAggregate] = {}
        self._position = 0
        self._lock = threading.Lock()
        self._entries: dict[
            tuple[str, str], Entry
        ] = {}  # (board, key): folded here too, as the SQL fold does

    def get(self, signal_id: str) -> AgentSignal | None:
        with self._lock:
            for board in self._boards.values():
                if signal_id in board.signals:
                    return board.signal(signal_id)
        return None

    def find(self, criteria: SignalFilter) -> list[AgentSignal]:
        with self._lock:
            signals = [s for b in self._boards.values() for s in b.signals.values() if criteria.matches(s)]
        if criteria.urgent_first:
            signals.sort(key=lambda s: (s.priority, s.created_at, s.signal_id))
        else:
            signals.sort(key=lambda s: (s.created_at, s.signal_id))
        return signals[: criteria.limit] if criteria.limit else signals

    def budgets(self, blackboard_id: str | None = None) -> dict[str, Budget]:
        with self._lock:
            return {
                board_id: board.budget
                for board_id, board in self._boards.items()
                if board.budget.is_set and blackboard_id in (None, board_id)
            }

    def board_signals(self, blackboard_id: str) -> list[AgentSignal]:
        """Every signal of one board, in posting order."""
        with self._lock:
            board = self._boards.get(blackboard_id)
            return list(board.signals.values()) if board else []

    def position(self) -> int:
        return self._position

    def apply(self, records: Iterable[Recorded], flat: bool = False) -> None:
        with self._lock:
            for record in records:
                if record.position <= self._position:
                    continue
                event = record.event
                self._position = record.position
                if isinstance(event, SolveEvent | CheckpointEvent):  # change no signal nor entry
                    continue
                if isinstance(event, EntryEvent):
                    where = (event.blackboard_id, event.key)
                    self._entries[where] = entry_rules.evolve(
                        self._entries.get(where), event, record.position
                    )
                    continue
                board = self._boards.setdefault(event.blackboard_id, BlackboardAggregate(event.blackboard_id))
                board.apply(event)
                self._position = record.position

    def entry(self, blackboard_id: str, key: str) -> Entry | None:
        with self._lock:
            return self._entries.get((blackboard_id, key))

    def board_entries(self, blackboard_id: str) -> list[Entry]:
        """Every entry of one board, in key order."""
        with self._lock:
            return sorted(
                (e for (b, _), e in self._entries.items() if b == blackboard_id), key=lambda e: e.key
            )

    def reset(self) -> None:
        with self._lock:
            self._boards.clear()
            self._entries.clear()
            self._position = 0
