"""What differs between SQLite and PostgreSQL, behind one interface chosen once per engine.

Each technology has its own module (`sqlite.py`, `postgres.py`) implementing `Dialect`; nothing
else in the project asks which database it is on. `dialect_of(engine)` picks the implementation
from the engine's URL the first time it is asked and remembers it.
"""

from __future__ import annotations

import abc
import functools
import weakref
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import ColumnElement, Connection, Engine, Insert, Table, Update, bindparam

if TYPE_CHECKING:
    from blackboard.application.ports import EventStore, LogNotifier
    from blackboard.domain.events import BlackboardEvent
    from blackboard.infrastructure.persistence.engine import StoreSettings


class Dialect(abc.ABC):
    """How one database technology opens, locks, notifies and writes many rows."""

    # True when a write transaction holds the whole database from its first statement: then what it
    # read stays true until it commits, and an append need not read the log's state again
    one_writer = False
    # the channel `notify` sends on, when a statement can notify as it writes (PostgreSQL's pg_notify);
    # None: `notify` is the only way
    notify_channel: str | None = None
    # SQLite keeps a Boolean as 0 or 1 and its driver gives that back (lean.py makes it a bool again)
    booleans_as_integers = False

    @abc.abstractmethod
    def create_engine(self, settings: StoreSettings) -> Engine:
        """An engine tuned for this technology (pragmas, pools)."""

    def writer_turn(self) -> AbstractContextManager[Any] | None:
        """A lock every write transaction of this process queues on before it begins (None: none)."""
        return None

    def read_only(self, conn: Connection) -> None:
        """Prepare a connection that only reads, statement by statement."""

    def read_connection(self, engine: Engine) -> AbstractContextManager[Connection]:
        """A connection for reads that need no transaction around them (`engine.read_connection`): one of
        the pool's, prepared by `read_only`, returned to the pool after."""
        return _pooled_read(self, engine)

    def hold_board(self, conn: Connection, blackboard_id: str) -> None:
        """In a write transaction: no other writer of this board gets past here until it ends."""

    def hold_entry(self, conn: Connection, stream_id: str) -> None:
        """In a write transaction: no other writer of this entry key (stream) gets past here until it
        ends; writers of other keys and of boards are not held up."""

    def share_board(self, conn: Connection, blackboard_id: str, projection: bool = False) -> None:
        """In a write transaction: the board's whole-board writers (Hold.BOARD: a post, a cancel, a
        sweep) wait until it ends; others sharing the board (entry keys' writers, claims and outcomes,
        which lock the rows they touch) do not. `projection`: and the projection lock shared, as a
        command's hold takes it. Nothing to do where one write transaction holds the whole database
        (SQLite)."""

    def hold_key(self, conn: Connection, key: str) -> None:
        """In a write transaction holding a board: no other claim under this concurrency key, on any
        board, gets past here until it ends. Nothing to do where one write transaction holds the whole
        database (SQLite)."""

    def hold_log(self, conn: Connection) -> None:
        """In a write transaction, right before it appends: positions are handed out in commit order."""

    def log_hold(self) -> list[Any]:
        """`hold_log`'s statements (lean.py's steps), for a caller that sends them in one round trip with
        the reads that must follow the hold (`lean.run_all`); none where the transaction holds it already."""
        return []

    def entry_hold(self, stream_id: str) -> list[Any]:
        """`hold_entry`'s statements, as `log_hold` gives `hold_log`'s."""
        return []

    def board_share(self, blackboard_id: str) -> list[Any]:
        """`share_board`'s statements (without the projection's), as `log_hold` gives `hold_log`'s."""
        return []

    def hold_projection(self, conn: Connection) -> None:
        """In a transaction that folds or clears the read model outside a command: no command is
        deciding on its rows meanwhile."""

    def hold_migrations(self, conn: Connection) -> None:
        """One migrator at a time."""

    @abc.abstractmethod
    def seconds_between(self, start: ColumnElement[Any], end: ColumnElement[Any]) -> ColumnElement[float]:
        """An SQL expression: the seconds from one stored moment to another (a float)."""

    @abc.abstractmethod
    def rank_named(self, column: ColumnElement[str]) -> ColumnElement[int]:
        """An SQL expression: where `column`'s value stands in the list bound as `order` (`order_named`
        makes the bound value), for a statement that reads named rows in the order named whatever their
        number, so it is compiled once (a CASE of the names would make a new statement per list)."""

    @abc.abstractmethod
    def order_named(self, names: Sequence[str]) -> Any:
        """The value bound as `order` for `rank_named`."""

    def notify(self, conn: Connection, position: int, events: Sequence[BlackboardEvent] = ()) -> None:
        """Tell listeners, on commit, that the log reached `position`; `events`, the append's, may tell
        them more (what it made claimable: notice.py)."""

    def positions_given(self, conn: Connection) -> None:
        """Events were inserted with positions of their own (an import keeping an export's): the
        next append must be handed a position after them. SQLite's rowid follows the largest already."""

    def insert_many(
        self,
        conn: Connection,
        table: Table,
        rows: Sequence[Mapping[str, Any]],
        returning: str | None = None,
        key: str | None = None,
    ) -> list[Any]:
        """Insert `rows` in their order; with `returning`, that column of each, in the same order
        (matched by `key`, a column unique among them)."""
        from blackboard.infrastructure.persistence import lean  # it imports this module

        if not rows:
            return []
        if returning is None:
            lean.execute_many(conn, insert_values(table, tuple(rows[0])), rows)
            return []
        if len(rows) == 1:  # a command's append: on the driver (lean.py)
            (found,) = lean.rows(conn, insert_values(table, tuple(rows[0]), returning), rows[0])
            return [found[0]]
        return list(conn.scalars(_insert_returning(table, returning), list(rows)))

    def update_many(
        self,
        conn: Connection,
        table: Table,
        key: str,
        columns: Sequence[str],
        rows: Sequence[Mapping[str, Any]],
        prefix: str = "",
    ) -> None:
        """Set `columns` of the row whose `key` matches, for each row (dict keys: `prefix` + column)."""
        from blackboard.infrastructure.persistence import lean  # it imports this module

        lean.execute_many(conn, _update(table, key, tuple(columns), prefix), rows)

    def bind_moment(self, value: datetime) -> Any:
        """A `tables.Moment` as the driver takes it (lean.py): in UTC, as the column type binds it."""
        if value.tzinfo is None:
            raise ValueError("naive datetimes are refused: every stored time must carry its zone")
        return value.astimezone(UTC)

    def read_moment(self, value: Any) -> datetime:
        """A `tables.Moment` as the driver gives it back, made what the column type gives (aware, UTC)."""
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)

    @abc.abstractmethod
    def notifier(self, engine: Engine, store: EventStore, poll_interval: float) -> LogNotifier:
        """What wakes a waiter when the log grows."""


