"""A cold command on a board that saw much work reads what it reads on a board of 10 (issue 25's target: a
board of 1,000,000 events and 100,000 signals, a cold command <= 3x the same on a board of 10).

Section (c) of the benchmarks times it at full size; here the guard is what does not depend on the machine:
the SQL statements a fresh process's claim runs, the signals its decision loads and the events it replays
must be the same on a busy board (signals claimed, renewed, completed, failed and retried, entries written:
bench/seeding.py `seed_busy`) as on a board of 10 POSTED signals, on SQLite and on PostgreSQL."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from bench import cold
from bench.common import post_command, wired
from bench.seeding import seed_busy, seed_posts
from blackboard.infrastructure.persistence.tables import ENTRIES, EVENTS, SIGNALS

SIGNALS_SEEDED, EVENTS_SEEDED = 1_000, 10_000


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request) -> str:
    return request.getfixturevalue("sqlite_url" if request.param == "sqlite" else "pg_private_url")


def test_the_busy_board_holds_the_work_it_was_seeded_with(url):
    with wired(url) as container:
        engine = container.engine()
        seeded = seed_busy(engine, "ps-busy", 2, SIGNALS_SEEDED, EVENTS_SEEDED)
        assert container.read_model().position() == container.event_store().last_position()
        with engine.connect() as conn:
            statuses = dict(
                conn.execute(select(SIGNALS.c.status, func.count()).group_by(SIGNALS.c.status)).all()
            )
            logged = conn.scalar(select(func.count()).select_from(EVENTS))
            entries = conn.scalar(select(func.count()).select_from(ENTRIES))
    assert seeded["signals"] == SIGNALS_SEEDED and sum(statuses.values()) == SIGNALS_SEEDED
    assert statuses == {"POSTED": 50, "COMPLETED": 900, "FAILED": 50}  # 5% open, 5% failed and retried
    assert logged == seeded["events"] == seeded["folded"] == sum(seeded["kinds"].values())
    assert abs(seeded["events"] - EVENTS_SEEDED) <= EVENTS_SEEDED // 100  # the fill reaches what was asked
    kinds = seeded["kinds"]
    assert kinds["attempt_failed"] == 200 and kinds["failed"] == kinds["retried"] == 50
    assert kinds["renewed"] > 0 and kinds["entry_versions"] > kinds["completed"] == 900
    assert entries == 900  # one key per completed signal, rewritten: versions beyond the first


def test_a_cold_claim_runs_the_same_statements_on_a_busy_board_as_on_a_board_of_ten(url):
    with wired(url) as container:
        engine = container.engine()
        seed_posts(engine, "ps-small", 1, 10)
        seed_busy(engine, "ps-busy", 2, SIGNALS_SEEDED, EVENTS_SEEDED)
        service = container.service()
        fresh = {
            board: service.post_signal(post_command(board, 0)).signal_id for board in ("ps-small", "ps-busy")
        }
    small, busy = (cold.main(url, fresh[board]) for board in ("ps-small", "ps-busy"))
    assert busy["sql"] == small["sql"] and busy["statements"] == small["statements"]
    assert busy["signals_loaded"] == small["signals_loaded"] == 1
    assert busy["events_replayed"] == small["events_replayed"] == 0
