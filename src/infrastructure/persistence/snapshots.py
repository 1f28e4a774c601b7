"""The SnapshotStore port on SQLAlchemy: one row per board, the latest state as JSON."""

from __future__ import annotations

import dataclasses
import zlib
from collections.abc import Sequence
from datetime import UTC, datetime
from functools import cache

from pydantic import TypeAdapter, ValidationError
from sqlalchemy import Engine, select

from blackboard.application.ports import SnapshotStore
from blackboard.domain.signals import AgentSignal
from blackboard.infrastructure.persistence.engine import read_connection, write_transaction
from blackboard.infrastructure.persistence.tables import SNAPSHOTS

# Changes whenever AgentSignal's fields do, so a snapshot of an older shape is ignored, not misread.
SCHEMA = zlib.crc32(",".join(f.name for f in dataclasses.fields(AgentSignal)).encode()) & 0x7FFFFFFF


class SqlSnapshotStore(SnapshotStore):
    def __init__(self, engine: Engine) -> None:
        self._engine = engine

    def get(self, blackboard_id: str) -> tuple[int, list[AgentSignal]] | None:
        with read_connection(self._engine) as conn:
            row = conn.execute(select(SNAPSHOTS).where(SNAPSHOTS.c.stream_id == blackboard_id)).one_or_none()
        if row is None or row.schema_version != SCHEMA:
            return None
        try:
            return row.version, _codec().validate_json(row.state)
        except ValidationError:
            return None  # disposable: the events are the truth

    def save(self, blackboard_id: str, version: int, signals: Sequence[AgentSignal]) -> None:
        values = {
            "stream_id": blackboard_id,
            "version": version,
            "schema_version": SCHEMA,
            "state": _codec().dump_json(list(signals)).decode(),
            "taken_at": datetime.now(UTC),
        }
        if self._engine.dialect.name == "postgresql":  # imported here: each dialect module is costly
            from sqlalchemy.dialects.postgresql import insert
        else:
            from sqlalchemy.dialects.sqlite import insert
        statement = insert(SNAPSHOTS).values(values)
        statement = statement.on_conflict_do_update(
            index_elements=[SNAPSHOTS.c.stream_id],
            set_={k: statement.excluded[k] for k in values if k != "stream_id"},
            where=SNAPSHOTS.c.version < statement.excluded.version,
        )
        with write_transaction(self._engine) as conn:
            conn.execute(statement)


@cache
def _codec() -> TypeAdapter[list[AgentSignal]]:
    """Built on first use: building it costs a CLI call tens of milliseconds."""
    return TypeAdapter(list[AgentSignal])
