"""Live workers in memory: the PresenceStore port for tests and embedding programs without a database."""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import datetime

from blackboard.application.presence import PresenceStore
from blackboard.domain.presence import WorkerPresence


class InMemoryPresenceStore(PresenceStore):
    def __init__(self) -> None:
        self._rows: dict[str, WorkerPresence] = {}
        self._lock = threading.Lock()

    def beat(self, worker: WorkerPresence) -> None:
        with self._lock:
            self._rows[worker.worker_id] = worker

    def stopped(self, worker_id: str, at: datetime) -> None:
        with self._lock:
            if (row := self._rows.get(worker_id)) is not None:
                self._rows[worker_id] = replace(row, stopped_at=at, last_beat=at, running=())

    def workers(self) -> list[WorkerPresence]:
        with self._lock:
            return sorted(self._rows.values(), key=lambda w: (w.agent_id, w.worker_id))

    def forget(self, gone_before: datetime) -> int:
        with self._lock:
            gone = [k for k, w in self._rows.items() if w.live_until < gone_before]
            for key in gone:
                del self._rows[key]
            return len(gone)
