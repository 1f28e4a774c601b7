"""Many rows in one statement on PostgreSQL: the rows go as one JSON parameter, unpacked by
`json_to_recordset` on the server.

An executemany of N rows costs N statements, each with its parameters processed by SQLAlchemy and
psycopg; and psycopg's pipeline, which sends them, busy-waits for the server while holding the GIL
(a quarter of a worker's CPU went there). Array parameters (`unnest`) cost as much again in
psycopg's Python list dumper, which escapes every element with a regular expression. One JSON
document is encoded by the json module's C encoder, the statement text does not depend on N (so
psycopg prepares it once), and the server parses it in microseconds. SQLite keeps executemany: it
has no round trips to save.

The statements go straight to the driver (`exec_driver_sql`), so the values must already be what
the columns hold: times aware (sent in ISO 8601, in UTC), JSON columns as text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, Table

# The PostgreSQL type that json_to_recordset gives each column, by the column's SQLAlchemy type.
_TYPES = {
    "String": "varchar",
    "Text": "text",
    "Integer": "integer",
    "BigInteger": "bigint",
    "DateTime": "timestamptz",
    "Float": "double precision",
    "Boolean": "boolean",
}
SMALLEST = 2  # fewer rows than this: a plain statement is as cheap


def _type(table: Table, column: str) -> str:
    kind = table.c[column].type
    kind = getattr(kind, "impl", kind)  # a TypeDecorator (Moment) is sent as what it stores
    try:
        return _TYPES[type(kind).__name__]
    except KeyError:  # a column type this module was not taught: fail loudly, not with a wrong cast
        raise TypeError(f"bulk: no json_to_recordset type for {table.name}.{column} ({kind})") from None


def _moment(value: Any) -> str:
    if isinstance(value, datetime):
        if value.utcoffset() is None:
            raise ValueError("naive datetimes are refused: every stored time must carry its zone")
        return value.astimezone(UTC).isoformat()  # as tables.Moment binds it
    raise TypeError(f"bulk: cannot send {type(value).__name__} as JSON")


def _document(rows: Sequence[Mapping[str, Any]]) -> str:
    return json.dumps(rows, default=_moment, separators=(",", ":"))


def _record(table: Table, names: Sequence[str], prefix: str = "") -> str:
    return ", ".join(f"{prefix}{n} {_type(table, n)}" for n in names)


def insert(
    conn: Connection,
    table: Table,
    rows: Sequence[Mapping[str, Any]],
    returning: str | None = None,
    key: str | None = None,
) -> list[Any]:
    """Insert `rows` (dicts keyed by column name, all with the same keys) in one statement, in their
    order (so a sequence default, like events.position, follows it); with `returning`, that column
    of each inserted row, in the order of `rows`, matched up by `key`, a column unique among them."""
    names = list(rows[0])
    listed = ", ".join(names)
    sql = (
        f"INSERT INTO {table.name} ({listed}) SELECT {listed} "
        f"FROM ROWS FROM (json_to_recordset(%(rows)s::json) AS ({_record(table, names)})) "
        f"WITH ORDINALITY AS u({listed}, bulk_n) ORDER BY bulk_n"
    )
    if returning is None:
        conn.exec_driver_sql(sql, {"rows": _document(rows)})
        return []
    if key is None or key not in names or returning not in table.c:
        raise ValueError(f"bulk: RETURNING {returning} needs a key column among {names}, got {key}")
    # RETURNING promises no order: match the rows up by the key
    found = dict(conn.exec_driver_sql(f"{sql} RETURNING {key}, {returning}", {"rows": _document(rows)}).all())
    if len(found) != len(rows):
        raise ValueError(f"bulk: {key} is not unique among the {len(rows)} rows inserted")
    return [found[row[key]] for row in rows]


def update(
    conn: Connection,
    table: Table,
    key: str,
    columns: Sequence[str],
    rows: Sequence[Mapping[str, Any]],
    prefix: str = "",
) -> int:
    """Set `columns` of the row whose `key` matches, for each of `rows` (dict keys: `prefix` + column)."""
    sets = ", ".join(f"{c} = v.{prefix}{c}" for c in columns)
    sql = (
        f"UPDATE {table.name} AS t SET {sets} "
        f"FROM json_to_recordset(%(rows)s::json) AS v({_record(table, [key, *columns], prefix)}) "
        f"WHERE t.{key} = v.{prefix}{key}"
    )
    return int(conn.exec_driver_sql(sql, {"rows": _document(rows)}).rowcount)
