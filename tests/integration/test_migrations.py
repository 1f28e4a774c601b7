"""Migrations: they build what the models describe, on both databases, from every entry point."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.engine import make_url

from blackboard.infrastructure.composition.settings import BlackboardSettings, store_settings
from blackboard.infrastructure.persistence.engine import make_engine
from blackboard.infrastructure.persistence.knowledge.search import outside_models
from blackboard.infrastructure.persistence.schema import (
    HEAD,
    current_revision,
    ensure_schema,
    migrations_folder,
    upgrade,
)
from blackboard.infrastructure.persistence.tables import metadata
from tests.conftest import PG_ADMIN_URL

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def test_the_models_and_the_migrations_agree(sql_engine):
    """What `alembic check` checks: autogenerate finds nothing to add after `upgrade head`."""
    with sql_engine.connect() as conn:
        differences = compare_metadata(
            MigrationContext.configure(conn, opts={"compare_type": True, "include_name": outside_models}),
            metadata,
        )

    assert differences == []


def test_head_names_the_newest_migration():
    config = Config()
    config.set_main_option("script_location", str(migrations_folder()))

    assert ScriptDirectory.from_config(config).get_current_head() == HEAD


def test_the_embedded_database_creates_and_migrates_itself_on_first_use(tmp_path):
    engine = make_engine(
        store_settings(BlackboardSettings(db=f"sqlite:///{tmp_path / 'deep' / 'dir' / 'b.db'}"))
    )

    ensure_schema(engine)
    ensure_schema(engine)  # a second time is a no-op

    assert current_revision(engine) == HEAD
    with engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"


def test_alembic_upgrade_head_and_blackboard_db_upgrade_both_migrate(tmp_path):
    for name, argv in {
        "a.db": [str(BIN / "alembic"), "upgrade", "head"],
        "b.db": [str(BIN / "blackboard"), "db", "upgrade"],
    }.items():
        url = f"sqlite:///{tmp_path / name}"
        done = subprocess.run(
            argv,
            cwd=ROOT,
            env={**os.environ, "BLACKBOARD_DB": url},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert current_revision(make_engine(store_settings(BlackboardSettings(db=url)))) == HEAD


def test_blackboard_db_upgrade_works_on_postgresql(pg_database_url):
    done = subprocess.run(
        [str(BIN / "blackboard"), "--db", pg_database_url, "db", "upgrade"],
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert done.returncode == 0, done.stderr
    assert f"revision {HEAD}" in done.stdout


def test_upgrading_from_the_first_revision_keeps_the_signals(tmp_path):
    engine = make_engine(store_settings(BlackboardSettings(db=f"sqlite:///{tmp_path / 'old.db'}")))
    upgrade(engine, "0001")
    with engine.begin() as conn:
        conn.exec_driver_sql(
            "INSERT INTO blackboard_signals (signal_id, blackboard_id, signal_type, payload_json, target_capabilities,"
            " posted_by, status, created_at, version, after_json, waiting_json, waiting) VALUES ('sig-0000000c',"
            " 'bb', 'RESEARCH', '{}', '[]', 'ps', 'POSTED', '2026-01-04 00:00:00', 1, '[]', '[]', 0)"
        )

    ensure_schema(engine)

    assert current_revision(engine) == HEAD
    with engine.connect() as conn:
        row = conn.exec_driver_sql("SELECT signal_id, retry_of, claim_token FROM blackboard_signals").one()
    assert tuple(row) == ("sig-0000000c", None, None)


def engine_at(database: str, tmp_path: Path, revision: str) -> Iterator[Engine]:
    """A database of its own (on PostgreSQL too: the run's shared one is at head), migrated to `revision`."""
    if database == "sqlite":
        url, drop = f"sqlite:///{tmp_path / f'at-{revision}.db'}", None
    else:
        name = f"blackboard_test_{uuid.uuid4().hex[:10]}"
        admin = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        url, drop = make_url(PG_ADMIN_URL).set(database=name).render_as_string(hide_password=False), name
    engine = make_engine(store_settings(BlackboardSettings(db=url)))
    upgrade(engine, revision)
    yield engine
    engine.dispose()
    if drop:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{drop}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def engine_at_0006(request, tmp_path) -> Iterator[Engine]:
    yield from engine_at(request.param, tmp_path, "0006")


@pytest.fixture(params=["sqlite", "postgresql"])
def engine_at_0020(request, tmp_path) -> Iterator[Engine]:
    yield from engine_at(request.param, tmp_path, "0020")


def test_upgrading_puts_the_capability_index_in_one_case_and_keeps_the_signal_s_targets(engine_at_0006):
    engine = engine_at_0006
    with engine.begin() as conn:
        conn.exec_driver_sql(
            "INSERT INTO blackboard_signals (signal_id, blackboard_id, signal_type, payload_json, target_capabilities,"
            " posted_by, status, created_at, version, after_json, waiting_json, waiting) VALUES ('sig-0000000d',"
            " 'bb', 'REVIEW', '{}', '[\"code-review\", \"Code-Review\", \"REVIEW\"]', 'ps', 'POSTED',"
            " '2026-01-04 00:00:00', 1, '[]', '[]', 0)"
        )
        for capability in ("code-review", "Code-Review", "REVIEW"):
            conn.exec_driver_sql(
                f"INSERT INTO signal_capabilities (signal_id, capability) VALUES ('sig-0000000d', '{capability}')"
            )

    ensure_schema(engine)

    with engine.connect() as conn:
        rows = (
            conn.exec_driver_sql("SELECT capability FROM signal_capabilities ORDER BY capability")
            .scalars()
            .all()
        )
        targets = conn.exec_driver_sql("SELECT target_capabilities FROM blackboard_signals").scalar()
    assert rows == ["CODE-REVIEW", "REVIEW"]
    assert targets == '["code-review", "Code-Review", "REVIEW"]'


def test_upgrading_numbers_the_entries_of_the_signals_already_there(engine_at_0020):
    """Migration 0021: each row's entry number from its payload's `e-N` (one past 64 bits left NULL), so the
    next post that leaves its entry id out is numbered past every signal the board held before the upgrade."""
    engine = engine_at_0020
    with engine.begin() as conn:
        for n, (board, entry) in enumerate(
            [("bb", "e-7"), ("bb", "e-12"), ("bb", "e-" + "9" * 30), ("cc", "e-3")]
        ):
            conn.exec_driver_sql(
                "INSERT INTO blackboard_signals (signal_id, blackboard_id, signal_type, payload_json,"
                " target_capabilities, posted_by, status, created_at, version, after_json, waiting_json, waiting)"
                f" VALUES ('sig-0000000{n}', '{board}', 'RESEARCH',"
                f' \'{{"ps_id": "{board}", "entry_id": "{entry}", "topic": "t"}}\', \'[]\', \'ps\','
                " 'POSTED', '2026-01-04 00:00:00', 1, '[]', '[]', 0)"
            )

    ensure_schema(engine)

    with engine.connect() as conn:
        numbers = dict(conn.exec_driver_sql("SELECT signal_id, entry_number FROM blackboard_signals").all())
    assert numbers == {"sig-00000000": 7, "sig-00000001": 12, "sig-00000002": None, "sig-00000003": 3}
