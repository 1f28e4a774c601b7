"""The hot path on the driver's connection (persistence/lean.py): the rows it reads decode to the same
signals as SQLAlchemy's rows validated by pydantic, the rows it writes read back the same through
SQLAlchemy, a driver error leaves as SQLAlchemy's, and statement listeners still see every statement.
On SQLite and PostgreSQL."""

from __future__ import annotations

import json
import logging
import threading
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import bindparam, create_engine, event, func, select, text, update
from sqlalchemy.exc import IntegrityError, OperationalError

from blackboard.application.commands import ClaimSignal, CompleteSignal, FailSignal, PostSignal
from blackboard.application.ports import ConcurrencyConflict
from blackboard.domain.signals import AgentSignal, FailedAttempt, SignalPayload, SignalResult, SignalUsage
from blackboard.infrastructure.persistence import lean
from blackboard.infrastructure.persistence.codec import event_row, signal_from_row
from blackboard.infrastructure.persistence.dialect import dialect_of, remember
from blackboard.infrastructure.persistence.engine import write_transaction
from blackboard.infrastructure.persistence.event_store import translated
from blackboard.infrastructure.persistence.sqlite import SqliteDialect
from blackboard.infrastructure.persistence.tables import EVENTS, SIGNALS
from blackboard.infrastructure.persistence.unit_of_work import BY_ID, SignalRow, read_log
from tests.integration.conftest import SqlBoard
from tests.waiting import wait_until

USAGE = SignalUsage(runner="claude-code", model="m", input_tokens=3, output_tokens=4, cost_usd=0.25, turns=2)


def validated(row) -> AgentSignal:
    """The signal as pydantic validates every JSON column of its row (the decoding before lean.py)."""
    signal = signal_from_row(row)
    return signal._changed(
        payload=SignalPayload.model_validate_json(row.payload_json),
        result=SignalResult.model_validate_json(row.result_json) if row.result_json else None,
        usage=SignalUsage.model_validate_json(row.usage_json) if row.usage_json else None,
        attempts=tuple(FailedAttempt.model_validate(a) for a in json.loads(row.attempts_json))
        if row.attempts_json
        else (),
    )


def signals_in_every_state(board: SqlBoard) -> list[str]:
    service = board.service
    later = datetime.now(UTC) + timedelta(hours=1)

    def post(topic: str, **more) -> str:
        command = PostSignal(
            signal_type="RESEARCH", ps_id="ps-1", entry_id="e-1", topic=topic, context={"n": [1, "ü"]}, **more
        )
        return service.post_signal(command).signal_id

    posted = post("posted", priority=0, budget_usd=1.5, read_keys=("notes/*",), dedupe_key="k")
    waiting = post("waiting", after=(posted,))
    post("later", not_before=later, max_attempts=3)
    post("gate", gate=True, timeout_s=60.0)
    done = post("done")
    service.claim_signal(ClaimSignal(signal_id=done, agent_id="ps-researcher"))
    service.complete_signal(
        CompleteSignal(
            signal_id=done,
            agent_id="ps-researcher",
            artifact_path="out/a.md",
            knowledge_items=("x", "y"),
            usage=USAGE,
        )
    )
    retried = post("retried", max_attempts=3)
    service.claim_signal(ClaimSignal(signal_id=retried, agent_id="ps-researcher"))
    service.fail_signal(FailSignal(signal_id=retried, agent_id="ps-researcher", error="boom", usage=USAGE))
    claimed = post("claimed")
    service.claim_signal(ClaimSignal(signal_id=claimed, agent_id="ps-researcher"))
    return [posted, waiting, done, retried, claimed]


def test_rows_read_on_the_driver_decode_to_the_signals_pydantic_validates(sql_engine):
    board = SqlBoard(sql_engine)
    signals_in_every_state(board)
    with sql_engine.connect() as conn:
        rows = conn.execute(select(SIGNALS).order_by(SIGNALS.c.signal_id)).all()
        assert len(rows) == 7
        assert any(r.attempts_json for r in rows) and any(r.usage_json for r in rows)
        assert any(r.gate for r in rows) and any(r.not_before for r in rows)
        for row in rows:
            (raw,) = lean.rows(conn, BY_ID, {"board": row.blackboard_id, "id": row.signal_id})
            fast = signal_from_row(SignalRow._make(raw))
            assert fast == validated(row) == signal_from_row(row)
            assert tuple(raw) == tuple(row)  # every column as SQLAlchemy converts it (times aware, in UTC)
            for moment in (fast.created_at, fast.claimed_at, fast.not_before):
                assert moment is None or moment.tzinfo is UTC
            assert fast.payload.model_dump_json() == row.payload_json  # the models serialise as stored


