"""Waking waiters with PostgreSQL LISTEN/NOTIFY: each append notifies in its own transaction.

A waiter listens on a connection of its own. It checks the log only once LISTEN is in place, so
an append that commits in between is seen either in the log or as a notification: no wake-up is
lost. A lost connection is reopened on the next wait, and the caller reads the log from its own
position, so whatever was appended meanwhile is caught up.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from sqlalchemy import Engine

from application.ports import EventStore, LogNotifier
from infrastructure.persistence.event_store import NOTIFY_CHANNEL

logger = logging.getLogger(__name__)


class PostgresNotifier(LogNotifier):
    def __init__(self, engine: Engine, store: EventStore) -> None:
        self._conninfo = engine.url.set(drivername="postgresql").render_as_string(hide_password=False)
        self._store = store
        self._connection: Any = None
        self._lock = threading.Lock()  # one listening connection, one waiter on it at a time

    def wait(self, after: int, timeout: float) -> None:
        with self._lock:
            deadline = time.monotonic() + timeout
            try:
                connection = self._listening()
            except Exception as exc:  # noqa: BLE001 - the database is down: wait a little, let the caller retry
                logger.warning("cannot listen for appends (%s); retrying", exc)
                time.sleep(min(timeout, 0.5))
                return
            if self._store.last_position() > after:  # appended before LISTEN took effect
                return
            try:
                for _ in connection.notifies(timeout=max(0.0, deadline - time.monotonic()), stop_after=1):
                    return
            except Exception as exc:  # noqa: BLE001 - a lost connection: reopen next time, caller re-reads
                logger.warning("lost the LISTEN connection (%s); reconnecting", exc)
                self.close()

    def _listening(self) -> Any:
        if self._connection is None or self._connection.closed:
            import psycopg

            self._connection = psycopg.connect(self._conninfo, autocommit=True)
            self._connection.execute(f"LISTEN {NOTIFY_CHANNEL}")
        return self._connection

    def close(self) -> None:
        if self._connection is not None:
            try:
                self._connection.close()
            finally:
                self._connection = None
