"""The webhooks' outbox on SQLAlchemy (`webhook_deliveries`, docs/webhooks.md): which gates are owed an
announcement, the deliveries made for them, and taking the due ones so that no two processes send one.

A delivery is made once per announcement and URL (a unique key: two processes that find the same gate open
insert one row). A process takes due rows in a short write transaction (PostgreSQL: `FOR UPDATE SKIP LOCKED`,
so takers pass each other by; SQLite: its one writer), moving their next try past the send's lease, and
records the answer in another; it sends between the two, holding no lock while the receiver answers.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Engine, func, select, update
from sqlalchemy.engine import Connection, Row

from blackboard.domain.signal_kinds import SignalStatus
from blackboard.domain.signals import AgentSignal
from blackboard.domain.webhooks import GATE_OPENED, PENDING, ending_of, opens_now
from blackboard.infrastructure.persistence.codec import signal_from_row
from blackboard.infrastructure.persistence.engine import read_connection, write_transaction
from blackboard.infrastructure.persistence.event_store import translated
from blackboard.infrastructure.persistence.tables import (
    DEPENDENCIES,
    SIGNALS,
    WEBHOOK_DELIVERIES,
    open_gate_where,
)

D = WEBHOOK_DELIVERIES
MAX_LISTED = 1000  # `webhooks --blackboard ID` lists a board's newest deliveries, at most this many
PAGE = 500  # deliveries made by one INSERT


@dataclass(frozen=True, slots=True)
class Announcement:
    """A gate owed an announcement (`event`) at each of `urls`, with the work that waits on it."""

    event: str | None  # None: the gate ended in a way no announcement names; its opening is settled alone
    gate: AgentSignal
    waiting: tuple[AgentSignal, ...]
    urls: tuple[str, ...]


_Owed = tuple[str | None, AgentSignal, tuple[str, ...]]  # an announcement, its gate, the URLs owed it


@dataclass(frozen=True, slots=True)
class Delivery:
    """One row of the outbox."""

    delivery_id: int
    blackboard_id: str
    signal_id: str
    event: str
    url: str
    body: str
    status: str
    attempts: int
    last_status: int | None
    last_error: str | None
    created_at: datetime
    last_try_at: datetime | None
    next_try_at: datetime | None


class SqlWebhookOutbox:
    def __init__(self, engine: Engine) -> None:
        self._engine = engine
        self._postgres = engine.dialect.name == "postgresql"

    def owed(self, urls: Sequence[str], at: datetime) -> list[Announcement]:
        """The open gates some URL of `urls` has not been told of, and the gates announced open that have ended
        since (owed at each URL their opening went to)."""
        with (
            translated("could not read the gates owed a webhook", None),
            read_connection(self._engine) as conn,
        ):
            owed = self._opened(conn, urls, at) + self._ended(conn)
            waiting = self._waiting(conn, [g.signal_id for _, g, _ in owed])
        return [Announcement(e, g, tuple(waiting.get(g.signal_id, ())), u) for e, g, u in owed]

    def _opened(self, conn: Connection, urls: Sequence[str], at: datetime) -> list[_Owed]:
        """Open gates (their `--not-before` come) and the URLs not told of them yet."""
        told_of_it = (  # an open gate every URL was told of costs an index lookup, no row read out
            select(func.count())
            .where(D.c.signal_id == SIGNALS.c.signal_id, D.c.event == GATE_OPENED, D.c.url.in_(list(urls)))
            .scalar_subquery()
        )
        rows = conn.execute(select(SIGNALS).where(open_gate_where(), told_of_it < len(urls)))
        gates = [g for g in map(signal_from_row, rows) if opens_now(g, at)]
        told = self._told(conn, [g.signal_id for g in gates])
        owed = [(GATE_OPENED, g, tuple(u for u in urls if (g.signal_id, u) not in told)) for g in gates]
        return [(event, gate, untold) for event, gate, untold in owed if untold]

    def _ended(self, conn: Connection) -> list[_Owed]:
        """Gates told open that have ended since, with the URLs their opening went to."""
        ended: dict[str, tuple[AgentSignal, list[str]]] = {}
        for row in conn.execute(
            select(SIGNALS, D.c.url.label("webhook_url"))
            .join(D, D.c.signal_id == SIGNALS.c.signal_id)
            .where(
                D.c.gate_open.is_(True),
                D.c.event == GATE_OPENED,
                SIGNALS.c.status != SignalStatus.POSTED.value,
            )
        ):
            ended.setdefault(row.signal_id, (signal_from_row(row), []))[1].append(row.webhook_url)
        return [(ending_of(gate), gate, tuple(urls)) for gate, urls in ended.values()]

    def add(self, owed: Sequence[Announcement], bodies: Sequence[str], at: datetime) -> int:
        """A delivery of each announcement (with its body) to each of its URLs, unless one was made already
        (by another process: how many this one made is returned); the opening of each gate that ended is
        settled (no longer owed its end's announcement)."""
        rows = [
            _new_row(a, url, body, at)
            for a, body in zip(owed, bodies, strict=True)
            if a.event
            for url in a.urls
        ]
        ended = sorted({a.gate.signal_id for a in owed if a.event != GATE_OPENED})
        with translated("could not record a webhook delivery", None), write_transaction(self._engine) as conn:
            made = 0
            for page in range(0, len(rows), PAGE):  # one statement a page; a row made by another returns none
                insert = self._insert_new().values(rows[page : page + PAGE]).returning(D.c.delivery_id)
                made += len(conn.execute(insert).all())
            if ended:
                conn.execute(
                    update(D)
                    .where(D.c.signal_id.in_(ended), D.c.event == GATE_OPENED, D.c.gate_open.is_(True))
                    .values(gate_open=False)
                )
        return made

    def take_due(self, at: datetime, lease: timedelta, due_by: datetime, limit: int = 20) -> list[Delivery]:
        """Deliveries due by `due_by`, taken at `at`: each one's try counted and its next try moved past the
        lease, so no other process takes it while this one sends it (and another does, once the lease ends,
        if this process died sending it)."""
        query = (
            select(D)
            .where(D.c.status == PENDING, D.c.next_try_at <= due_by)
            .order_by(D.c.next_try_at, D.c.delivery_id)
            .limit(limit)
        )
        if not self._any_due(due_by):
            return []  # nothing due: no write transaction (on SQLite the one writer is the board's)
        if self._postgres:
            query = query.with_for_update(skip_locked=True)
        with (
            translated("could not take due webhook deliveries", None),
            write_transaction(self._engine) as conn,
        ):
            rows = conn.execute(query).all()
            if not rows:
                return []
            conn.execute(
                update(D)
                .where(D.c.delivery_id.in_([r.delivery_id for r in rows]))
                .values(attempts=D.c.attempts + 1, last_try_at=at, next_try_at=at + lease)
            )
        return [_delivery(r, attempts=r.attempts + 1, last_try_at=at, next_try_at=at + lease) for r in rows]

    def record(
        self,
        taken: Delivery,
        status: str,
        answer: int | None,
        error: str | None,
        next_try: datetime | None,
    ) -> bool:
        """How the try of `taken` ended; False (nothing written) when the row moved on without it (its lease
        ended and another process took it)."""
        with translated("could not record a webhook delivery", None), write_transaction(self._engine) as conn:
            return bool(
                conn.execute(
                    update(D)
                    .where(
                        D.c.delivery_id == taken.delivery_id,
                        D.c.attempts == taken.attempts,
                        D.c.status == PENDING,
                    )
                    .values(status=status, last_status=answer, last_error=error, next_try_at=next_try)
                ).rowcount
            )

    def next_due(self) -> datetime | None:
        """When the soonest pending delivery is due; None: none is pending."""
        with translated("could not read the webhook deliveries", None), read_connection(self._engine) as conn:
            return conn.scalar(select(func.min(D.c.next_try_at)).where(D.c.status == PENDING))

    def deliveries(self, blackboard_id: str) -> list[Delivery]:
        """A board's deliveries, oldest first (its newest MAX_LISTED)."""
        newest = (
            select(D)
            .where(D.c.blackboard_id == blackboard_id)
            .order_by(D.c.delivery_id.desc())
            .limit(MAX_LISTED)
        )
        with translated("could not read the webhook deliveries", None), read_connection(self._engine) as conn:
            return [_delivery(r) for r in reversed(conn.execute(newest).all())]

    def _any_due(self, due_by: datetime) -> bool:
        due = select(D.c.delivery_id).where(D.c.status == PENDING, D.c.next_try_at <= due_by).limit(1)
        with translated("could not read the webhook deliveries", None), read_connection(self._engine) as conn:
            return conn.scalar(due) is not None

    def _told(self, conn: Connection, signal_ids: list[str]) -> set[tuple[str, str]]:
        if not signal_ids:
            return set()
        found = conn.execute(
            select(D.c.signal_id, D.c.url).where(D.c.signal_id.in_(signal_ids), D.c.event == GATE_OPENED)
        )
        return {(s, u) for s, u in found}

    def _waiting(self, conn: Connection, signal_ids: list[str]) -> dict[str, list[AgentSignal]]:
        if not signal_ids:
            return {}
        found: dict[str, list[AgentSignal]] = {}
        for row in conn.execute(
            select(SIGNALS, DEPENDENCIES.c.upstream_id)
            .join(DEPENDENCIES, DEPENDENCIES.c.signal_id == SIGNALS.c.signal_id)
            .where(DEPENDENCIES.c.upstream_id.in_(sorted(set(signal_ids))))
            .order_by(SIGNALS.c.created_at, SIGNALS.c.signal_id)
        ):
            found.setdefault(row.upstream_id, []).append(signal_from_row(row))
        return found

    def _insert_new(self) -> Any:
        """An INSERT that leaves a delivery already made (the same gate, announcement and URL) as it is."""
        if self._postgres:
            from sqlalchemy.dialects.postgresql import insert
        else:
            from sqlalchemy.dialects.sqlite import insert
        return insert(D).on_conflict_do_nothing(index_elements=["signal_id", "event", "url"])


def _new_row(announced: Announcement, url: str, body: str, at: datetime) -> dict[str, Any]:
    return {
        "blackboard_id": announced.gate.blackboard_id,
        "signal_id": announced.gate.signal_id,
        "event": announced.event,
        "url": url,
        "body": body,
        "status": PENDING,
        "attempts": 0,
        "last_status": None,
        "last_error": None,
        "created_at": at,
        "last_try_at": None,
        "next_try_at": at,
        "gate_open": announced.event == GATE_OPENED,
    }


def _delivery(row: Row, **changed: Any) -> Delivery:
    values = {f.name: getattr(row, f.name) for f in fields(Delivery)}
    values.update(changed)
    return Delivery(**values)