def test_a_row_an_older_release_wrote_is_validated_and_gets_the_defaults(sql_engine):
    board = SqlBoard(sql_engine)
    signal_id = board.service.post_signal(
        PostSignal(signal_type="RESEARCH", ps_id="ps-1", entry_id="e-1", topic="old")
    ).signal_id
    with sql_engine.begin() as conn:  # no "context" nor "prompt": the payload before they were fields
        conn.execute(
            update(SIGNALS)
            .where(SIGNALS.c.signal_id == signal_id)
            .values(payload_json='{"ps_id":"ps-1","entry_id":"e-1","topic":"old"}')
        )
    with sql_engine.connect() as conn:
        (raw,) = lean.rows(conn, BY_ID, {"board": "ps-1", "id": signal_id})
    payload = signal_from_row(SignalRow._make(raw)).payload
    assert payload == SignalPayload(ps_id="ps-1", entry_id="e-1", topic="old")
    assert payload.model_fields_set == {"ps_id", "entry_id", "topic"}


def test_a_driver_error_leaves_as_sqlalchemy_s_and_as_a_conflict_from_a_command(sql_engine):
    board = SqlBoard(sql_engine)
    board.service.post_signal(PostSignal(signal_type="RESEARCH", ps_id="ps-1", entry_id="e-1", topic="t"))
    with sql_engine.connect() as conn:
        (event_id, version) = conn.execute(select(EVENTS.c.event_id, EVENTS.c.version)).one()
    taken = {
        "event_id": event_id,
        "stream_id": "ps-1",
        "version": version + 1,
        "event_type": "AgentSignalPosted",
        "schema_version": 1,
        "data": "{}",
        "metadata": "{}",
        "occurred_at": datetime.now(UTC),
        "recorded_at": datetime.now(UTC),
    }
    with pytest.raises(IntegrityError):
        with write_transaction(sql_engine) as conn:
            dialect_of(sql_engine).insert_many(conn, EVENTS, [taken], returning="position", key="event_id")
    with pytest.raises(ConcurrencyConflict):
        with translated("append", "ps-1"), write_transaction(sql_engine) as conn:
            dialect_of(sql_engine).insert_many(conn, EVENTS, [taken], returning="position", key="event_id")
    with sql_engine.connect() as conn:  # nothing written, the connection usable again
        assert conn.execute(select(EVENTS.c.event_id)).scalars().all() == [event_id]


def test_naive_times_are_refused_on_the_driver_too(sql_engine):
    row = event_row(
        SqlBoard(sql_engine).service.post_signal(
            PostSignal(signal_type="RESEARCH", ps_id="ps-1", entry_id="e-1", topic="t")
        )
        and _any_event(sql_engine),
        {},
        datetime(2026, 1, 1),  # naive
    )
    with pytest.raises(ValueError, match="naive"), write_transaction(sql_engine) as conn:
        dialect_of(sql_engine).insert_many(conn, EVENTS, [row | {"event_id": "other"}], returning="position")


def _any_event(engine):
    return SqlBoard(engine).store.load("ps-1")[0]


def test_statement_listeners_see_the_driver_s_statements(sql_engine):
    board = SqlBoard(sql_engine)
    seen: list[str] = []

    def note(conn, cursor, statement, parameters, context, executemany):
        seen.append(" ".join(statement.split()).lower())

    event.listen(sql_engine, "before_cursor_execute", note)
    try:
        board.service.post_signal(PostSignal(signal_type="RESEARCH", ps_id="ps-1", entry_id="e-1", topic="t"))
    finally:
        event.remove(sql_engine, "before_cursor_execute", note)
    assert any(s.startswith("insert into events") for s in seen), seen
    assert any(s.startswith("insert into blackboard_signals") for s in seen), seen
    assert any(s.startswith("update projection_checkpoints") for s in seen), seen


