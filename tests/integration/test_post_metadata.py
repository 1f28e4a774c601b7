"""How a tracer finds a signal's post (infrastructure/tracing/otel.py): the signal's row names its post's event
(`post_event_id`, migration 0017), so `post_metadata` reads it by two unique indexes in one statement,
without LIKE and without walking the board's events; the rows rebuilt from the log, and the rows of a
database migrated from 0016, name the same events."""

from __future__ import annotations

import json

from sqlalchemy import event, select, text

from blackboard.application.commands import PostSignal
from blackboard.application.projection import Projector
from blackboard.infrastructure.composition.settings import BlackboardSettings, store_settings
from blackboard.infrastructure.persistence.engine import make_engine
from blackboard.infrastructure.persistence.schema import ensure_schema, upgrade
from blackboard.infrastructure.persistence.tables import EVENTS, SIGNALS
from tests.integration.conftest import SqlBoard


def post(board: SqlBoard, topic: str, correlation_id: str | None = None) -> str:
    command = PostSignal(signal_type="RESEARCH", ps_id="ps-1", entry_id="e-1", topic=topic)
    if correlation_id is not None:
        command = command.model_copy(update={"correlation_id": correlation_id})
    return board.service.post_signal(command).signal_id


def posts_of(engine) -> dict[str, dict]:
    """signal id -> its post's metadata, read from the log itself."""
    with engine.connect() as conn:
        rows = conn.execute(
            select(EVENTS.c.data, EVENTS.c.metadata).where(EVENTS.c.event_type == "AgentSignalPosted")
        ).all()
    return {json.loads(data)["signal_id"]: json.loads(meta) for data, meta in rows}


def named_posts(engine) -> dict[str, str | None]:
    with engine.connect() as conn:
        return dict(conn.execute(select(SIGNALS.c.signal_id, SIGNALS.c.post_event_id)).all())


def test_a_claim_reads_its_post_by_the_row_s_key_in_one_statement_without_like(sql_engine):
    board = SqlBoard(sql_engine)
    signals = [post(board, f"topic {n}") for n in range(30)]  # a backlog: the first is 30 posts back
    expected = posts_of(sql_engine)
    statements: list[tuple[str, object]] = []

    def seen(conn, cursor, statement, parameters, context, executemany):
        statements.append((statement, parameters))

    event.listen(sql_engine, "before_cursor_execute", seen)
    try:
        found = board.store.post_metadata("ps-1", signals[0])
    finally:
        event.remove(sql_engine, "before_cursor_execute", seen)

    assert found == expected[signals[0]]
    assert found["correlation_id"] and found["causation_id"]
    ((read, parameters),) = [s for s in statements if "events" in s[0]]  # one statement
    assert "LIKE" not in read.upper() and "ORDER BY" not in read.upper()
    if sql_engine.dialect.name == "sqlite":  # both tables by a unique index: no scan of the board's events
        with sql_engine.connect() as conn:
            plan = " | ".join(
                str(row[-1]) for row in conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {read}", parameters)
            )
        assert "SCAN" not in plan and "events" in plan, plan
    assert board.store.post_metadata("ps-1", "sig-nothing") is None
    assert board.store.post_metadata("another-board", signals[0]) is None


def test_the_rows_rebuilt_from_the_log_name_the_same_posts(sql_engine):
    board = SqlBoard(sql_engine)
    for n in range(12):
        post(board, f"topic {n}", correlation_id=f"job-{n % 3}")
    live = named_posts(sql_engine)
    with sql_engine.connect() as conn:
        event_ids = set(conn.scalars(select(EVENTS.c.event_id)))
    assert len(live) == 12 and all(e in event_ids for e in live.values())

    Projector(board.store, board.read_model, page_size=5).rebuild()

    assert named_posts(sql_engine) == live
    for signal_id, metadata in posts_of(sql_engine).items():
        assert board.store.post_metadata("ps-1", signal_id) == metadata


def test_migration_0017_names_the_posts_of_the_rows_written_before_it(tmp_path):
    url = f"sqlite:///{tmp_path / 'at-0016.db'}"
    engine = make_engine(store_settings(BlackboardSettings(db=url)))
    ensure_schema(engine)
    board = SqlBoard(engine)
    for n in range(7):
        post(board, f"topic {n}")
    live = named_posts(engine)
    downgrade(engine, "0016")
    with engine.connect() as conn:
        assert "post_event_id" not in [
            c[1] for c in conn.exec_driver_sql("PRAGMA table_info(blackboard_signals)")
        ]

    upgrade(engine, "head")

    assert named_posts(engine) == live and None not in live.values()
    engine.dispose()


def downgrade(engine, revision: str) -> None:
    from alembic import command
    from alembic.config import Config

    from blackboard.infrastructure.persistence.schema import migrations_folder

    config = Config()
    config.set_main_option("script_location", str(migrations_folder()))
    with engine.begin() as conn:
        config.attributes["connection"] = conn
        command.downgrade(config, revision)
    with engine.connect() as conn:
        assert conn.execute(text("SELECT version_num FROM alembic_version")).scalar() == revision
