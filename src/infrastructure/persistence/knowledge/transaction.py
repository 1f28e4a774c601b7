"""One entry key held in a SQL write transaction: its state from its row (or its events while a
rebuild runs), and its events and row committed together (unit_of_work.commit_in: the event store
appends, the fold writes the row, seeded with the state loaded here)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Connection, bindparam, select

from blackboard.application.knowledge.ports import EntryTransaction
from blackboard.application.ports import Recorded
from blackboard.domain.blackboard import BlackboardAggregate
from blackboard.domain.events import EntryEvent, entry_stream_id
from blackboard.domain.knowledge import rules as entry_rules
from blackboard.domain.knowledge.entries import Entry
from blackboard.domain.signals import AgentSignal, SignalStatus
from blackboard.infrastructure.persistence.codec import signal_from_row
from blackboard.infrastructure.persistence.dialect import dialect_of
from blackboard.infrastructure.persistence.event_store import load_in
from blackboard.infrastructure.persistence.fold import FoldCache
from blackboard.infrastructure.persistence.knowledge.read_model import get_in, records_in
from blackboard.infrastructure.persistence.tables import SIGNALS
from blackboard.infrastructure.persistence.unit_of_work import BY_ID, commit_in, read_log

# the claims an agent holds on a board (few rows: the status index finds the CLAIMED ones)
CLAIMED_BY = select(SIGNALS).where(
    SIGNALS.c.status == SignalStatus.CLAIMED.value,
    SIGNALS.c.blackboard_id == bindparam("board"),
    SIGNALS.c.claimed_by == bindparam("agent"),
)


def _shared(query: Any) -> Any:
    """The signal rows a write's permissions rest on, locked shared until its commit: a completion, a
    failure or an expiry of those claims (which lock their rows for update, holding only their signals,
    so the board's shared lock no longer keeps them out) waits for the write, as before."""
    return query.order_by(SIGNALS.c.signal_id).with_for_update(of=SIGNALS, read=True)


class SqlEntryTransaction(EntryTransaction):
    def __init__(self, blackboard_id: str, key: str, conn: Connection) -> None:
        super().__init__(blackboard_id, key)
        self._conn = conn
        self._loaded: Entry | None = None
        self._board_held = False

    def load(self) -> Entry | None:
        if read_log(self._conn, entry_stream_id(self.blackboard_id, self.key)).live:
            # the key's row is its state: every commit on the key wrote it
            self._loaded = get_in(self._conn, self.blackboard_id, self.key)
        else:  # a rebuild is running: the key's own events, never the board's
            pairs = [(r.event, r.position) for r in records_in(self._conn, self.blackboard_id, self.key)]
            self._loaded = entry_rules.replay((e, p) for e, p in pairs if isinstance(e, EntryEvent))
        return self._loaded

    def signal(self, signal_id: str) -> AgentSignal | None:
        self._hold_board()
        if read_log(self._conn, self.blackboard_id).live:
            # the signal's row is its state: every commit on the board wrote it
            row = self._conn.execute(_shared(BY_ID), {"board": self.blackboard_id, "id": signal_id}).first()
            return signal_from_row(row) if row is not None else None
        board = BlackboardAggregate.replay(self.blackboard_id, load_in(self._conn, self.blackboard_id))
        return board.signals.get(signal_id)

    def claims_of(self, agent_id: str) -> list[AgentSignal]:
        self._hold_board()
        if read_log(self._conn, self.blackboard_id).live:
            rows = self._conn.execute(_shared(CLAIMED_BY), {"board": self.blackboard_id, "agent": agent_id})
            return [signal_from_row(row) for row in rows]
        board = BlackboardAggregate.replay(self.blackboard_id, load_in(self._conn, self.blackboard_id))
        return [
            s for s in board.signals.values() if s.status is SignalStatus.CLAIMED and s.claimed_by == agent_id
        ]

    def _hold_board(self) -> None:
        if not self._board_held:
            dialect_of(self._conn.engine).share_board(self._conn, self.blackboard_id)
            self._board_held = True

    def commit(self, events: Sequence[EntryEvent], metadata: Mapping[str, Any]) -> list[Recorded]:
        if not events:
            return []
        stream = entry_stream_id(self.blackboard_id, self.key)
        seed = FoldCache(entries={(self.blackboard_id, self.key): self._loaded})
        return commit_in(self._conn, stream, events, metadata, seed)
