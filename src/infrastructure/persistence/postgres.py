"""PostgreSQL: advisory locks for boards, the log and the read model; LISTEN/NOTIFY; rows in bulk.

Locks are transaction-level advisory locks, so they end with the transaction whatever happens:
- a board: `pg_advisory_xact_lock(BOARD_LOCKS, hashtext(board))`, held by a command that needs the
  whole board (Hold.BOARD: a post, a cancel, a sweep, a budget) from its first read to its commit, so
  the rows it decides on are the board's state until it writes; claims, outcomes and renewals
  (Hold.SIGNALS) take it shared, so they run side by side and wait only for a whole-board writer,
  and lock the rows they read (`SELECT ... FOR UPDATE`, a worker's claims `SKIP LOCKED`:
  unit_of_work.py);
- an entry key: `pg_advisory_xact_lock(ENTRY_LOCKS, hashtext(stream))`, the key's own stream, held
  like a board's (a write of one key never waits on another key's, nor on a board's);
- a write naming a signal with key permissions also takes its board's lock shared (`share_board`),
  after its key's, so the signal's claim cannot end between the check and the write's commit, and
  such writes on one board still run side by side;
- the projection: every command also holds `PROJECTION_LOCK` shared, and folding or clearing the
  read model outside a command (a rebuild) holds it exclusive, so no command decides on rows that
  are being cleared or refolded;
- the log: `LOG_LOCK`, taken right before an append and held to its commit, so positions are handed
  out in commit order and a reader following the log never skips a late commit; under it an append
  of claims or outcomes reads the board's version and numbers its events after it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sqlalchemy import (
    ARRAY,
    ColumnElement,
    Connection,
    Engine,
    Float,
    String,
    Table,
    bindparam,
    cast,
    create_engine,
    extract,
    func,
    text,
)

from blackboard.infrastructure.persistence import bulk, lean, notice
from blackboard.infrastructure.persistence.dialect import Dialect

if TYPE_CHECKING:
    from blackboard.application.ports import EventStore, LogNotifier
    from blackboard.domain.events import BlackboardEvent
    from blackboard.infrastructure.persistence.engine import StoreSettings

NOTIFY_CHANNEL = "blackboard_events"  # each append's last position, on commit (and its posts: notice.py)
BOARD_LOCKS = 0x626C  # advisory lock class of the boards (the two-key form: a key space of its own)
ENTRY_LOCKS = 0x656E  # advisory lock class of the entry keys, apart from the boards'
CONCURRENCY_LOCKS = 0x636B  # advisory lock class of the concurrency keys (domain/limits.py)
LOG_LOCK = 0x626C6B62
PROJECTION_LOCK = 0x626C7072
MIGRATION_LOCK = 0x626C6D67
HOLD_BOARD = text(
    "SELECT pg_advisory_xact_lock_shared(:projection), pg_advisory_xact_lock(:kind, hashtext(:board))"
)
HOLD = text("SELECT pg_advisory_xact_lock(:key)")
HOLD_KEY = text("SELECT pg_advisory_xact_lock(:kind, hashtext(:key))")
SET_SEQUENCE = text(
    "SELECT setval(pg_get_serial_sequence('events', 'position'), (SELECT max(position) FROM events))"
)
SHARE_BOARD = text("SELECT pg_advisory_xact_lock_shared(:kind, hashtext(:board))")
SHARE_BOARD_ROWS = text(
    "SELECT pg_advisory_xact_lock_shared(:projection), pg_advisory_xact_lock_shared(:kind, hashtext(:board))"
)
NOTIFY = text("SELECT pg_notify(:channel, :position)")


class PostgresDialect(Dialect):
    notify_channel = NOTIFY_CHANNEL

    def create_engine(self, settings: StoreSettings) -> Engine:
        return create_engine(
            settings.url,
            pool_size=settings.pool_size,
            max_overflow=settings.max_overflow,
            pool_timeout=settings.pool_timeout,
            pool_pre_ping=settings.pool_pre_ping,
            echo=settings.echo,
        )

    def read_only(self, conn: Connection) -> None:
        # Each statement in autocommit: no BEGIN and ROLLBACK round trips, and psycopg keeps its
        # prepared statements, which it drops on every rollback (so behind the pool's
        # rollback-on-return nothing would ever be prepared, and every statement planned again).
        conn.execution_options(isolation_level="AUTOCOMMIT")

    def hold_board(self, conn: Connection, blackboard_id: str) -> None:
        lean.execute(
            conn, HOLD_BOARD, {"projection": PROJECTION_LOCK, "kind": BOARD_LOCKS, "board": blackboard_id}
        )

    def hold_entry(self, conn: Connection, stream_id: str) -> None:
        lean.execute(conn, *self.entry_hold(stream_id)[0])

    def entry_hold(self, stream_id: str) -> list[Any]:
        return [(HOLD_BOARD, {"projection": PROJECTION_LOCK, "kind": ENTRY_LOCKS, "board": stream_id})]

    def share_board(self, conn: Connection, blackboard_id: str, projection: bool = False) -> None:
        # an entry writer takes it after the key's lock; a board's writer never takes a key's, so the
        # two cannot deadlock
        if projection:
            lean.execute(
                conn,
                SHARE_BOARD_ROWS,
                {"projection": PROJECTION_LOCK, "kind": BOARD_LOCKS, "board": blackboard_id},
            )
        else:
            lean.execute(conn, *self.board_share(blackboard_id)[0])

    def board_share(self, blackboard_id: str) -> list[Any]:
        return [(SHARE_BOARD, {"kind": BOARD_LOCKS, "board": blackboard_id})]

    def hold_key(self, conn: Connection, key: str) -> None:
        # taken after the board's lock and before the log's, by claims only: the order is always board,
        # key, log, so two claims of different boards under one key queue here and cannot deadlock. Two
        # keys whose hashes collide merely queue together.
        lean.execute(conn, HOLD_KEY, {"kind": CONCURRENCY_LOCKS, "key": key})

    def hold_log(self, conn: Connection) -> None:
        lean.execute(conn, *self.log_hold()[0])

    def log_hold(self) -> list[Any]:
        return [(HOLD, {"key": LOG_LOCK})]

    def hold_projection(self, conn: Connection) -> None:
        conn.execute(HOLD, {"key": PROJECTION_LOCK})

    def hold_migrations(self, conn: Connection) -> None:
        conn.execute(HOLD, {"key": MIGRATION_LOCK})

    def positions_given(self, conn: Connection) -> None:
        # the sequence knows nothing of positions given explicitly; under the log's lock no append races this
        conn.execute(SET_SEQUENCE)

    def seconds_between(self, start: ColumnElement[Any], end: ColumnElement[Any]) -> ColumnElement[float]:
        return cast(extract("epoch", end - start), Float)  # an interval's seconds (numeric: made a float)

    def rank_named(self, column: ColumnElement[str]) -> ColumnElement[int]:
        return func.array_position(bindparam("order", type_=ARRAY(String())), column)

    def order_named(self, names: Sequence[str]) -> Any:
        return list(names)

    def notify(self, conn: Connection, position: int, events: Sequence[BlackboardEvent] = ()) -> None:
        # delivered on commit: listeners wake as soon as the events are visible; a post's notification
        # carries the signals it made claimable (notice.py), so a woken worker need not look them up
        lean.execute(conn, NOTIFY, {"channel": NOTIFY_CHANNEL, "position": notice.payload(position, events)})

    def insert_many(
        self,
        conn: Connection,
        table: Table,
        rows: Sequence[Mapping[str, Any]],
        returning: str | None = None,
        key: str | None = None,
    ) -> list[Any]:
        if len(rows) < bulk.SMALLEST:
            return super().insert_many(conn, table, rows, returning, key)
        return bulk.insert(conn, table, rows, returning=returning, key=key)

    def update_many(
        self,
        conn: Connection,
        table: Table,
        key: str,
        columns: Sequence[str],
        rows: Sequence[Mapping[str, Any]],
        prefix: str = "",
    ) -> None:
        if len(rows) < bulk.SMALLEST:
            super().update_many(conn, table, key, columns, rows, prefix)
        else:
            bulk.update(conn, table, key, columns, rows, prefix)

    def notifier(self, engine: Engine, store: EventStore, poll_interval: float) -> LogNotifier:
        from blackboard.infrastructure.persistence.listening import PostgresNotifier

        return PostgresNotifier(engine, store)
