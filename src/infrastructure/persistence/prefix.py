"""Prefix matches in SQL: exact (every character, case included) on SQLite and PostgreSQL, and able to use an index.

`LIKE 'p%'` is neither: SQLite's LIKE ignores ASCII case (`notes/` matched `Notes/a`, board `ps-1` the streams of
`PS-1`), and neither database uses an index for it under a collation other than "C". A prefix is a range in
code-point order instead, `p <= column < successor(p)`: SQLite's BINARY collation compares UTF-8 bytes, which sort
as their code points do, and so does PostgreSQL's "C" collation, which `CodePointOrder(column)` compares in (a
no-op on the "C" columns, `KeyText`, whose index serves the range). Both databases are rendered here, as
`with_variant` renders a column type for each.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, String, and_, true
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.visitors import InternalTraversal

LAST = 0x10FFFF  # the last code point
SURROGATES = range(0xD800, 0xE000)  # no text holds one: the successor of U+D7FF is U+E000


def successor(prefix: str) -> str | None:
    """The first text after every text that starts with `prefix`, in code-point order (None: there is none,
    `prefix` being empty or all U+10FFFF)."""
    kept = prefix.rstrip(chr(LAST))
    if not kept:
        return None
    after = ord(kept[-1]) + 1
    if after in SURROGATES:
        after = SURROGATES.stop
    return kept[:-1] + chr(after)


def bounds(prefix: str) -> tuple[str | None, str | None]:
    """The range of the texts that start with `prefix`: `lower <= text < upper` (None: no bound that side)."""
    return prefix or None, successor(prefix)


def starts_with(column: Any, prefix: str) -> ColumnElement[bool]:
    """`column` starts with `prefix`, exactly, as a range the column's index can serve."""
    return within(column, *bounds(prefix))


def within(column: Any, lower: Any, upper: Any) -> ColumnElement[bool]:
    """`lower <= column < upper` in code-point order (None: no bound that side): `bounds`' range, its ends
    given as values or as bound parameters (a statement built once for any prefix)."""
    ordered = CodePointOrder(column)
    return and_(
        ordered >= lower if lower is not None else true(),
        ordered < upper if upper is not None else true(),
    )


class CodePointOrder(ColumnElement[str]):
    """A text column compared in code-point order: `column COLLATE "C"` on PostgreSQL, the column itself on
    SQLite (BINARY already)."""

    inherit_cache = True
    _traverse_internals = [("column", InternalTraversal.dp_clauseelement)]

    def __init__(self, column: Any) -> None:
        self.column = column
        self.type = String()


@compiles(CodePointOrder)
def _as_is(element: CodePointOrder, compiler: Any, **kw: Any) -> str:
    return compiler.process(element.column, **kw)


@compiles(CodePointOrder, "postgresql")
def _collated(element: CodePointOrder, compiler: Any, **kw: Any) -> str:
    return f'{compiler.process(element.column, **kw)} COLLATE "C"'
