"""The processes driving solve runs on SQLAlchemy: the SolveProcesses port over the `solve_processes` table.

A beat is an UPDATE of the run's row guarded by the holder's token, in a write transaction of its own: a
process writes only the row it holds, and finds out it no longer holds it (another process resumed the run)
when its update changes nothing. Taking a row (a start, a resume) replaces it whoever held it.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime, timedelta

from sqlalchemy import Engine, select, update
from sqlalchemy.engine import Row

from blackboard.application.solve.ports import SolveProcesses
from blackboard.domain.presence import SolveProcess
from blackboard.infrastructure.persistence.engine import read_connection, write_transaction
from blackboard.infrastructure.persistence.event_store import translated
from blackboard.infrastructure.persistence.tables import SOLVE_PROCESSES as ROWS


class SqlSolveProcesses(SolveProcesses):
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def take(self, process: SolveProcess) -> None:
        row = _row(process)
        with (
            translated("could not record a solve run's process", None),
            write_transaction(self._engine) as conn,
        ):
            changed = conn.execute(update(ROWS).where(*_key(process)).values(row)).rowcount
            if not changed:
                conn.execute(ROWS.insert().values(row))

    def beat(self, process: SolveProcess) -> bool:
        with translated("could not record a solve run's beat", None), write_transaction(self._engine) as conn:
            changed = conn.execute(
                update(ROWS)
                .where(*_key(process), ROWS.c.holder == process.holder)
                .values(last_beat_at=process.last_beat, stopped_at=None)
            ).rowcount
        return bool(changed)

    def stopped(self, blackboard_id: str, run_id: str, holder: str, at: datetime) -> None:
        with translated("could not record a solve run's stop", None), write_transaction(self._engine) as conn:
            conn.execute(
                update(ROWS)
                .where(
                    ROWS.c.blackboard_id == blackboard_id, ROWS.c.run_id == run_id, ROWS.c.holder == holder
                )
                .values(stopped_at=at, last_beat_at=at)
            )

    def of(self, blackboard_id: str, run_ids: Collection[str]) -> dict[str, SolveProcess]:
        if not run_ids:
            return {}
        query = select(ROWS).where(ROWS.c.blackboard_id == blackboard_id, ROWS.c.run_id.in_(list(run_ids)))
        with (
            translated("could not read the solve runs' processes", None),
            read_connection(self._engine) as conn,
        ):
            return {row.run_id: _process(row) for row in conn.execute(query)}


def _key(process: SolveProcess) -> tuple[object, ...]:
    return (ROWS.c.blackboard_id == process.blackboard_id, ROWS.c.run_id == process.run_id)


def _row(process: SolveProcess) -> dict[str, object]:
    return {
        "blackboard_id": process.blackboard_id,
        "run_id": process.run_id,
        "holder": process.holder,
        "host": process.host,
        "pid": process.pid,
        "started_at": process.started_at,
        "last_beat_at": process.last_beat,
        "beat_seconds": process.beat_every.total_seconds(),
        "stopped_at": process.stopped_at,
    }


def _process(row: Row) -> SolveProcess:
    return SolveProcess(
        blackboard_id=row.blackboard_id,
        run_id=row.run_id,
        holder=row.holder,
        host=row.host,
        pid=row.pid,
        started_at=row.started_at,
        last_beat=row.last_beat_at,
        beat_every=timedelta(seconds=row.beat_seconds),
        stopped_at=row.stopped_at,
    )
