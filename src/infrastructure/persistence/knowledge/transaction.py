"""One entry key held in a SQL write transaction: its state from its row (or its events while a
rebuild runs), and its events and row committed together (unit_of_work.commit_in: the event store
appends, the fold writes the row, seeded with the state loaded here)."""

from __future__ import annotations

from collections import namedtuple
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
from blackboard.infrastructure.persistence import lean
from blackboard.infrastructure.persistence.codec import signal_from_row
from blackboard.infrastructure.persistence.dialect import dialect_of
from blackboard.infrastructure.persistence.event_store import load_in
from blackboard.infrastructure.persistence.fold import FoldCache
from blackboard.infrastructure.persistence.knowledge.codec import entry_from_row
from blackboard.infrastructure.persistence.knowledge.read_model import GET, records_in
from blackboard.infrastructure.persistence.tables import SIGNALS
from blackboard.infrastructure.persistence.unit_of_work import (
    BY_ID,
    STATE,
    LogState,
    SignalRow,
    commit_in,
)

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


SIGNAL_SHARED, CLAIMED_BY_SHARED = _shared(BY_ID), _shared(CLAIMED_BY)  # built once: on the driver (lean.py)
_EntryRow = namedtuple("_EntryRow", [c.name for c in GET.selected_columns])  # type: ignore[misc]


class SqlEntryTransaction(EntryTransaction):
    """`hold`: the key's lock statements (the dialect's `entry_hold`), sent with the transaction's first
    reads in one round trip (lean.run_all), before them: every statement here goes after the hold."""

    def __init__(
        self, blackboard_id: str, key: str, conn: Connection, hold: Sequence[lean.Step] = ()
    ) -> None:
        super().__init__(blackboard_id, key)
        self._conn = conn
        self._hold = list(hold)  # not sent yet
        self._loaded: Entry | None = None
        self._log: LogState | None = None  # the key's, as `load` read it
        self._read_ahead: tuple[Any, Any] | None = None  # `load`'s reads, sent with an earlier round trip
        self._board_held = False

    def _run(self, steps: Sequence[lean.Step]) -> list[Any]:
        """These statements, after the key's hold if it is not taken yet, in one round trip."""
        hold, self._hold = self._hold, []
        return lean.run_all(self._conn, [*hold, *steps])[len(hold) :]

    def _key_reads(self) -> list[lean.Step]:
        """The key's log state and its row: `load`'s reads (the row counts only if the read model is live)."""
        stream = entry_stream_id(self.blackboard_id, self.key)
        return [(STATE, {"stream": stream}), (GET, {"board": self.blackboard_id, "key": self.key})]

    def load(self) -> Entry | None:
        # read with the board's rows (`_board_rows`) when a check read them first, else now: one round trip
        state, found = self._read_ahead or self._run(self._key_reads())
        self._read_ahead = None
        ((version, end, checkpoint),) = state
        self._log = LogState(version, end, checkpoint or 0)
        if self._log.live:  # the key's row is its state: every commit on the key wrote it
            self._loaded = entry_from_row(_EntryRow._make(found[0])) if found else None
        else:  # a rebuild is running: the key's own events, never the board's
            pairs = [(r.event, r.position) for r in records_in(self._conn, self.blackboard_id, self.key)]
            self._loaded = entry_rules.replay((e, p) for e, p in pairs if isinstance(e, EntryEvent))
        return self._loaded

    def signal(self, signal_id: str) -> AgentSignal | None:
        found = self._board_rows(SIGNAL_SHARED, {"board": self.blackboard_id, "id": signal_id})
        if found is not None:  # the signal's row is its state: every commit on the board wrote it
            return signal_from_row(SignalRow._make(found[0])) if found else None
        board = BlackboardAggregate.replay(self.blackboard_id, load_in(self._conn, self.blackboard_id))
        return board.signals.get(signal_id)

    def claims_of(self, agent_id: str) -> list[AgentSignal]:
        found = self._board_rows(CLAIMED_BY_SHARED, {"board": self.blackboard_id, "agent": agent_id})
        if found is not None:
            return [signal_from_row(SignalRow._make(row)) for row in found]
        board = BlackboardAggregate.replay(self.blackboard_id, load_in(self._conn, self.blackboard_id))
        return [
            s for s in board.signals.values() if s.status is SignalStatus.CLAIMED and s.claimed_by == agent_id
        ]

    def _board_rows(self, query: Any, params: Mapping[str, Any]) -> list[Any] | None:
        """The board held shared (once), the board's log state, and the query's rows, in one round trip (each
        statement after the one before: the rows are read under the hold); None when the read model is behind
        the log (a rebuild runs: the rows are not the board's state)."""
        share = [] if self._board_held else dialect_of(self._conn.engine).board_share(self.blackboard_id)
        self._board_held = True
        ahead = self._key_reads() if self._log is None and self._read_ahead is None else []
        board_reads = [(STATE, {"stream": self.blackboard_id}), (query, params)]
        results = self._run([*share, *board_reads, *ahead])
        state, found = results[len(share) : len(share) + 2]
        if ahead:  # under the key's hold: still the key's state when `load` asks
            self._read_ahead = (results[-2], results[-1])
        ((version, end, checkpoint),) = state
        return found if LogState(version, end, checkpoint or 0).live else None

    def commit(self, events: Sequence[EntryEvent], metadata: Mapping[str, Any]) -> list[Recorded]:
        if not events:
            return []
        self._run([])  # the key's hold, if nothing was read before
        stream = entry_stream_id(self.blackboard_id, self.key)
        seed = FoldCache(entries={(self.blackboard_id, self.key): self._loaded})
        return commit_in(self._conn, stream, events, metadata, seed, known=self._log)
