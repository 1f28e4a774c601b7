"""Alembic environment: the URL comes from BLACKBOARD_DB (or the caller's config), SQLite in batch mode."""

from __future__ import annotations

import os

from alembic import context
from sqlalchemy import Connection

from blackboard.infrastructure.composition.settings import BlackboardSettings, store_settings
from blackboard.infrastructure.persistence import DEFAULT_URL
from blackboard.infrastructure.persistence.engine import make_engine
from blackboard.infrastructure.persistence.knowledge.search import outside_models
from blackboard.infrastructure.persistence.tables import metadata

config = context.config
target_metadata = metadata


def run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=True,  # SQLite cannot ALTER most things; batch mode copies the table instead
        compare_type=True,
        include_name=outside_models,  # the search index's tables are each database's own (0015)
    )
    with context.begin_transaction():
        context.run_migrations()


def main() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:  # called from the application with a connection of its own
        run(connection)
        return
    url = config.get_main_option("sqlalchemy.url") or os.environ.get("BLACKBOARD_DB", DEFAULT_URL)
    engine = make_engine(store_settings(BlackboardSettings(db=url)))
    with engine.connect() as conn:
        run(conn)
    engine.dispose()


if context.is_offline_mode():
    raise SystemExit("offline (--sql) migrations are not supported; run against a database")
main()