@contextmanager
def _pooled_read(dialect: Dialect, engine: Engine) -> Iterator[Connection]:
    with engine.connect() as conn:
        dialect.read_only(conn)
        yield conn


# Statements built once: building one costs SQLAlchemy more than running it from its cache.
@functools.cache
def insert_values(table: Table, columns: tuple[str, ...], returning: str | None = None) -> Insert:
    """An INSERT of these columns (each bound by its name), for lean.py, which binds no other form."""
    insert = table.insert().values({c: bindparam(c) for c in columns})
    return insert if returning is None else insert.returning(table.c[returning])


@functools.cache
def _insert_returning(table: Table, column: str) -> Insert:
    return table.insert().returning(table.c[column], sort_by_parameter_order=True)


@functools.cache
def _update(table: Table, key: str, columns: tuple[str, ...], prefix: str) -> Update:
    return (
        table.update()
        .where(table.c[key] == bindparam(f"{prefix}{key}"))
        .values({c: bindparam(f"{prefix}{c}") for c in columns})
    )


_chosen: weakref.WeakKeyDictionary[Engine, Dialect] = weakref.WeakKeyDictionary()


def dialect_for_url(backend: str) -> Dialect:
    """The implementation for a URL's backend name (`sqlite`, `postgresql`)."""
    if backend == "sqlite":
        from blackboard.infrastructure.persistence.sqlite import SqliteDialect

        return SqliteDialect()
    if backend == "postgresql":
        from blackboard.infrastructure.persistence.postgres import PostgresDialect

        return PostgresDialect()
    raise ValueError(f"{backend} is not supported: use a sqlite:/// or postgresql+psycopg:// URL")


def remember(engine: Engine, dialect: Dialect) -> Engine:
    _chosen[engine] = dialect
    return engine


def dialect_of(engine: Engine) -> Dialect:
    """The dialect `make_engine` chose for this engine (or, for an engine made elsewhere, by its URL)."""
    if (known := _chosen.get(engine)) is None:
        known = _chosen[engine] = dialect_for_url(engine.url.get_backend_name())
    return known
