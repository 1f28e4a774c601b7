"""Waking waiters with PostgreSQL LISTEN/NOTIFY: each append notifies in its own transaction.

A waiter listens on a connection of its own; each notification carries the position of the last
event its append stored. When the connection is (re)opened the waiter checks the log once LISTEN
is in place, so an append that committed in between is seen either in the log or as a
notification: no wake-up is lost. From then on every commit arrives as a notification on that
connection (queued there while nobody waits), so a wait costs no query at all. A lost connection
is reopened on the next wait, and the caller reads the log from its own position, so whatever was
appended meanwhile is caught up.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from sqlalchemy import Engine

from blackboard.application.ports import EventStore, LogNotifier
from blackboard.infrastructure.persistence.postgres import NOTIFY_CHANNEL

logger = logging.getLogger(__name__)


class PostgresNotifier(LogNotifier):
    def __init__(self, engine: Engine, store: EventStore) -> None:
        self._conninfo = engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
        self._store = store
        self._connection: Any = None
        self._seen = 0  # the highest position a notification (or the check on connecting) has shown
        self._lock = threading.Lock()  # one listening connection, one waiter on it at a time

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
                position = _position(note.payload)
                if position is None:  # not one of ours: it cannot tell the position
                    return None
                self._seen = max(self._seen, position)
            return self._seen
        except Exception:  # noqa: BLE001 - a lost connection: the next wait reopens it
            return None
        finally:
            self._lock.release()

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
                    self._seen = self._store.last_position()
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
                        position = _position(note.payload)
                        if position is None:  # not one of ours: say "something happened"
                            return True
                        self._seen = max(self._seen, position)
            except Exception as exc:  # noqa: BLE001 - a lost connection: reopen next time, caller re-reads
                logger.warning("lost the LISTEN connection (%s); reconnecting", exc)
                self.close()
                return False
            return True
        finally:
            self._lock.release()

    def _listening(self) -> tuple[Any, bool]:
        if self._connection is not None and not self._connection.closed:
            return self._connection, False
        import psycopg

        self._connection = psycopg.connect(self._conninfo, autocommit=True)
        self._connection.execute(f"LISTEN {NOTIFY_CHANNEL}")
        return self._connection, True

    def close(self) -> None:
        if self._connection is not None:
            try:
                self._connection.close()
            finally:
                self._connection = None


def _position(payload: str) -> int | None:
    try:
        return int(payload)
    except ValueError:
        return None
