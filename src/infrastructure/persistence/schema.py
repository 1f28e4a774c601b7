"""Creating and upgrading the schema with alembic; the embedded default upgrades itself on first use."""

from __future__ import annotations

import logging
from pathlib import Path

from sqlalchemy import Engine, text
from sqlalchemy.exc import DBAPIError

from blackboard.infrastructure.persistence.dialect import dialect_of
from blackboard.infrastructure.persistence.engine import write_transaction

HEAD = "0013"  # the newest revision in migrations/versions; a test keeps the two in step


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


def ensure_schema(engine: Engine) -> None:
    """Upgrade when the database is not at HEAD: costs one query when it already is."""
    if current_revision(engine) != HEAD:
        upgrade(engine)
