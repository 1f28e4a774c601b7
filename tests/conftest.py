"""Shared fixtures: real databases. SQLite on a temporary file; PostgreSQL in a fresh database per run (under
pytest-xdist, as `make test` runs, per process: each has its own database, temporary folders and ports)."""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Iterator

import pytest
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.engine import make_url

from blackboard.infrastructure.composition.settings import BlackboardSettings, store_settings
from blackboard.infrastructure.persistence.engine import make_engine
from blackboard.infrastructure.persistence.schema import ensure_schema
from blackboard.infrastructure.persistence.tables import metadata

# pytest caches each test module with its assertions rewritten (a .pyc in __pycache__), but writes it only where
# Python may write bytecode: with PYTHONDONTWRITEBYTECODE set (as in some shells and CI images) every process of
# every run rewrote all ~160 test modules again, about 5 s of its 9 s of collection here. The Makefile compiles
# src and migrations for the same reason; this file is imported before any test module, so the cache is written
# once and then read by each process of each later run.
sys.dont_write_bytecode = False

# Under pytest-xdist (`make test`) the tests of a file marked `one_process` run on one process, one after the
# other; every other test goes to whichever process is free (tests/scheduling.py, docs/testing.md).
pytest_plugins = ["tests.scheduling"]


# The folders whose tests run longest (Claude Code runs, `solve`, the demo, the racing processes, the rebuilds)
# go first: the processes hand out work in this order, so a long test starts early instead of ending the run
# alone while the other processes sit idle. Files keep their order inside a folder, and tests inside a file.
LONGEST_FIRST = ("tests/plugin/", "tests/runners/", "tests/integration/")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        return next((n for n, folder in enumerate(LONGEST_FIRST) if item.nodeid.startswith(folder)), 99)

    items.sort(key=rank)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    """As soon as a test module of this run has imported the CLI fork server (tests/cli_server.py), start it, in
    the background: its start (about 2.5 s of CPU importing what the commands import) then overlaps the rest of
    the collection instead of landing in the setup of whichever test calls the CLI first (on a loaded machine,
    20 s of one test's setup). A run that imports no such module (unit tests) starts none."""
    cli_server = sys.modules.get("tests.cli_server")
    if cli_server is not None and cli_server.SERVER is not None:
        cli_server.SERVER.warm()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Stop this process's CLI fork server (and multiprocessing's) and wait for it, so that the CPU time of the calls
    it forked counts as this process's children's (what `time make test` reports) instead of vanishing with it."""
    from tests.cli_server import SERVER
    from tests.processes import stop

    if SERVER is not None:
        SERVER.close()
    stop()  # the racing processes' fork server (tests/processes.py), for the same reason


# The machine's PostgreSQL (trust auth). CI must reach it: a failure to connect fails the tests.
PG_ADMIN_URL = os.environ.get("BLACKBOARD_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/test")


@pytest.fixture
def sqlite_url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'blackboard.db'}"


@pytest.fixture
def sqlite_engine(sqlite_url) -> Iterator[Engine]:
    engine = make_engine(store_settings(BlackboardSettings(db=sqlite_url)))
    ensure_schema(engine)
    yield engine
    engine.dispose()


@pytest.fixture(scope="session")
def pg_database_url() -> Iterator[str]:
    """A database of its own for this test run, dropped at the end."""
    yield from _own_pg_database()


@pytest.fixture
def pg_private_url() -> Iterator[str]:
    """A database of this test's own, dropped after it: for a test that leaves what no other may see (a
    schema revision of a newer release, events of unknown types)."""
    yield from _own_pg_database()


def _own_pg_database() -> Iterator[str]:
    name = f"blackboard_test_{uuid.uuid4().hex[:10]}"
    admin = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    except Exception as exc:  # noqa: BLE001 - turned into a clear failure, never a skip
        pytest.fail(f"PostgreSQL at {PG_ADMIN_URL} is required for these tests: {exc}")
    url = make_url(PG_ADMIN_URL).set(database=name).render_as_string(hide_password=False)
    yield url
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


@pytest.fixture(scope="session")
def pg_session_engine(pg_database_url) -> Iterator[Engine]:
    # tests terminate connections (a server restart, as clients see it): the pool must not hand out dead ones
    engine = make_engine(store_settings(BlackboardSettings(db=pg_database_url, pool_pre_ping=True)))
    ensure_schema(engine)
    yield engine
    engine.dispose()


@pytest.fixture
def pg_engine(pg_session_engine) -> Engine:
    """The run's database, emptied before each test."""
    tables = ", ".join([t.name for t in metadata.sorted_tables] + ["entry_search"])  # + the search index
    with pg_session_engine.begin() as conn:
        conn.execute(text(f"TRUNCATE {tables} RESTART IDENTITY"))
    return pg_session_engine


@pytest.fixture(params=["sqlite", "postgresql"])
def sql_engine(request) -> Engine:
    """Each test that asks for it runs once on a SQLite file and once on PostgreSQL."""
    return request.getfixturevalue("sqlite_engine" if request.param == "sqlite" else "pg_engine")
