"""Who writes: the UnitOfWork port on SQLAlchemy, the one place a command's events and rows are written.

`board(id)` opens one write transaction and holds the board in it (SQLite: the database's write
lock; PostgreSQL: the board's advisory lock, see postgres.py). Under that hold the read-model rows
of the board are its state at its current version, because every commit on the board wrote them
in its own transaction: so a decision loads only the rows it touches (`BoardRows`), never the whole
board. `commit` appends the events and folds them into those rows with the one fold
(projection.py), seeded with the rows the decision loaded, so it reads nothing more. While a
rebuild has the read model behind the log, decisions replay the board's events instead and leave
the rows to the rebuild.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection, Engine, bindparam, func, or_, select

from blackboard.application.ports import BoardRows, BoardTransaction, Overdue, Recorded, UnitOfWork
from blackboard.domain.blackboard import BlackboardAggregate
from blackboard.domain.events import BlackboardEvent, entry_stream_id
from blackboard.domain.signals import AgentSignal
from blackboard.infrastructure.persistence.codec import signal_from_row
from blackboard.infrastructure.persistence.dialect import dialect_of
from blackboard.infrastructure.persistence.engine import write_transaction
from blackboard.infrastructure.persistence.event_store import STATE, append_in, load_in, translated
from blackboard.infrastructure.persistence.tables import DEPENDENCIES, SIGNALS, Moment

if TYPE_CHECKING:
    from blackboard.application.knowledge.ports import EntryTransaction

BY_ID = select(SIGNALS).where(
    SIGNALS.c.blackboard_id == bindparam("board"), SIGNALS.c.signal_id == bindparam("id")
)
BY_IDS = select(SIGNALS).where(
    SIGNALS.c.blackboard_id == bindparam("board"), SIGNALS.c.signal_id.in_(bindparam("ids", expanding=True))
)
DEPENDANTS = (
    select(SIGNALS)
    .join(DEPENDENCIES, DEPENDENCIES.c.signal_id == SIGNALS.c.signal_id)
    .where(
        DEPENDENCIES.c.upstream_id.in_(bindparam("ids", expanding=True)),
        SIGNALS.c.blackboard_id == bindparam("board"),
    )
)
WITH_KEY = select(SIGNALS).where(
    SIGNALS.c.blackboard_id == bindparam("board"), SIGNALS.c.dedupe_key == bindparam("key")
)
RETRIES = select(SIGNALS).where(
    SIGNALS.c.blackboard_id == bindparam("board"), SIGNALS.c.retry_of.in_(bindparam("ids", expanding=True))
)
OVERDUE = select(SIGNALS).where(
    SIGNALS.c.blackboard_id == bindparam("board"),
    or_(
        (SIGNALS.c.status == "POSTED")
        & (SIGNALS.c.claimable_since <= bindparam("posted_before", type_=Moment())),
        (SIGNALS.c.status == "CLAIMED")
        & (
            func.coalesce(SIGNALS.c.renewed_at, SIGNALS.c.claimed_at)
            <= bindparam("claimed_before", type_=Moment())
        ),
    ),
)
TAKEN = select(SIGNALS.c.signal_id).where(SIGNALS.c.signal_id == bindparam("id"))


class SqlUnitOfWork(UnitOfWork):
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    @contextmanager
    def board(self, blackboard_id: str) -> Iterator[BoardTransaction]:
        with (
            translated(f"could not write to {blackboard_id}", blackboard_id),
            write_transaction(self._engine) as conn,
        ):
            dialect_of(self._engine).hold_board(conn, blackboard_id)
            yield _SqlTransaction(blackboard_id, conn)

    @contextmanager
    def entry(self, blackboard_id: str, key: str) -> Iterator[EntryTransaction]:
        """The key's own stream is held (PostgreSQL: its advisory lock, never the board's), so
        writers of different keys, and of the board's signals, do not wait on each other."""
        from blackboard.infrastructure.persistence.knowledge.transaction import (
            SqlEntryTransaction,
        )  # not for signals

        stream = entry_stream_id(blackboard_id, key)
        with (
            translated(f"could not write {key} on {blackboard_id}", stream),
            write_transaction(self._engine) as conn,
        ):
            dialect_of(self._engine).hold_entry(conn, stream)
            yield SqlEntryTransaction(blackboard_id, key, conn)


class _SqlTransaction(BoardTransaction):
    def __init__(self, blackboard_id: str, conn: Connection) -> None:
        super().__init__(blackboard_id)
        self._conn = conn
        self._state: tuple[int, int, int | None] | None = None  # version, log's end, checkpoint

    def rows(self) -> BoardRows | None:
        self._state = version, last, folded_to = tuple(
            self._conn.execute(STATE, {"stream": self.blackboard_id}).one()
        )
        if (folded_to or 0) != last:
            return None
        return _SqlRows(self._conn, self.blackboard_id, version)

    def history(self) -> list[BlackboardEvent]:
        return load_in(self._conn, self.blackboard_id)

    def taken(self, signal_id: str) -> bool:
        # while a rebuild runs, a signal not yet folded back is not seen here; ids have 32 random bits
        return self._conn.scalar(TAKEN, {"id": signal_id}) is not None

    def commit(self, board: BlackboardAggregate, metadata: Mapping[str, Any]) -> list[Recorded]:
        events = board.collect_events()
        if not events:
            return []
        return append_in(
            self._conn,
            board.id,
            events[0].version - 1,
            events,
            metadata,
            loaded=self.loaded,
            dependants=self.loaded_dependants,
            state=self._state,
        )


class _SqlRows(BoardRows):
    def __init__(self, conn: Connection, blackboard_id: str, version: int) -> None:
        self._conn = conn
        self._state: tuple[int, int, int | None] | None = None  # version, log's end, checkpoint
        self._board = blackboard_id
        self.version = version

    def signals(self, signal_ids: Collection[str]) -> list[AgentSignal]:
        if len(signal_ids) == 1:  # most commands name one: a statement that needs no list rendered
            return self._many(BY_ID, id=next(iter(signal_ids)))
        return self._many(BY_IDS, ids=sorted(signal_ids)) if signal_ids else []

    def dependants(self, signal_ids: Collection[str]) -> list[AgentSignal]:
        return self._many(DEPENDANTS, ids=sorted(signal_ids)) if signal_ids else []

    def with_key(self, dedupe_key: str) -> AgentSignal | None:
        found = self._many(WITH_KEY, key=dedupe_key)
        return found[0] if found else None

    def retries(self, signal_ids: Collection[str]) -> list[AgentSignal]:
        return self._many(RETRIES, ids=sorted(signal_ids)) if signal_ids else []

    def overdue(self, overdue: Overdue) -> list[AgentSignal]:
        return self._many(
            OVERDUE,
            posted_before=overdue.at - overdue.post_timeout,
            claimed_before=overdue.at - overdue.claim_timeout,
        )

    def _many(self, query: Any, **params: Any) -> list[AgentSignal]:
        return [signal_from_row(row) for row in self._conn.execute(query, {"board": self._board, **params})]
