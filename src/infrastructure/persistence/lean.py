"""The hot path's statements on the driver's own connection: compiled once, rows as tuples.

A command runs about seven statements; through SQLAlchemy's `Connection.execute` each cost 50-60 µs of
Python (the compiled cache's lookup, parameter and result processing, the events), against 6-13 µs on
the driver itself (issue 25). The statements stay SQLAlchemy Core (one source for the SQL, both
databases, `FOR UPDATE` where a hold asks for it): `prepared` compiles each once per dialect into the
driver's own SQL and remembers which parameters and which result columns need converting, and `rows`,
`execute` and `execute_many` hand the driver plain values, with the same conversions SQLAlchemy makes
(`tables.Moment`: UTC, and on SQLite the text form SQLAlchemy's DATETIME writes and reads; Boolean
read back from SQLite's integers). sqlite3 keeps each connection's prepared statements; psycopg
prepares a statement once it has run five times on a connection.

What the driver's calls skip is done as SQLAlchemy's `Connection` does it (`_run`): a driver error, or any
error while a statement runs or its rows are read, goes through SQLAlchemy's own handling (the error
wrapped as SQLAlchemy's, so `IntegrityError` and the SQLSTATE checks of `event_store.translated` see what
they always saw; `handle_error` listeners; a lost connection invalidated with its pool); listeners of
`before_cursor_execute` and `after_cursor_execute` (statement counters, tests, OpenTelemetry's and
Sentry's integrations) see every statement with a `Context` they can keep their own attributes on, and
the SQL and parameters a `retval=True` listener returns are what runs; `echo` logs each statement and
its parameters. Only the statements of a command's transaction go here, an entry's read (one statement,
`SqlEntryReadModel.get_current`: every `read` and LangGraph store `get` runs it) and an entry search (one
statement, `SqlEntryReadModel.search_current`, built once per shape of filters: issue 37 measured it at 3.25x
the bare FTS5 query with SQLAlchemy building, compiling and running it); everything else stays on SQLAlchemy.

It is the one way a command's statements run (`tests/integration/test_lean.py` holds every statement of
posts, claims, completions, failures and retries to it, PostgreSQL's locks and notification included),
save those a run's usage adds (built per call for the boards at hand). `run_all` sends several statements that
need no answer from one another in one round trip on PostgreSQL (psycopg's pipeline mode): a lock and the
reads under it, the log's hold with its state and the event's insert, the fold's row writes with the read
model's position and the notification (issue 37: a LangGraph checkpoint's put went from 10 round trips to 5).
Issue 35 asked whether it should
go: with its five functions handed to SQLAlchemy's `Connection.execute` in the benchmark's process, section
(a)'s commands cost 1.41 ms of CPU each at synchronous=FULL and 0.95 at NORMAL, against 1.17 and 0.61 with
it (the same machine, minutes apart): SQLAlchemy's Python per statement is what it saves, so it stays.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import Boolean, Connection
from sqlalchemy.sql import ClauseElement

from blackboard.infrastructure.persistence.dialect import dialect_of
from blackboard.infrastructure.persistence.tables import Moment

_EXPANDING = re.compile(r"__\[POSTCOMPILE_(\w+)\]")
Convert = Callable[[Any], Any]


class Prepared:
    """One statement compiled for one database: its SQL, and how to turn named values into the driver's."""

    __slots__ = (
        "sql",
        "names",
        "defaults",
        "moments",
        "outputs",
        "positional",
        "expanding",
        "_sized",
        "_moment",
        "_plain",
        "_moment_at",
    )

    def __init__(self, conn: Connection, statement: ClauseElement) -> None:
        compiled = statement.compile(dialect=conn.dialect)
        self.sql: str = compiled.string
        self.positional: bool = compiled.positional
        self.names: tuple[str, ...] = tuple(compiled.positiontup or ()) if self.positional else ()
        self.defaults: dict[str, Any] = {k: v for k, v in compiled.params.items() if v is not None}
        self.moments = frozenset(
            name for bind, name in compiled.bind_names.items() if isinstance(bind.type, Moment)
        )
        self.expanding = frozenset(_EXPANDING.findall(self.sql))
        self._sized: dict[int, str] = {}  # the SQL for that many values of the one expanding parameter
        dialect = dialect_of(conn.engine)
        self._moment: Convert = dialect.bind_moment
        # the common case, positional and no list: values straight into the tuple, times where they go
        self._plain = self.positional and not self.expanding
        self._moment_at = tuple(i for i, n in enumerate(self.names) if n in self.moments)
        outputs: list[tuple[int, Convert]] = []
        for i, column in enumerate(getattr(statement, "exported_columns", ())):
            if isinstance(column.type, Moment):
                outputs.append((i, dialect.read_moment))
            elif isinstance(column.type, Boolean) and dialect.booleans_as_integers:
                outputs.append((i, _flag))
        self.outputs = tuple(outputs)

    def bind(self, conn: Connection, params: Mapping[str, Any]) -> tuple[str, Any]:
        """The SQL and the driver's parameters for these values."""
        if self._plain:
            defaults = self.defaults
            bound = [params[n] if n in params else defaults[n] for n in self.names]
            for i in self._moment_at:
                if bound[i] is not None:
                    bound[i] = self._moment(bound[i])
            return self.sql, bound
        values = {**self.defaults, **params}
        if self.moments:
            moment = self._moment
            for name in self.moments & values.keys():
                if values[name] is not None:
                    values[name] = moment(values[name])
        sql = self.sql
        if self.expanding:
            (name,) = self.expanding  # one list per statement is all the hot path binds
            listed = list(values.pop(name))
            if not listed:
                raise ValueError(f"{name}: an empty list (the caller reads nothing then)")
            sql = self._expanded(name, len(listed))
            if self.positional:
                return sql, tuple(v for n in self.names for v in (listed if n == name else (values[n],)))
            values.update((f"{name}_{i}", v) for i, v in enumerate(listed))
            return sql, values
        if self.positional:
            return sql, tuple(values[n] for n in self.names)
        return sql, values

    def _expanded(self, name: str, size: int) -> str:
        if (sql := self._sized.get(size)) is None:
            marks = ", ".join(["?"] * size if self.positional else [f"%({name}_{i})s" for i in range(size)])
            sql = self._sized[size] = self.sql.replace(f"__[POSTCOMPILE_{name}]", marks)
        return sql

    def convert(self, row: Sequence[Any]) -> tuple[Any, ...]:
        if not self.outputs:
            return tuple(row)
        values = list(row)
        for i, convert in self.outputs:
            if values[i] is not None:
                values[i] = convert(values[i])
        return tuple(values)


