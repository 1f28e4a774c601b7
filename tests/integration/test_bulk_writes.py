"""bulk.py on real PostgreSQL: many rows in one json_to_recordset statement, read back as sent."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from sqlalchemy import func, insert, select

from blackboard.application.commands import ClaimSignals, PostSignal
from blackboard.application.ports import SignalFilter
from blackboard.application.projection import Projector
from blackboard.domain.blackboard import BlackboardAggregate
from blackboard.infrastructure.persistence import bulk
from blackboard.infrastructure.persistence.codec import changing_row, signal_row
from blackboard.infrastructure.persistence.tables import EVENTS, SIGNALS
from tests.contract.stories import RESEARCHER, posts
from tests.fakes import T0
from tests.integration.conftest import SqlBoard

TRICKY = [
    'say "hi" it\'s',
    "back\\slash \\n not a newline",
    "line\nbreak\ttab",
    "ünïcødé ✓ 中文 😀",
    '{"looks": ["like", "json"], "n": 1}',
    r"\u0000 stays literal",
    "null",
    "",
]
ZONES = [timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(hours=-7)), UTC]


def event_rows() -> list[dict]:
    """Given out of event_id and version order, so only the given order explains the positions."""
    return [
        {
            "event_id": f"ev-{9 - n}",
            "stream_id": "bb-'quoted'",
            "version": 10 - n,
            "event_type": "AgentSignalPosted",
            "schema_version": 2,
            "data": text,
            "metadata": '{"actor": "o\'brien"}',
            "occurred_at": datetime(2026, 3, 1, 12, 0, n, 123456 + n, tzinfo=ZONES[n % 3]),
            "recorded_at": datetime(2026, 3, 1, 23, 59, 59, 999999, tzinfo=ZONES[(n + 1) % 3]),
        }
        for n, text in enumerate(TRICKY)
    ]


def test_insert_returns_positions_in_the_given_order_and_stores_the_rows_as_sent(pg_engine):
    rows = event_rows()
    with pg_engine.begin() as conn:
        positions = bulk.insert(conn, EVENTS, rows, returning="position", key="event_id")
    with pg_engine.connect() as conn:
        stored = conn.execute(select(EVENTS).order_by(EVENTS.c.position)).mappings().all()

    assert len(set(positions)) == len(rows) and positions == sorted(positions)
    assert [s["position"] for s in stored] == positions  # the row given first got the first position
    assert [
        {k: v for k, v in s.items() if k != "position"} for s in stored
    ] == rows  # times: the same instant
    assert [s["occurred_at"].microsecond for s in stored] == [r["occurred_at"].microsecond for r in rows]


def stored_signals(conn) -> dict[str, dict]:
    return {r["signal_id"]: dict(r) for r in conn.execute(select(SIGNALS)).mappings()}


def test_update_sets_only_the_listed_columns_of_the_keyed_rows(pg_engine):
    board = BlackboardAggregate.replay("bb-1", posts("bb-1", 3))
    board.claim_signal("sig-00000001", RESEARCHER, T0, token="w-1")
    with pg_engine.begin() as conn:
        conn.execute(insert(SIGNALS), [signal_row(s) for s in board.signals.values()])
        before = stored_signals(conn)
    at = datetime(2026, 5, 6, 7, 8, 9, 101112, tzinfo=ZONES[1])
    columns = ("status", "claimed_by", "claimed_at", "result_json", "version")
    rows = [  # b_claim_token is not listed: it must stay as it was
        {
            **changing_row(board.signals["sig-00000001"]),
            "b_status": "POSTED",
            "b_claimed_by": None,
            "b_claimed_at": None,
            "b_claim_token": "ignored",
            "b_version": 7,
        },
        {
            **changing_row(board.signals["sig-00000002"]),
            "b_claimed_by": 'o\'brien "\\"',
            "b_claimed_at": at,
            "b_result_json": TRICKY[4],
            "b_version": 8,
        },
        {**changing_row(board.signals["sig-00000002"]), "b_signal_id": "sig-absent"},
    ]

    with pg_engine.begin() as conn:
        count = bulk.update(conn, SIGNALS, "signal_id", columns, rows, prefix="b_")
        after = stored_signals(conn)

    assert count == 2
    assert after["sig-00000003"] == before["sig-00000003"] and "sig-absent" not in after
    for row in rows[:2]:
        sid = row["b_signal_id"]
        assert after[sid] == {**before[sid], **{c: row[f"b_{c}"] for c in columns}}
    assert after["sig-00000001"]["claimed_by"] is None and after["sig-00000001"]["claim_token"] == "w-1"
    with pg_engine.connect() as conn:  # NULL in the table, not the text 'null' or ''
        assert (
            conn.scalar(select(func.count()).select_from(SIGNALS).where(SIGNALS.c.claimed_by.is_(None))) == 2
        )


def test_a_naive_datetime_is_refused_before_anything_is_written(pg_engine):
    rows = event_rows()
    rows[-1]["recorded_at"] = rows[-1]["recorded_at"].replace(tzinfo=None)
    signals = BlackboardAggregate.replay("bb-1", posts("bb-1", 2)).signals.values()
    with pg_engine.begin() as conn:
        conn.execute(insert(SIGNALS), [signal_row(s) for s in signals])
    with pg_engine.begin() as conn:
        before = stored_signals(conn)
        with pytest.raises(ValueError, match="naive"):
            bulk.insert(conn, EVENTS, rows, returning="position", key="event_id")
        with pytest.raises(ValueError, match="naive"):
            bulk.update(
                conn,
                SIGNALS,
                "signal_id",
                ("claimed_by", "claimed_at"),
                [
                    {"b_signal_id": "sig-00000001", "b_claimed_by": "x", "b_claimed_at": T0},
                    {
                        "b_signal_id": "sig-00000002",
                        "b_claimed_by": "y",
                        "b_claimed_at": datetime(2026, 1, 1),
                    },
                ],
                prefix="b_",
            )
        # the transaction is still usable (nothing reached the server) and holds no trace of either
        assert conn.scalar(select(func.count()).select_from(EVENTS)) == 0
        assert stored_signals(conn) == before


def test_a_batch_append_on_postgresql_keeps_version_order_and_the_read_model_equal_to_the_replay(pg_engine):
    board = SqlBoard(pg_engine)
    ids = [
        board.service.post_signal(
            PostSignal(signal_type="RESEARCH", ps_id="ps-1", entry_id=f"e-{n}", topic=f"t {n}")
        ).signal_id
        for n in range(20)
    ]
    direct = board.store.append("bb-2", 0, posts("bb-2", 20, first=100))  # 20 events, one statement
    Projector(board.store, board.read_model).catch_up()  # a bare append leaves the rows to a catch-up

    claims = board.service.claim_signals(
        ClaimSignals(
            blackboard_id="ps-1",
            signal_ids=tuple(ids),
            agent_id="ps-researcher",
            tokens={sid: f"w-1/{n}" for n, sid in enumerate(ids)},  # a token per claim
            limit=20,
        )
    )

    assert [s.signal_id for s in claims.claimed] == ids
    assert [r.event.version for r in direct] == list(range(1, 21))
    assert [r.position for r in direct] == list(range(21, 41))
    with pg_engine.connect() as conn:
        by_version = conn.scalars(
            select(EVENTS.c.position).where(EVENTS.c.stream_id == "ps-1").order_by(EVENTS.c.version)
        ).all()
    assert len(by_version) == 40 and by_version == sorted(by_version)
    for stream in ("ps-1", "bb-2"):
        replayed = BlackboardAggregate.replay(stream, board.store.load(stream)).signals
        assert {s.signal_id: s for s in board.read_model.find(SignalFilter(blackboard_id=stream))} == replayed
    assert board.read_model.position() == board.store.last_position() == 60


def test_returning_needs_a_key_column_to_match_the_rows_by(pg_engine):
    rows = event_rows()
    with pg_engine.begin() as conn:
        for key in (None, "no_such_column"):
            with pytest.raises(ValueError, match="key column"):
                bulk.insert(conn, EVENTS, rows, returning="position", key=key)
        assert conn.scalar(select(func.count()).select_from(EVENTS)) == 0
