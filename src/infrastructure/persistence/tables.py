"""Typed SQLAlchemy tables: the event log, snapshots, the signal read model and its checkpoints."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import BigInteger, DateTime, Dialect, Index, Integer, MetaData, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# SQLite only makes INTEGER PRIMARY KEY an alias of the rowid (autoincrementing); PostgreSQL gets BIGINT.
Position = BigInteger().with_variant(Integer(), "sqlite")


class Moment(TypeDecorator[datetime]):
    """A timezone-aware instant, stored in UTC; SQLite, which keeps no zone, gives it back as UTC."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> Any:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetimes are refused: every stored time must carry its zone")
        return value.astimezone(UTC) if dialect.name != "sqlite" else value.astimezone(UTC).replace(tzinfo=None)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)



class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class StoredEvent(Base):
    """One fact. `position` is the global commit order; (stream_id, version) is the optimistic lock."""

    __tablename__ = "events"
    __table_args__ = (UniqueConstraint("stream_id", "version"),)

    position: Mapped[int] = mapped_column(Position, primary_key=True, autoincrement=True)
    event_id: Mapped[str] = mapped_column(String(36), unique=True)
    stream_id: Mapped[str] = mapped_column(String(200))
    version: Mapped[int] = mapped_column(Integer)
    event_type: Mapped[str] = mapped_column(String(100))
    schema_version: Mapped[int] = mapped_column(Integer)
    data: Mapped[str] = mapped_column(Text)
    meta: Mapped[str] = mapped_column("metadata", Text)
    occurred_at: Mapped[datetime] = mapped_column(Moment)
    recorded_at: Mapped[datetime] = mapped_column(Moment)


class Snapshot(Base):
    """The latest saved state of one board, so a cold load reads only the events after it."""

    __tablename__ = "snapshots"

    stream_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    version: Mapped[int] = mapped_column(Integer)
    schema_version: Mapped[int] = mapped_column(Integer)
    state: Mapped[str] = mapped_column(Text)
    taken_at: Mapped[datetime] = mapped_column(Moment)


class SignalRow(Base):
    """The read model of one signal (design §11.1, plus board, dependencies and result)."""

    __tablename__ = "blackboard_signals"
    __table_args__ = (
        Index("ix_blackboard_signals_open", "status", "waiting", "created_at"),
        Index("ix_blackboard_signals_board", "blackboard_id", "created_at"),
        Index("ix_blackboard_signals_type", "signal_type", "created_at"),
    )

    signal_id: Mapped[str] = mapped_column(String(12), primary_key=True)
    blackboard_id: Mapped[str] = mapped_column(String(200))
    signal_type: Mapped[str] = mapped_column(String(20))
    payload_json: Mapped[str] = mapped_column(Text)
    target_capabilities: Mapped[str] = mapped_column(Text)  # JSON array, also in signal_capabilities
    posted_by: Mapped[str] = mapped_column(String(200))
    claimed_by: Mapped[str | None] = mapped_column(String(200))
    status: Mapped[str] = mapped_column(String(12))
    created_at: Mapped[datetime] = mapped_column(Moment)
    claimed_at: Mapped[datetime | None] = mapped_column(Moment)
    completed_at: Mapped[datetime | None] = mapped_column(Moment)
    result_json: Mapped[str | None] = mapped_column(Text)
    version: Mapped[int] = mapped_column(Integer)
    after_json: Mapped[str] = mapped_column(Text)  # JSON array of upstream signal ids
    waiting_json: Mapped[str] = mapped_column(Text)  # JSON array of upstreams not yet completed
    waiting: Mapped[int] = mapped_column(Integer)  # len(waiting_json), so "claimable" is indexable
    claimable_since: Mapped[datetime | None] = mapped_column(Moment)
    dedupe_key: Mapped[str | None] = mapped_column(String(200))


class SignalCapability(Base):
    """One target capability of a signal: the index behind "open signals for these capabilities"."""

    __tablename__ = "signal_capabilities"
    __table_args__ = (Index("ix_signal_capabilities_capability", "capability", "signal_id"),)

    signal_id: Mapped[str] = mapped_column(String(12), primary_key=True)
    capability: Mapped[str] = mapped_column(String(200), primary_key=True)


class SignalDependency(Base):
    """`signal_id` comes after `upstream_id`: lets a completion find its dependants."""

    __tablename__ = "signal_dependencies"
    __table_args__ = (Index("ix_signal_dependencies_upstream", "upstream_id"),)

    signal_id: Mapped[str] = mapped_column(String(12), primary_key=True)
    upstream_id: Mapped[str] = mapped_column(String(12), primary_key=True)


class ProjectionCheckpoint(Base):
    """The last global position a projection has folded in."""

    __tablename__ = "projection_checkpoints"

    name: Mapped[str] = mapped_column(String(100), primary_key=True)
    position: Mapped[int] = mapped_column(Position)