def _flag(value: Any) -> bool:
    return bool(value)


_prepared: dict[tuple[int, str, str, str], tuple[ClauseElement, Prepared]] = {}


def prepared(conn: Connection, statement: ClauseElement) -> Prepared:
    """The statement compiled for `conn`'s database, once (statements of the hot path are built at import)."""
    dialect = conn.dialect  # what the SQL depends on: the database, its driver, the driver's parameter style
    key = (id(statement), dialect.name, dialect.driver, dialect.paramstyle)
    if (known := _prepared.get(key)) is None or known[0] is not statement:
        known = _prepared[key] = (statement, Prepared(conn, statement))
    return known[1]


def rows(conn: Connection, statement: ClauseElement, params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
    """Every row the statement returns, as tuples of converted values."""
    query = prepared(conn, statement)
    sql, bound = query.bind(conn, params)
    return [query.convert(row) for row in _run(conn, sql, bound, _ROWS)]


def one(conn: Connection, statement: ClauseElement, params: Mapping[str, Any]) -> tuple[Any, ...] | None:
    found = rows(conn, statement, params)
    return found[0] if found else None


def execute(conn: Connection, statement: ClauseElement, params: Mapping[str, Any]) -> int:
    """Run a statement that returns no rows; how many rows it changed."""
    sql, bound = prepared(conn, statement).bind(conn, params)
    return int(_run(conn, sql, bound, _COUNT))


def execute_many(conn: Connection, statement: ClauseElement, params: Iterable[Mapping[str, Any]]) -> None:
    """The statement once per set of values (the driver's executemany)."""
    query = prepared(conn, statement)
    if query.expanding:
        raise ValueError("execute_many binds no list")
    bound = [query.bind(conn, p)[1] for p in params]
    if bound:
        _run(conn, query.sql, bound, _MANY)


Step = tuple[ClauseElement, Mapping[str, Any]]  # a statement and its values


def run_all(conn: Connection, steps: Sequence[Step]) -> list[Any]:
    """The statements in their order, and what each gave: its rows (as `rows`), or for a statement that
    returns none the count of rows it changed. On PostgreSQL (psycopg) they go in one round trip, its pipeline
    mode, where each statement still starts once the one before it has finished and takes its own snapshot
    (READ COMMITTED): a read after a lock sees what every writer that held the lock before committed. So
    only statements whose values do not depend on an earlier one's answer go together. An error in any of
    them goes through SQLAlchemy's handling (as `_run`), named by the statement the pipeline ended on."""
    if not steps:
        return []
    driver = conn.connection.driver_connection
    # one at a time: SQLite (no round trips), and a psycopg whose libpq has no pipeline mode (before 14)
    if len(steps) == 1 or conn.dialect.driver != "psycopg" or not _pipelines():
        return [_one_of(conn, statement, params) for statement, params in steps]
    sent: list[tuple[Prepared, Any]] = []
    sql, bound, cursor, context = "", None, None, None
    try:
        with driver.pipeline():
            for statement, params in steps:
                query = prepared(conn, statement)
                sql, bound = query.bind(conn, params)
                cursor = driver.cursor()
                sql, bound, context = _send(conn, cursor, sql, bound, many=False)
                sent.append((query, cursor))
        found = [_result(query, c) for query, c in sent]
    except BaseException as exc:  # noqa: BLE001 -- SQLAlchemy's handling re-raises it, wrapped or not
        conn._handle_dbapi_exception(
            exc, sql, bound, cursor, context or Context(conn, cursor, sql, bound, False)
        )
    for _, c in sent:
        c.close()
    return found


@functools.cache
def _pipelines() -> bool:
    """Whether psycopg's libpq has pipeline mode (libpq 14 and later: the binary wheel's has)."""
    import psycopg  # only where psycopg is the driver

    return bool(psycopg.Pipeline.is_supported())


def _one_of(conn: Connection, statement: ClauseElement, params: Mapping[str, Any]) -> Any:
    query = prepared(conn, statement)
    sql, bound = query.bind(conn, params)
    return _run(conn, sql, bound, _RESULT, query)


def _result(query: Prepared, cursor: Any) -> Any:
    if cursor.description is None:
        return cursor.rowcount
    return [query.convert(row) for row in cursor.fetchall()]


def run_sql(conn: Connection, sql: str) -> None:
    """A statement without parameters or rows (SQLite's BEGIN IMMEDIATE)."""
    _run(conn, sql, (), _COUNT)


_COUNT, _ROWS, _MANY, _RESULT = 0, 1, 2, 3


class Context:
    """The `context` a statement listener gets for a statement run here: the attributes of SQLAlchemy's
    `ExecutionContext` that integrations read (OpenTelemetry's and Sentry's read the dialect, the
    connection and the statement, and keep their span on it between `before_cursor_execute` and
    `after_cursor_execute` or `handle_error`), and room for their own."""

    compiled = None
    invoked_statement = None
    isinsert = isupdate = isdelete = is_crud = is_text = isddl = False

    def __init__(self, conn: Connection, cursor: Any, sql: str, params: Any, many: bool) -> None:
        self.connection = self.root_connection = conn
        self.engine = conn.engine
        self.dialect = conn.dialect
        self.cursor = cursor
        self.statement = sql
        self.parameters = params if many else [params]
        self.executemany = many
        self.execution_options = conn.get_execution_options()

    def handle_dbapi_exception(self, e: BaseException) -> None:
        """SQLAlchemy calls this on its context when a statement fails; nothing to clean up here."""


def _run(conn: Connection, sql: str, params: Any, mode: int, query: Prepared | None = None) -> Any:
    """Run on the driver's cursor as SQLAlchemy's `Connection` would: the statement listeners with a
    context (a `before_cursor_execute` listener registered with `retval=True` may rewrite the SQL and
    its parameters, which then run, as SQLAlchemy runs them), the engine's echo, and any error through
    SQLAlchemy's own handling (`handle_error` listeners, the error wrapped as SQLAlchemy's, a lost
    connection invalidated with its pool), reading the rows included. The rows (`_ROWS`), the count of
    rows changed (`_COUNT`), nothing (`_MANY`, an executemany), or whichever the statement gives
    (`_RESULT`, converted as `query` says: `run_all`'s)."""
    many = mode == _MANY
    # the DBAPI connection (sqlite3's, psycopg's: the driver's own), which a connection taken out of the pool
    # (`detach`, sqlite.KeptReads) still names
    cursor = conn.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
    context: Context | None = None
    try:
        sql, params, context = _send(conn, cursor, sql, params, many)
        if mode == _RESULT:
            assert query is not None
            found = _result(query, cursor)
        else:
            found = cursor.fetchall() if mode == _ROWS else cursor.rowcount
    except BaseException as exc:  # noqa: BLE001 -- SQLAlchemy's handling re-raises it, wrapped or not
        conn._handle_dbapi_exception(
            exc, sql, params, cursor, context or Context(conn, cursor, sql, params, many)
        )
    cursor.close()
    return found


def _send(
    conn: Connection, cursor: Any, sql: str, params: Any, many: bool
) -> tuple[str, Any, Context | None]:
    """The statement on the cursor, with the listeners and the echo (`_run`'s): the SQL and parameters that
    ran, and the listeners' context (None without listeners)."""
    context: Context | None = None
    # listeners of the connection's own (rare), or of its engine and the Engine class (a counter, a tracer)
    listeners = conn.dispatch if conn._has_events else conn.engine.dispatch
    if listeners.before_cursor_execute or listeners.after_cursor_execute:
        context = Context(
            conn, cursor, sql, params if many or isinstance(params, dict) else tuple(params), many
        )
        params = context.parameters if many else context.parameters[0]
        for before in conn.dispatch.before_cursor_execute:
            sql, params = before(conn, cursor, sql, params, context, many)
    if conn._echo:
        conn._log_info(sql)
        conn._log_parameters(params, "lean.py, compiled once", ismulti=many)
    if many:
        cursor.executemany(sql, params)
    else:
        cursor.execute(sql, params)
    if context is not None:
        conn.dispatch.after_cursor_execute(conn, cursor, sql, params, context, many)
    return sql, params, context
