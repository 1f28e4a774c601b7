"""Live workers on SQLAlchemy: the PresenceStore port over the `worker_presence` table.

A beat is an upsert of one row (an UPDATE, then an INSERT when there was none: each worker writes only
its own row, so no two writers race for one), in a write transaction of its own, never in a board's.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta

from sqlalchemy import Engine, delete, func, or_, select, update
from sqlalchemy.engine import Row

from blackboard.application.presence import PresenceStore
from blackboard.domain.capabilities import AgentCapability, AgentProfile
from blackboard.domain.presence import MISSED_BEATS, WorkerPresence
from blackboard.infrastructure.persistence.engine import read_connection, write_transaction
from blackboard.infrastructure.persistence.event_store import translated
from blackboard.infrastructure.persistence.tables import WORKERS

EVERY_ROW = select(WORKERS).order_by(WORKERS.c.agent_id, WORKERS.c.worker_id)


class SqlPresenceStore(PresenceStore):
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def beat(self, worker: WorkerPresence) -> None:
        row = _row(worker)
        with translated("could not record a worker's beat", None), write_transaction(self._engine) as conn:
            changed = conn.execute(
                update(WORKERS).where(WORKERS.c.worker_id == worker.worker_id).values(row)
            ).rowcount
            if not changed:
                conn.execute(WORKERS.insert().values(worker_id=worker.worker_id, **row))

    def stopped(self, worker_id: str, at: datetime) -> None:
        with translated("could not record a worker's stop", None), write_transaction(self._engine) as conn:
            conn.execute(
                update(WORKERS)
                .where(WORKERS.c.worker_id == worker_id)
                .values(stopped_at=at, last_beat_at=at, running_json="[]")
            )

    def workers(self) -> list[WorkerPresence]:
        with translated("could not read the live workers", None), read_connection(self._engine) as conn:
            return [_presence(r) for r in conn.execute(EVERY_ROW)]

    def forget(self, gone_before: datetime) -> int:
        # a row's liveness lapses at most MISSED_BEATS beats after its last one: rows last seen well
        # before the cut-off are gone by any beat interval; stopped rows go by their stop
        with translated("could not forget gone workers", None), write_transaction(self._engine) as conn:
            longest = conn.execute(select(func.max(WORKERS.c.beat_seconds))).scalar() or 0.0
            cut = gone_before - timedelta(seconds=MISSED_BEATS * float(longest))
            return conn.execute(
                delete(WORKERS).where(
                    or_(
                        WORKERS.c.stopped_at < gone_before,
                        (WORKERS.c.stopped_at.is_(None)) & (WORKERS.c.last_beat_at < cut),
                    )
                )
            ).rowcount


def _row(worker: WorkerPresence) -> dict[str, object]:
    return {
        "agent_id": worker.agent_id,
        "host": worker.host,
        "pid": worker.pid,
        "started_at": worker.started_at,
        "last_beat_at": worker.last_beat,
        "beat_seconds": worker.beat_every.total_seconds(),
        "boards_json": json.dumps(list(worker.boards)),
        "capabilities_json": json.dumps([c.model_dump() for c in worker.agent.capabilities]),
        "threshold": worker.agent.threshold_or(0.0),
        "running_json": json.dumps([list(pair) for pair in worker.running]),
        "stopped_at": worker.stopped_at,
    }


def _presence(row: Row) -> WorkerPresence:
    profile = AgentProfile(
        agent_id=row.agent_id,
        capabilities=tuple(AgentCapability(**c) for c in json.loads(row.capabilities_json)),
        threshold=row.threshold,
    )
    return WorkerPresence(
        worker_id=row.worker_id,
        agent=profile,
        host=row.host,
        pid=row.pid,
        started_at=row.started_at,
        last_beat=row.last_beat_at,
        beat_every=timedelta(seconds=row.beat_seconds),
        boards=tuple(json.loads(row.boards_json)),
        running=tuple((str(s), str(b)) for s, b in json.loads(row.running_json)),
        stopped_at=row.stopped_at,
    )
