"""The UnitOfWork port in memory: the reference behaviour for the core's tests."""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from datetime import datetime
from typing import Any

from blackboard.application.knowledge.ports import EntryTransaction
from blackboard.application.ports import (
    BoardRows,
    BoardTransaction,
    Hold,
    Overdue,
    Recorded,
    SignalFilter,
    UnitOfWork,
)
from blackboard.domain.blackboard import BlackboardAggregate, highest_entry, overdue
from blackboard.domain.events import AgentSignalPosted, BlackboardEvent, BoardBudgetSet, entry_stream_id
from blackboard.domain.limits import Budget, Limits, Spent
from blackboard.domain.rates import RateLimit, RateWindow
from blackboard.domain.signals import AgentSignal, SignalStatus
from blackboard.infrastructure.memory.entries import InMemoryEntryTransaction
from blackboard.infrastructure.memory.event_store import InMemoryEventStore
from blackboard.infrastructure.memory.rates import RATE_STREAM, windows_of
from blackboard.infrastructure.memory.read_model import InMemorySignalReadModel

CONCURRENCY_STREAM = "\x1d"  # a concurrency key's hold: never a board's nor an entry key's name


class InMemoryUnitOfWork(UnitOfWork):
    def __init__(self, store: InMemoryEventStore, read_model: InMemorySignalReadModel) -> None:
        self._store = store
        self._read_model = read_model

    @contextmanager
    def board(self, blackboard_id: str, hold: Hold = Hold.BOARD) -> Iterator[BoardTransaction]:
        # in memory a transaction always holds the whole board: `hold` asks for no more than that
        with self._store.hold(blackboard_id), ExitStack() as holds:
            tx = _Transaction(blackboard_id, self._store, self._read_model, holds)
            yield tx
            windows_of(self._store).update(tx.kept_windows)  # as the transaction commits, never on an error

    @contextmanager
    def entry(self, blackboard_id: str, key: str) -> Iterator[EntryTransaction]:
        with (
            self._store.hold(entry_stream_id(blackboard_id, key)),
            ExitStack() as holds,
        ):  # the key's own stream
            yield InMemoryEntryTransaction(blackboard_id, key, self._store, self._read_model, holds)


class _Transaction(BoardTransaction):
    def __init__(
        self,
        blackboard_id: str,
        store: InMemoryEventStore,
        read_model: InMemorySignalReadModel,
        holds: ExitStack,
    ) -> None:
        super().__init__(blackboard_id)
        self._store = store
        self._read_model = read_model
        self._holds = holds  # the concurrency keys this transaction holds, released when it ends
        self.kept_windows: dict[str, RateWindow] = {}  # rate windows written, kept when it commits

    def limits(self, key: str | None) -> Limits:
        held, lapsed = 0, self.lapsed_before
        live = [  # claims that have not lapsed at the decision's time
            s
            for s in self._read_model.find(SignalFilter(status=SignalStatus.CLAIMED))
            if lapsed is None or (s.lease_started is not None and s.lease_started > lapsed)
        ]
        if key is not None:
            self._holds.enter_context(self._store.hold(f"{CONCURRENCY_STREAM}{key}"))
            held = sum(1 for s in live if s.concurrency_key == key)
        budget = self.budget()
        if not budget.is_set:
            return Limits(budget, False, held)
        spent, reserved = self.spent(), Spent()
        for signal in live:
            if signal.blackboard_id == self.blackboard_id:
                reserved += Spent.reserved_by(signal.reserved)
        return Limits(budget, budget.reached(spent) is not None, held, spent, reserved)

    def rate_window(self, limit: RateLimit, now: datetime) -> RateWindow:
        self._holds.enter_context(self._store.hold(f"{RATE_STREAM}{limit.key}"))
        kept = self.kept_windows.get(limit.key) or windows_of(self._store).get(limit.key)
        return kept or RateWindow.full(limit, now)

    def keep_rate_window(self, window: RateWindow) -> None:
        self.kept_windows[window.key] = window

    def budget(self) -> Budget:
        budget = Budget()
        for event in self.history():
            if isinstance(event, BoardBudgetSet):
                budget = Budget(event.usd, event.tokens)
        return budget

    def spent(self) -> Spent:
        runs = [s.usage for s in self._read_model.board_signals(self.blackboard_id) if s.usage is not None]
        return Spent(
            sum(u.cost_usd or 0.0 for u in runs), sum(u.input_tokens + u.output_tokens for u in runs)
        )

    def rows(self) -> BoardRows | None:
        if self._read_model.position() != self._store.last_position():
            return None
        return _Rows(len(self.history()), self._read_model.board_signals(self.blackboard_id))

    def history(self) -> list[BlackboardEvent]:
        return self._store.load(self.blackboard_id)

    def taken(self, signal_id: str) -> bool:
        return self._read_model.get(signal_id) is not None or any(
            isinstance(r.event, AgentSignalPosted) and r.event.signal_id == signal_id
            for r in self._store.read_all()
        )

    def highest_entry(self) -> int:
        return highest_entry(self.history())

    def commit(self, board: BlackboardAggregate, metadata: Mapping[str, Any]) -> list[Recorded]:
        events = board.collect_events()
        if not events:
            return []
        live = self._read_model.position() == self._store.last_position()
        recorded = self._store.append(board.id, events[0].version - 1, events, metadata)
        if live:  # as the SQL store does: the rows follow the events while nothing is being rebuilt
            self._read_model.apply(recorded)
        return recorded


class _Rows(BoardRows):
    def __init__(self, version: int, signals: list[AgentSignal]) -> None:
        self.version = version
        self._signals = signals

    def signals(self, signal_ids: Collection[str], at_most: int | None = None) -> list[AgentSignal]:
        if at_most is not None:  # the first `at_most` open ones in the order named, and those not open
            by_id = {s.signal_id: s for s in self._signals}
            named = [by_id[sid] for sid in signal_ids if sid in by_id]
            posted = [s for s in named if s.status is SignalStatus.POSTED]
            return posted[:at_most] + [s for s in named if s.status is not SignalStatus.POSTED]
        return [s for s in self._signals if s.signal_id in signal_ids]

    def dependants(self, signal_ids: Collection[str]) -> list[AgentSignal]:
        return [s for s in self._signals if set(s.after) & set(signal_ids)]

    def with_key(self, dedupe_key: str) -> AgentSignal | None:
        return next((s for s in self._signals if s.dedupe_key == dedupe_key), None)

    def retries(self, signal_ids: Collection[str]) -> list[AgentSignal]:
        return [s for s in self._signals if s.retry_of in signal_ids]

    def flow(self, flow_id: str) -> list[AgentSignal]:
        return [s for s in self._signals if s.flow_id == flow_id]

    def overdue(self, overdue_: Overdue) -> list[AgentSignal]:
        return [
            s for s in self._signals if overdue(s, overdue_.at, overdue_.post_timeout, overdue_.claim_timeout)
        ]
