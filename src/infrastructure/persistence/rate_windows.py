"""Rate limits' windows in the database (domain/rates.py): one row per key, read under its lock and written
back in the same transaction.

A claim reads its agent's window inside the claim's transaction (`_SqlTransaction.rate_window`), and a
runner's call reads it in a short transaction of its own (`SqlRateWindows`); either way the row is locked
until the transaction ends (PostgreSQL: FOR UPDATE, so claims and calls under one key, from any host, queue
on it; SQLite: the one writer the transaction already is), so two of them never take the same room. A key
never used gets its row, full, on first use. Nothing is read for an agent without a rate limit.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from sqlalchemy import Connection, Engine, bindparam, select, update
from sqlalchemy.dialects import postgresql, sqlite

from blackboard.application.ports.rates import RateWindows
from blackboard.domain.rates import RateLimit, RateWindow
from blackboard.infrastructure.persistence import lean
from blackboard.infrastructure.persistence.engine import read_connection, write_transaction
from blackboard.infrastructure.persistence.event_store import translated
from blackboard.infrastructure.persistence.tables import RATE_WINDOWS, Moment

_W = RATE_WINDOWS.c
_COLUMNS = (
    _W.key,
    _W.requests,
    _W.tokens,
    _W.at,
    _W.per_call,
    _W.closed_until,
    _W.requests_per_minute,
    _W.tokens_per_minute,
)
HELD = select(*_COLUMNS).where(_W.key == bindparam("key")).with_for_update()
ALL = select(*_COLUMNS).order_by(_W.key)
KEEP = (
    update(RATE_WINDOWS)
    .where(_W.key == bindparam("k"))
    .values(
        requests=bindparam("requests"),
        tokens=bindparam("tokens"),
        per_call=bindparam("per_call"),
        at=bindparam("at", type_=Moment()),
        closed_until=bindparam("closed_until", type_=Moment()),
        requests_per_minute=bindparam("rpm"),
        tokens_per_minute=bindparam("tpm"),
    )
)


def held_window(conn: Connection, limit: RateLimit, now: datetime) -> RateWindow:
    """The key's window, its row locked until the transaction ends (made, full, on first use)."""
    rows = conn.execute(HELD, {"key": limit.key}).all()
    if not rows:
        full = RateWindow.full(limit, now)
        insert = postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert
        conn.execute(
            insert(RATE_WINDOWS)
            .values(
                key=full.key,
                requests=full.requests,
                tokens=full.tokens,
                per_call=0.0,
                at=full.at,
                requests_per_minute=full.requests_per_minute,
                tokens_per_minute=full.tokens_per_minute,
            )
            .on_conflict_do_nothing(index_elements=["key"])
        )
        rows = conn.execute(HELD, {"key": limit.key}).all()  # another's, had it made the row first
    return _window(rows[0])


def keep_window(conn: Connection, window: RateWindow) -> None:
    lean.execute(
        conn,
        KEEP,
        {
            "k": window.key,
            "requests": window.requests,
            "tokens": window.tokens,
            "per_call": window.per_call,
            "at": window.at,
            "closed_until": window.closed_until,
            "rpm": window.requests_per_minute,
            "tpm": window.tokens_per_minute,
        },
    )


def _window(row: tuple[object, ...]) -> RateWindow:
    key, requests, tokens, at, per_call, closed_until, rpm, tpm = row
    return RateWindow(
        str(key),
        float(requests),  # type: ignore[arg-type]
        float(tokens),  # type: ignore[arg-type]
        at,  # type: ignore[arg-type]
        float(per_call or 0.0),  # type: ignore[arg-type]
        closed_until,  # type: ignore[arg-type]
        None if rpm is None else int(rpm),  # type: ignore[call-overload]
        None if tpm is None else int(tpm),  # type: ignore[call-overload]
    )


class SqlRateWindows(RateWindows):
    """The windows for a runner's calls and for the read side, each change in a transaction of its own."""

    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def change(
        self, limit: RateLimit, now: datetime, how: Callable[[RateWindow], RateWindow | None]
    ) -> RateWindow:
        with translated(f"could not use the rate limit {limit.key}"), write_transaction(self._engine) as conn:
            window = held_window(conn, limit, now)
            changed = how(window)
            if changed is not None:
                keep_window(conn, changed)
                return changed
            return window

    def windows(self) -> list[RateWindow]:
        with translated("could not read the rate limits"), read_connection(self._engine) as conn:
            return [_window(tuple(row)) for row in conn.execute(ALL).all()]
