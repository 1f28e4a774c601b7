"""Mixed versions on one database (issue 27, item 7), through the real executable on SQLite and PostgreSQL: an
event a newer release wrote (a type this code does not know, or a schema version above its own) stops the
CLI and a worker with exit 6 naming the release to upgrade to, and nothing is misread or skipped; a
database migrated past this code runs it only if the newer release says it may."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from sqlalchemy import create_engine, text

from blackboard.domain.events import AgentSignalClaimed
from tests.e2e.conftest import Cli, write_agents

UPGRADE = 6
DONE = """---
name: ps-done
capabilities: {RESEARCH: 0.95}
command: cat > /dev/null; echo '{}'
---
Does it.
"""


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request, make_cli, tmp_path) -> Iterator[Cli]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'mixed.db'}"
    else:
        url = request.getfixturevalue("pg_private_url")  # it leaves a newer release's marks behind
    cli = make_cli(url, tmp_path, write_agents(tmp_path / "agents", {"ps-done.md": DONE}))
    cli.ok("db", "upgrade")
    yield cli


def _append(url: str, board: str, event_type: str, schema_version: int, data: dict) -> int:
    """An event as a newer release would store it, after the board's last one; returns its position."""
    engine = create_engine(url)
    with engine.begin() as conn:
        version = conn.execute(
            text("SELECT COALESCE(MAX(version), 0) FROM events WHERE stream_id = :s"), {"s": board}
        ).scalar()
        now = datetime.now(UTC)
        conn.execute(
            text(
                "INSERT INTO events (event_id, stream_id, version, event_type, schema_version, data, metadata, "
                "occurred_at, recorded_at) VALUES (:id, :s, :v, :t, :sv, :d, '{}', :at, :at)"
            ),
            {
                "id": str(uuid.uuid4()),
                "s": board,
                "v": version + 1,
                "t": event_type,
                "sv": schema_version,
                "d": json.dumps(data),
                "at": now,
            },
        )
        position = conn.execute(text("SELECT MAX(position) FROM events")).scalar()
    engine.dispose()
    return position


def _record_writer(url: str, event_type: str, schema_version: int, release: str) -> None:
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(
            text(
                "INSERT INTO blackboard_event_schemas (event_type, schema_version, written_by) VALUES (:t, :v, :r)"
            ),
            {"t": event_type, "v": schema_version, "r": release},
        )
    engine.dispose()


def test_an_event_type_this_release_does_not_know_stops_the_cli_naming_the_release(store):
    signal = store.post("--blackboard", "mixed")["signal_id"]
    position = _append(store.db_url, "mixed", "AgentSignalTeleported", 1, {"signal_id": signal, "to": "x"})
    _record_writer(store.db_url, "AgentSignalTeleported", 1, "9.9.0")

    for command in (("events", "--all"), ("signals", "--blackboard", "mixed"), ("show", signal)):
        refused = store(*command).expect(UPGRADE)

        assert f"the event at position {position} cannot be read by this blackboard" in refused.stderr
        assert "AgentSignalTeleported" in refused.stderr
        assert "upgrade blackboard to 9.9.0 or later" in refused.stderr, refused.stderr


def test_a_schema_version_above_this_release_s_stops_a_worker_and_nothing_is_misread(store):
    signal = store.post("--blackboard", "mixed")["signal_id"]
    # a claim as a newer release might write it: its fields read the same, its meaning may not
    _append(store.db_url, "mixed", "AgentSignalClaimed", 99, {"signal_id": signal, "claimed_by": "ps-x"})

    refused = store("worker", "--agent", "ps-done", "--once", timeout=60).expect(UPGRADE)

    newest = AgentSignalClaimed.schema_version
    assert f"AgentSignalClaimed is of schema version 99, above {newest}" in refused.stderr, refused.stderr
    assert "upgrade blackboard to the release that wrote it" in refused.stderr
    engine = create_engine(store.db_url)
    with engine.connect() as conn:  # the worker claimed nothing and completed nothing past the event
        types = [r[0] for r in conn.execute(text("SELECT event_type FROM events ORDER BY position"))]
    engine.dispose()
    assert types == ["AgentSignalPosted", "AgentSignalClaimed"]
    assert store("signals", "--blackboard", "mixed").returncode == UPGRADE


def _migrated_past(url: str, revision: str, written_by: str, oldest_reader: str) -> None:
    engine = create_engine(url)
    with engine.begin() as conn:
        conn.execute(text("UPDATE alembic_version SET version_num = :r"), {"r": revision})
        conn.execute(
            text(
                "INSERT INTO blackboard_schema_versions (revision, written_by, oldest_reader, applied_at) "
                "VALUES (:r, :w, :o, :at)"
            ),
            {"r": revision, "w": written_by, "o": oldest_reader, "at": datetime.now(UTC)},
        )
    engine.dispose()


def test_a_database_migrated_by_a_newer_release_runs_this_one_only_if_that_release_allows_it(store):
    _migrated_past(store.db_url, "9001", "9.9.0", "0.0.1")
    store.post("--blackboard", "side")  # 0.1.x may run beside 9.9.0: it said so

    engine = create_engine(store.db_url)
    with engine.begin() as conn:
        conn.execute(
            text("UPDATE blackboard_schema_versions SET oldest_reader = '9.0.0' WHERE revision = '9001'")
        )
    engine.dispose()
    refused = store("signals").expect(UPGRADE)

    assert "the database is at schema revision 9001, migrated by blackboard 9.9.0" in refused.stderr
    assert "upgrade to 9.9.0 (at least 9.0.0)" in refused.stderr, refused.stderr


def test_metrics_go_on_serving_what_was_folded_and_say_an_upgrade_is_needed(store):
    from prometheus_client.parser import text_string_to_metric_families

    from tests.e2e.web import UiServer

    calm = store.post("--blackboard", "calm")["signal_id"]
    signal = store.post("--blackboard", "mixed")["signal_id"]
    server = UiServer(store).wait_ready()
    try:
        _append(store.db_url, "mixed", "AgentSignalTeleported", 1, {"signal_id": signal, "to": "x"})
        status, _, body = server.get("/metrics")
    finally:
        server.stop()

    assert status == 200, body[:500]  # was 501 for every board
    found = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(body.decode())
        for s in family.samples
    }
    assert found[("blackboard_upgrade_needed", ())] == 1
    assert found[("blackboard_signals", (("board", "calm"), ("status", "POSTED")))] == 1
    assert found[("blackboard_signals", (("board", "mixed"), ("status", "POSTED")))] == 1
    assert "AgentSignalTeleported" in server.stderr()  # the server's log names the event
    assert calm
