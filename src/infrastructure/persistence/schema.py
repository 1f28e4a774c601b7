"""Creating and upgrading the schema with alembic; the embedded default upgrades itself on first use."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import Connection, Engine, insert, select, text
from sqlalchemy.exc import DBAPIError

from blackboard.infrastructure.persistence.dialect import dialect_of
from blackboard.infrastructure.persistence.engine import write_transaction

HEAD = "0029"  # the newest revision in migrations/versions; a test keeps the two in step
# The oldest release that may run against a database at HEAD (docs/persistence.md, "Mixed versions"):
# raise it with a migration that older code would misread, or when this release writes an event
# schema older readers would stop at and they must not run beside it at all.
OLDEST_READER = (
    "0.2.0"  # from 0024: every post's payload carries `labels`, which 0.1.0 refuses when it reads a row
)


def migrations_folder() -> Path:
    """Where the alembic scripts are: inside the installed package (`blackboard.migrations`)."""
    import blackboard.migrations

    return Path(blackboard.migrations.__file__).parent


def current_revision(engine: Engine) -> str | None:
    """The database's alembic revision; None before the first migration (one query, no reflection)."""
    with engine.connect() as conn:
        try:
            return conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
        except DBAPIError:  # no such table yet
            return None


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Run the migrations up to `revision` on this engine's database."""
    # whichever command comes first migrates: alembic's INFO lines are not that command's (a worker's log)
    logging.getLogger("alembic").setLevel(logging.WARNING)
    from alembic import command  # alembic is imported only when a migration runs
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", str(migrations_folder()))
    with write_transaction(engine) as conn:  # one migrator at a time; the others find it done
        dialect_of(engine).hold_migrations(conn)
        config.attributes["connection"] = conn
        command.upgrade(config, revision)
        if revision in ("head", HEAD):
            record_versions(conn)


opened: Engine | None = None  # the database this process opened last


def ensure_schema(engine: Engine) -> None:
    """Upgrade when the database is not at HEAD: costs one query when it already is. A database at a
    revision this code does not know (a newer release migrated it) is run beside only if that release
    says this one may (`blackboard_schema_versions.oldest_reader`); else UpgradeNeeded."""
    global opened
    opened = engine  # where a reader too old for an event looks up who wrote it (codec.too_old)
    revision = current_revision(engine)
    if revision == HEAD:
        return
    if revision is not None and not known_revision(revision):
        check_side_by_side(engine, revision)
        return
    upgrade(engine)


def known_revision(revision: str) -> bool:
    return any((migrations_folder() / "versions").glob(f"{revision}_*.py"))


def release() -> str:
    """This code's release (the installed package's version); read only when needed (~70 ms)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("agent-blackboard")
    except PackageNotFoundError:  # a source tree that was never installed
        return "0.0.0"


def _as_tuple(release_name: str) -> tuple[int, ...]:
    return tuple(int(part) if part.isdigit() else 0 for part in release_name.split("."))


def check_side_by_side(engine: Engine, revision: str) -> None:
    from blackboard.application.errors import UpgradeNeeded
    from blackboard.infrastructure.persistence.tables import SCHEMA_VERSIONS

    mine = release()
    try:
        with engine.connect() as conn:
            row = conn.execute(
                select(SCHEMA_VERSIONS.c.written_by, SCHEMA_VERSIONS.c.oldest_reader).where(
                    SCHEMA_VERSIONS.c.revision == revision
                )
            ).first()
    except DBAPIError:
        row = None
    if row is None:
        raise UpgradeNeeded(
            f"the database is at schema revision {revision}, newer than this blackboard ({mine}, revision "
            f"{HEAD}) and saying nothing of which releases may run beside it: upgrade blackboard to the "
            "release that migrated it"
        )
    if _as_tuple(mine) < _as_tuple(row.oldest_reader):
        raise UpgradeNeeded(
            f"the database is at schema revision {revision}, migrated by blackboard {row.written_by}, which "
            f"runs beside releases from {row.oldest_reader} on; this is {mine}: upgrade to "
            f"{row.written_by} (at least {row.oldest_reader})"
        )


def record_versions(conn: Connection) -> None:
    """After a migration to HEAD: this release applied it, the oldest that may run beside it, and each
    event type's schema version this release writes (kept as first written when already there)."""
    from blackboard.domain.events import EVENT_TYPES
    from blackboard.infrastructure.persistence.tables import EVENT_SCHEMAS, SCHEMA_VERSIONS

    mine = release()
    if conn.scalar(select(SCHEMA_VERSIONS.c.revision).where(SCHEMA_VERSIONS.c.revision == HEAD)) is None:
        conn.execute(
            insert(SCHEMA_VERSIONS).values(
                revision=HEAD, written_by=mine, oldest_reader=OLDEST_READER, applied_at=datetime.now(UTC)
            )
        )
    known = {
        tuple(row) for row in conn.execute(select(EVENT_SCHEMAS.c.event_type, EVENT_SCHEMAS.c.schema_version))
    }
    fresh = [
        {"event_type": name, "schema_version": cls.schema_version, "written_by": mine}
        for name, cls in EVENT_TYPES.items()
        if (name, cls.schema_version) not in known
    ]
    if fresh:
        conn.execute(insert(EVENT_SCHEMAS), fresh)


def written_by(engine: Engine, event_type: str, schema_version: int | None) -> str | None:
    """The first release that wrote this event type (at this schema version, if given), as recorded."""
    from blackboard.infrastructure.persistence.tables import EVENT_SCHEMAS

    query = select(EVENT_SCHEMAS.c.written_by).where(EVENT_SCHEMAS.c.event_type == event_type)
    if schema_version is not None:
        query = query.where(EVENT_SCHEMAS.c.schema_version == schema_version)
    try:
        with engine.connect() as conn:
            found = list(conn.scalars(query))
    except DBAPIError:
        return None
    return max(found, key=_as_tuple) if found else None