def test_every_statement_of_a_command_runs_on_the_driver(sql_engine):
    """lean.py is the one way a command's statements run: posts, claims, completions, failures and retries
    of every kind run none through SQLAlchemy's `Connection.execute` (about 50 µs of Python a statement),
    save the statements a run's usage adds (its rows written again, the board's budget summed: built per
    call, for the boards and signals at hand)."""
    board = SqlBoard(sql_engine)
    _post(board)  # the first command's set-up (the schema's check) is not a command's statement
    ways: list[tuple[str, str]] = []

    def note(conn, cursor, statement, parameters, context, executemany):
        ways.append((type(context).__name__, " ".join(statement.split())[:60]))

    event.listen(sql_engine, "before_cursor_execute", note)
    try:
        signals_in_every_state(board)
    finally:
        event.remove(sql_engine, "before_cursor_execute", note)
    assert len(ways) > 20
    usage = ("DELETE FROM signal_usage", "UPDATE board_budgets", "SELECT board_budgets.blackboard_id")
    elsewhere = [(way, sql) for way, sql in ways if way != "Context" and not sql.startswith(usage)]
    assert not elsewhere


def _post(board: SqlBoard) -> None:
    board.service.post_signal(PostSignal(signal_type="RESEARCH", ps_id="ps-1", entry_id="e-1", topic="t"))


def test_listeners_keep_their_own_attributes_on_the_context_as_tracers_do(sql_engine):
    """OpenTelemetry's and Sentry's SQLAlchemy integrations read the context's dialect and keep their span
    on it from `before_cursor_execute` to `after_cursor_execute`: every statement of a command, lean or not."""
    board = SqlBoard(sql_engine)
    ended: list[str] = []

    def before(conn, cursor, statement, parameters, context, executemany):
        assert context.dialect.paramstyle and context.connection is conn
        context._probe_span = statement

    def after(conn, cursor, statement, parameters, context, executemany):
        ended.append(context._probe_span)

    event.listen(sql_engine, "before_cursor_execute", before)
    event.listen(sql_engine, "after_cursor_execute", after)
    try:
        _post(board)
    finally:
        event.remove(sql_engine, "before_cursor_execute", before)
        event.remove(sql_engine, "after_cursor_execute", after)
    assert any(" ".join(s.split()).lower().startswith("insert into events") for s in ended), ended


def test_the_sql_a_retval_listener_returns_is_what_runs(sql_engine):
    """A `before_cursor_execute` listener registered with `retval=True` may rewrite the statement (a
    tracer's SQL comment): SQLAlchemy runs what it returns, and so does the driver's path."""
    board = SqlBoard(sql_engine)
    ran: list[str] = []

    def comment(conn, cursor, statement, parameters, context, executemany):
        return statement + " /* traced */", parameters

    def after(conn, cursor, statement, parameters, context, executemany):
        ran.append(statement)

    event.listen(sql_engine, "before_cursor_execute", comment, retval=True)
    event.listen(sql_engine, "after_cursor_execute", after)
    try:
        _post(board)
    finally:
        event.remove(sql_engine, "before_cursor_execute", comment)
        event.remove(sql_engine, "after_cursor_execute", after)
    posted = [s for s in ran if " ".join(s.split()).lower().startswith("insert into events")]
    assert posted and all(s.endswith("/* traced */") for s in posted), ran
    with sql_engine.connect() as conn:
        assert conn.execute(select(EVENTS.c.event_type)).scalars().all() == ["AgentSignalPosted"]


def test_echo_logs_the_driver_s_statements(sql_engine, caplog):
    board = SqlBoard(sql_engine)
    sql_engine.echo = True
    try:
        with caplog.at_level(logging.INFO, logger="sqlalchemy.engine"):
            _post(board)
    finally:
        sql_engine.echo = False
    logged = [" ".join(r.getMessage().split()).lower() for r in caplog.records]
    assert any(m.startswith("insert into events") for m in logged), logged
    assert any(m.startswith("insert into blackboard_signals") for m in logged), logged


def test_an_error_while_the_rows_are_read_leaves_as_sqlalchemy_s(sqlite_engine):
    """sqlite3 steps a query's rows as they are fetched: an error at the second row is raised by
    `fetchall`, and leaves as SQLAlchemy's like one raised by `execute`."""
    query = text("SELECT json_extract(column1, '$') FROM (VALUES ('1'), ('{bad'))")
    with pytest.raises(OperationalError, match="malformed JSON"), write_transaction(sqlite_engine) as conn:
        lean.rows(conn, query, {})
    with sqlite_engine.connect() as conn:  # the connection usable again
        assert conn.execute(text("SELECT 1")).scalar() == 1


