"""Waking waiters with PostgreSQL LISTEN/NOTIFY: each append notifies in its own transaction.

A waiter listens on a connection of its own; each notification carries the position of the last
event its append stored (and, for an append that only posted, the signals it made claimable:
notice.py). When the connection is (re)opened the waiter checks the log once LISTEN is in place, so
an append that committed in between is seen either in the log or as a notification: no wake-up is
lost. From then on every commit arrives as a notification on that connection (queued there while
nobody waits), so a wait costs no query at all. A lost connection is reopened on the next wait, and
the caller reads the log from its own position, so whatever was appended meanwhile is caught up.

Notifications arrive in commit order, which is the log's order (appends hold the log's lock to their
commit), and none is missed while the connection stays open: so the notices heard since the
connection opened tell every append past that point. The last few are kept (`news`), so a worker
that knew every claimable signal at some position learns what was posted and claimed since without a
query. A notification that is not the log's (an operator's `NOTIFY` on the channel) wakes the waiter
and is counted (`strays`), so the worker looks once; it leaves what the log's notices tell as it was.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from typing import Any

from sqlalchemy import Engine

from blackboard.application.ports import EventStore, LogNews, LogNotifier
from blackboard.domain.signals import Candidate
from blackboard.infrastructure.persistence import notice
from blackboard.infrastructure.persistence.postgres import NOTIFY_CHANNEL

logger = logging.getLogger(__name__)
KEPT = 256  # notices kept for `news`; a caller asking about older ones is told None (it queries)
UNHEARD = 2**62  # a position past any log: nothing is known to have been heard


class PostgresNotifier(LogNotifier):
    tells_news = True

    def __init__(self, engine: Engine, store: EventStore) -> None:
        self._conninfo = engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
        self._store = store
        self._connection: Any = None
        self._seen = 0  # the highest position a notification (or the check on connecting) has shown
        self._lock = threading.Lock()  # one listening connection, one waiter on it at a time
        self._state = threading.Lock()  # what was heard, read by `news` while a waiter holds `_lock`
        # the notices heard, oldest first; every append past `_heard_from` up to `_seen` is among them
        # (or dropped, at most up to `_forgotten`)
        self._notices: deque[notice.Notice] = deque()
        self._heard_from = UNHEARD
        self._forgotten = 0
        self._strays = 0  # notifications heard that were not the log's

    def seen(self) -> int | None:
        """The last position the notifications have shown, counting those queued on the connection
        (read without blocking, so a busy worker that seldom waits still knows where the log is).
        None while not listening, or once the connection is lost: appends may have gone unheard
        until the next wait reconnects and checks."""
        if not self._lock.acquire(blocking=False):  # another thread is waiting on the connection
            return None
        try:
            connection = self._connection
            if connection is None or connection.closed:
                return None
            for note in connection.notifies(timeout=0):
                self._heard(note.payload)  # one not ours is counted: it tells nothing of the position
            return self._seen
        except Exception:  # noqa: BLE001 - a lost connection: the next wait reopens it
            return None
        finally:
            self._lock.release()

    def strays(self) -> int:
        with self._state:
            return self._strays

    def news(self, after: int, upto: int) -> LogNews | None:
        """What the notices past `after` up to `upto` posted and claimed, if every append in between
        was heard and only posted or claimed; None otherwise. Reads only what `seen` or `wait` heard
        (call one first)."""
        with self._state:  # not the connection's lock: another thread may be waiting on it
            if after < max(self._heard_from, self._forgotten) or upto > self._seen:
                return None
            posted: list[Candidate] = []
            taken: set[str] = set()
            for heard in self._notices:
                if after < heard.position <= upto:
                    if isinstance(heard, notice.Moved):  # the log must be read to know
                        return None
                    posted.extend(heard.posted)
                    taken.update(heard.taken)
            return LogNews(tuple(posted), frozenset(taken))

    def wait(self, after: int, timeout: float) -> bool:
        # another thread waiting on the connection holds it: wait for it at most `timeout` (what it hears
        # moves `_seen` for this one too), so each waiter's own timeout holds however many wait at once
        deadline = time.monotonic() + timeout
        if not self._lock.acquire(timeout=max(0.0, timeout)):
            return False
        try:
            try:
                connection, fresh = self._listening()
                if fresh:  # appends that committed before LISTEN took effect sent nothing we can hear;
                    # and the log's end, read now, is what counts (not what an old connection heard)
                    end = self._store.last_position()
                    with self._state:
                        self._seen = end
                        self._notices.clear()
                        self._heard_from = end  # every append past it will be heard
            except Exception as exc:  # noqa: BLE001 - the database is down: wait a little, let the caller retry
                logger.warning("cannot listen for appends (%s); retrying", exc)
                self.close()
                time.sleep(min(timeout, 0.5))
                return False
            try:
                while self._seen <= after:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        return False
                    for note in connection.notifies(timeout=remaining, stop_after=1):
                        if not self._heard(note.payload):  # not one of ours: say "something happened"
                            return True
            except Exception as exc:  # noqa: BLE001 - a lost connection: reopen next time, caller re-reads
                logger.warning("lost the LISTEN connection (%s); reconnecting", exc)
                self.close()
                return False
            return True
        finally:
            self._lock.release()

    def _heard(self, payload: str) -> bool:
        """Note one notification (holding the lock); False for one that is not ours: counted as a
        stray, it leaves the notices as they were (every append of the log's is still heard)."""
        heard = notice.read(payload)
        with self._state:
            if heard is None:
                self._strays += 1
                return False
            self._seen = max(self._seen, heard.position)
            self._notices.append(heard)
            if len(self._notices) > KEPT:
                self._forgotten = self._notices.popleft().position
            return True

    def _listening(self) -> tuple[Any, bool]:
        if self._connection is not None and not self._connection.closed:
            return self._connection, False
        import psycopg

        with self._state:
            self._heard_from = UNHEARD  # until the check on connecting
        self._connection = psycopg.connect(self._conninfo, autocommit=True)
        self._connection.execute(f"LISTEN {NOTIFY_CHANNEL}")
        return self._connection, True

    def close(self) -> None:
        with self._state:
            self._heard_from = UNHEARD  # what is appended from now on may go unheard
        if self._connection is not None:
            try:
                self._connection.close()
            finally:
                self._connection = None
