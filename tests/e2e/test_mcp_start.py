"""`blackboard mcp` answers `initialize` and the tool list before its database is migrated (docs/mcp.md,
"Starting"): a client such as Claude Code gives a server 30 seconds to start, and one that migrated first
could miss them under load, its tools then silently missing from the session. Driven by the MCP SDK's own
stdio client against a real server on a database never migrated, whose migration waits for a lock this test
holds: a SQLite file another connection is writing to, a PostgreSQL advisory lock (the one migrators take).
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator

import anyio
import pytest
from sqlalchemy import create_engine, make_url, text
from sqlalchemy.pool import NullPool

from blackboard.infrastructure.persistence.postgres import MIGRATION_LOCK
from tests.e2e.conftest import Cli
from tests.e2e.mcp_client import served

pytestmark = pytest.mark.anyio
AGENT = "ps-researcher"
CLIENT_START = 30.0  # what Claude Code gives a server to answer `initialize` (a bound, not a wait)
WAITS_FOR_THE_LOCK = {"BLACKBOARD_SQLITE_BUSY_TIMEOUT": "300"}  # a migration that waits, rather than fails


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(params=["sqlite", "postgresql"])
def fresh(request, make_cli, tmp_path) -> Cli:
    """The CLI on a database no command has opened: its first user migrates it."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'fresh.db'}"
    else:
        url = request.getfixturevalue("pg_private_url")
    return make_cli(url, tmp_path)


class Lock:
    """What a migration of the database must wait for, held until `release`."""

    def __init__(self, url: str) -> None:
        self._release: list = []
        if url.startswith("sqlite"):
            conn = sqlite3.connect(make_url(url).database, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")  # readers go on: only a writer waits
            conn.execute("BEGIN IMMEDIATE")
            conn.execute("CREATE TABLE held_by_the_test (x)")  # a write transaction, open
            self._release = [lambda: conn.execute("ROLLBACK"), conn.close]
        else:
            engine = create_engine(url, poolclass=NullPool)
            conn = engine.connect()
            conn.execute(text("SELECT pg_advisory_lock(:key)"), {"key": MIGRATION_LOCK})
            conn.commit()
            self._release = [conn.close, engine.dispose]  # a session's advisory lock ends with it

    def release(self) -> None:
        while self._release:
            self._release.pop(0)()


@contextlib.contextmanager
def held(url: str) -> Iterator[Lock]:
    lock = Lock(url)
    try:
        yield lock
    finally:
        lock.release()


def migrated(url: str) -> bool:
    """Whether the database has the schema's version table (a migration committed)."""
    engine = create_engine(url, poolclass=NullPool)
    try:
        with engine.connect() as conn:
            if url.startswith("sqlite"):
                query = "SELECT count(*) FROM sqlite_master WHERE name = 'alembic_version'"
            else:
                query = "SELECT count(*) FROM pg_tables WHERE tablename = 'alembic_version'"
            return bool(conn.execute(text(query)).scalar())
    finally:
        engine.dispose()


async def test_initialize_and_the_tools_are_answered_while_the_migration_waits_and_a_call_after(fresh):
    post = {"signal_type": "RESEARCH", "ps_id": "ps-start", "entry_id": "e-1", "topic": "started"}
    with held(fresh.db_url) as lock:
        async with served(
            fresh, "--agent", AGENT, env=WAITS_FOR_THE_LOCK, read_timeout=CLIENT_START
        ) as server:  # initialised: within CLIENT_START, while the migration waits for the lock
            tools = {tool.name for tool in (await server.session.list_tools()).tools}
            assert not migrated(fresh.db_url)  # it still waits: the answers did not
            answers: list = []

            async def call() -> None:
                answers.append(await server.call("blackboard_post_signal", **post))

            async with anyio.create_task_group() as calls:
                calls.start_soon(call)  # a call made meanwhile waits for the session
                await anyio.sleep(0)
                lock.release()
            shown = await server.call("blackboard_show", signal_id=answers[0]["signal_id"])

    assert {"blackboard_post_signal", "blackboard_claim", "blackboard_write"} <= tools
    assert (answers[0]["posted_by"], shown["status"]) == (AGENT, "POSTED")
    assert migrated(fresh.db_url)


async def test_a_session_that_could_not_be_built_is_the_call_s_error_and_the_next_call_builds_it(
    make_cli, tmp_path
):
    cli = make_cli(f"sqlite:///{tmp_path / 'fresh.db'}", tmp_path)
    with held(cli.db_url) as lock:
        async with served(
            cli, env={"BLACKBOARD_SQLITE_BUSY_TIMEOUT": "0.2"}, read_timeout=CLIENT_START
        ) as server:
            said, details = await server.refused("blackboard_signals")
            lock.release()
            listed = await server.call("blackboard_signals")

    assert said.startswith("could not open the database") and "locked" in said, said
    assert (details["family"], details["exit_code"]) == ("unavailable", 1)
    assert listed == []


def test_an_unknown_agent_still_stops_the_server_before_it_serves(fresh):
    assert fresh("mcp", "--agent", "nobody").expect(4).stderr.strip() == (
        "blackboard: no agent named nobody in the registry"
    )