def test_statements_are_compiled_for_each_driver_and_parameter_style(sqlite_url):
    """Two engines on the same database may bind differently (a driver, a `paramstyle`): each gets the
    SQL compiled for its own."""
    engines = [
        remember(create_engine(sqlite_url), SqliteDialect()),
        remember(create_engine(sqlite_url, paramstyle="named"), SqliteDialect()),
    ]
    try:
        statements = []
        for engine in engines:
            with engine.connect() as conn:
                statements.append(lean.prepared(conn, BY_ID).sql)
        assert "?" in statements[0] and ":" not in statements[0]
        assert "?" not in statements[1] and ":" in statements[1]
    finally:
        for engine in engines:
            engine.dispose()


def _event(stream: str, version: int, event_id: str) -> dict:
    now = datetime.now(UTC)
    return {
        "event_id": event_id,
        "stream_id": stream,
        "version": version,
        "event_type": "AgentSignalPosted",
        "schema_version": 1,
        "data": "{}",
        "metadata": "{}",
        "occurred_at": now,
        "recorded_at": now,
    }


@pytest.mark.parametrize("pipelines", [True, False], ids=["pipeline", "no-pipeline-mode"])
def test_statements_sent_together_give_each_its_own_result_and_an_error_leaves_as_sqlalchemy_s(
    sql_engine, pipelines, monkeypatch
):
    # without pipeline mode (a libpq before 14) they run one at a time, with the same results and errors
    monkeypatch.setattr(lean, "_pipelines", lambda: pipelines)
    insert = (
        EVENTS.insert()
        .values(
            {c: bindparam(c) for c in ("event_id", "stream_id", "version", "event_type", "schema_version")}
            | {c: bindparam(c) for c in ("data", "metadata", "occurred_at", "recorded_at")}
        )
        .returning(EVENTS.c.version)
    )
    count = select(func.count()).select_from(EVENTS).where(EVENTS.c.stream_id == bindparam("stream"))
    rename = update(EVENTS).where(EVENTS.c.stream_id == bindparam("old")).values(stream_id=bindparam("new"))
    with write_transaction(sql_engine) as conn:
        found = lean.run_all(
            conn,
            [
                (insert, _event("s-1", 1, "e-1")),
                (insert, _event("s-1", 2, "e-2")),
                (count, {"stream": "s-1"}),
                (rename, {"old": "s-1", "new": "s-2"}),
                (count, {"stream": "s-2"}),
            ],
        )
    assert found == [[(1,)], [(2,)], [(2,)], 2, [(2,)]]  # the rows given, or how many changed, in order
    taken = _event("s-3", 1, "e-1")  # the event id is taken: the second statement fails
    with pytest.raises(IntegrityError):
        with write_transaction(sql_engine) as conn:
            lean.run_all(
                conn, [(insert, _event("s-3", 2, "e-3")), (insert, taken), (count, {"stream": "s-3"})]
            )
    with pytest.raises(ConcurrencyConflict):
        with translated("append", "s-3"), write_transaction(sql_engine) as conn:
            lean.run_all(conn, [(insert, _event("s-3", 2, "e-3")), (insert, taken)])
    with sql_engine.connect() as conn:  # nothing of the failed ones written, the connection usable again
        assert conn.execute(select(EVENTS.c.event_id).order_by(EVENTS.c.position)).scalars().all() == [
            "e-1",
            "e-2",
        ]


def _lock_waiters(engine) -> int:
    with engine.connect() as conn:
        return conn.scalar(text("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"))


def test_a_read_sent_with_a_lock_sees_what_the_lock_s_holder_committed(pg_engine):
    """One round trip, two statements: the read takes its snapshot when it starts, after the lock was granted
    (READ COMMITTED), so it sees the commit that released the lock; one statement would not."""
    dialect, seen = dialect_of(pg_engine), {}

    def append_after_the_holder() -> None:
        with write_transaction(pg_engine) as conn:
            seen["log"] = read_log(conn, "s-1", dialect.log_hold())

    with write_transaction(pg_engine) as conn:
        dialect.hold_log(conn)
        conn.execute(EVENTS.insert(), _event("s-1", 1, "e-1"))
        reader = threading.Thread(target=append_after_the_holder)
        reader.start()
        wait_until(lambda: _lock_waiters(pg_engine), what="the reader waiting for the log's lock")
    reader.join(timeout=30)
    assert seen["log"].version == 1 and seen["log"].end == 1
