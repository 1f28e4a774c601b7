"""The fast replay (persistence/replay.py) builds the very read model the normal path builds: on a generated
busy board (every event type) and on a log holding every old schema version. Both decode each event by the
one generic path (tests/unit/test_stored_events.py holds it to every event type and to a field added)."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import Engine, insert, text

from blackboard.application.commands import (
    ApproveGate,
    CancelSignal,
    ClaimSignal,
    CompleteSignal,
    ExpireSignals,
    FailSignal,
    PostSignal,
    RejectGate,
    RenewClaim,
    RetrySignal,
)
from blackboard.application.knowledge.commands import WriteEntry
from blackboard.application.ports import SignalFilter
from blackboard.application.projection import Projector
from blackboard.domain import events
from blackboard.domain.errors import BlackboardError
from blackboard.domain.signals import SignalStatus, SignalUsage
from blackboard.infrastructure.persistence import replay
from blackboard.infrastructure.persistence.projector import ReplayingProjector
from blackboard.infrastructure.persistence.tables import EVENTS
from tests.integration.conftest import SqlBoard

TABLES = (
    "blackboard_signals",
    "signal_capabilities",
    "signal_dependencies",
    "signal_usage",
    "blackboard_entries",
    "entry_topics",
    "projection_checkpoints",
)
KINDS = {"RESEARCH": "ps-researcher", "ANALYSIS": "ps-analyst", "REVIEW": "ps-reviewer"}


def tables(engine: Engine) -> dict[str, list[tuple]]:
    with engine.connect() as conn:
        return {
            t: sorted(map(tuple, conn.execute(text(f"SELECT * FROM {t}")).all()), key=repr) for t in TABLES
        }


def both_paths(board: SqlBoard, page_size: int = 7) -> tuple[dict, dict]:
    """The read model rebuilt by the normal path, then by the fast one (pages that cut stories in two)."""
    Projector(board.store, board.read_model, page_size=page_size).rebuild()
    normal = tables(board.engine)
    ReplayingProjector(board.store, board.read_model, page_size=page_size).rebuild()
    return normal, tables(board.engine)


def busy_board(board: SqlBoard, seed: int, steps: int) -> None:
    """Posts (priorities, not-before, key permissions, budgets, contexts with non-ASCII text and floats, after
    an open signal), claims, renewals, completions with usage and knowledge, failures, cancels (cascading to
    what waits), expiries, retries and entry writes, in random order."""
    rng = random.Random(seed)
    posted: list[str] = []
    for n in range(steps):
        step = rng.choices(
            ["post", "claim", "renew", "complete", "fail", "cancel", "time", "retry", "write", "decide"],
            [30, 22, 4, 14, 5, 6, 5, 4, 10, 4],
        )[0]
        try:
            if step == "post" or not posted:
                kind = rng.choice(list(KINDS))
                upstreams = [
                    s.signal_id for s in board.read_model.find(SignalFilter()) if not s.status.is_final
                ]
                posted.append(
                    board.service.post_signal(
                        PostSignal(
                            signal_type=kind,
                            ps_id=rng.choice(("ps-1", "ps-2")),
                            entry_id=f"e-{n}",
                            topic=rng.choice(("t", "café ☕", 'quote " and \\ slash')),
                            prompt=rng.choice(("", "look it up")),
                            context={"n": n, "ratio": rng.random(), "tags": ["a", "ü"]}
                            if rng.random() < 0.3
                            else {},
                            after=(rng.choice(upstreams),) if upstreams and rng.random() < 0.35 else (),
                            priority=rng.randint(0, 4),
                            not_before=board.clock.now() + timedelta(seconds=rng.choice((5, 60)))
                            if rng.random() < 0.2
                            else None,
                            read_keys=("notes/*",) if rng.random() < 0.2 else (),
                            write_keys=("notes/out",) if rng.random() < 0.2 else (),
                            budget_usd=rng.choice((None, 0.5, 2.0)),
                            dedupe_key=f"d-{rng.randint(0, 20)}" if rng.random() < 0.1 else None,
                            max_attempts=rng.choice((None, 2, 3)),
                            gate=(gate := rng.random() < 0.1),
                            timeout_s=rng.choice((None, 60.0)) if gate else None,
                        )
                    ).signal_id
                )
                continue
            wanted = {
                "claim": SignalStatus.POSTED,
                "time": None,
                "retry": None,
                "write": None,
                "cancel": None,
                "decide": SignalStatus.POSTED,
            }.get(step, SignalStatus.CLAIMED)
            now = (
                [
                    s.signal_id
                    for s in board.read_model.find(SignalFilter(status=wanted))
                    if step != "decide" or s.gate  # a decision is for an open gate (mostly)
                ]
                if wanted
                else posted
            )
            sid = rng.choice(now or posted)
            signal = board.read_model.get(sid)
            claimer = signal.claimed_by or KINDS[str(signal.signal_type)]
            usage = SignalUsage(
                runner="anthropic", model="m", input_tokens=rng.randint(0, 999), cost_usd=0.0123
            )
            if step == "claim":
                board.service.claim_signal(ClaimSignal(signal_id=sid, agent_id=claimer))
            elif step == "renew":
                board.service.renew_claim(RenewClaim(signal_id=sid, agent_id=claimer))
            elif step == "complete":
                board.service.complete_signal(
                    CompleteSignal(
                        signal_id=sid,
                        agent_id=claimer,
                        artifact_path=rng.choice((None, "out.md")),
                        knowledge_items=("found it",) if rng.random() < 0.3 else (),
                        usage=usage if rng.random() < 0.4 else None,
                    )
                )
            elif step == "fail":
                board.service.fail_signal(
                    FailSignal(
                        signal_id=sid,
                        agent_id=claimer,
                        error="no",
                        usage=usage if rng.random() < 0.5 else None,
                    )
                )
            elif step == "cancel":
                board.service.cancel_signal(
                    CancelSignal(signal_id=sid, cancelled_by="alice", reason="changed")
                )
            elif step == "time":
                board.clock.advance(rng.choice((5, 30, 90)))
                board.service.expire_signals(ExpireSignals())
            elif step == "retry":
                board.service.retry_signal(RetrySignal(signal_id=sid))
            elif step == "decide":  # refused unless it is an open gate
                if rng.random() < 0.5:
                    board.service.approve_gate(ApproveGate(signal_id=sid, approved_by="ann", note="ok"))
                else:
                    board.service.reject_gate(RejectGate(signal_id=sid, rejected_by="bob", reason="no"))
            else:
                board.container.knowledge().write(
                    WriteEntry(
                        blackboard_id=signal.blackboard_id,
                        key=rng.choice(("notes/a", "notes/b")),
                        value={"v": rng.randint(0, 3)},
                        author=rng.choice(("ann", "bob")),
                        topics=("x",),
                    )
                )
        except BlackboardError:
            pass  # refusals are part of the story


@pytest.mark.parametrize("seed", [5, 6, 7])  # each holds every kind of event below
def test_the_fast_replay_builds_the_read_model_the_normal_path_builds(sql_engine, seed):
    board = SqlBoard(sql_engine)
    busy_board(board, seed, 160)
    live = tables(sql_engine)
    kinds = {r.event.event_type for r in board.store.read_all()}

    normal, fast = both_paths(board)

    assert fast == normal == live
    assert {"AgentSignalCancelled", "AgentSignalCompleted", "EntryWritten"} <= kinds  # the story is busy
    statuses = {row[7] for row in fast["blackboard_signals"]}
    assert {SignalStatus.CANCELLED.value, SignalStatus.COMPLETED.value} <= statuses


def test_the_busy_board_holds_each_control_the_fold_must_carry(sqlite_engine):
    """The comparison above is only as good as its board: priorities, not-before, key permissions, usage."""
    board = SqlBoard(sqlite_engine)
    busy_board(board, 5, 160)
    rows = tables(sqlite_engine)
    signals = rows["blackboard_signals"]
    assert len({row[24] for row in signals}) >= 3  # priorities
    assert any(row[25] is not None for row in signals)  # not_before
    assert any(row[21] is not None for row in signals)  # keys_json
    assert rows["signal_usage"] and rows["signal_dependencies"] and rows["blackboard_entries"]
    kinds = {r.event.event_type for r in board.store.read_all()}
    assert {
        "AgentSignalAttemptFailed",
        "AgentSignalApproved",
        "AgentSignalRejected",
    } <= kinds  # retries, gates


def _store(engine: Engine, rows: list[tuple[str, int, dict]], stream: str, first_id: int = 1) -> None:
    at = datetime(2026, 1, 4, 9, 0, 0, 123456, tzinfo=UTC)
    with engine.begin() as conn:
        for version, (kind, schema, data) in enumerate(rows, 1):
            conn.execute(
                insert(EVENTS).values(
                    event_id=f"6f1c1d7e-0000-4000-8000-{first_id + version - 1:012d}",
                    stream_id=stream,
                    version=version,
                    event_type=kind,
                    schema_version=schema,
                    data=json.dumps(data),
                    metadata="{}",
                    occurred_at=at + timedelta(seconds=version),
                    recorded_at=at + timedelta(seconds=version),
                )
            )


def test_a_log_holding_every_old_schema_version_rebuilds_unchanged(sql_engine):
    """Every (type, schema version) the upcasters know, as older code wrote it: the fast path upcasts it with
    the domain's upcasters and folds what the normal path folds."""
    payload = {"ps_id": "bb-old", "entry_id": "e-1", "topic": "t", "prompt": "", "context": {}}
    posted = {
        "signal_type": "RESEARCH",
        "payload": payload,
        "target_capabilities": ["RESEARCH"],
        "posted_by": "ps-skill",
        "after": [],
        "dedupe_key": None,
    }
    grows = [
        {},
        {"retry_of": None},
        {"read_keys": ["a/*"], "write_keys": []},
        {"budget_usd": 3},
        {"priority": 0},
        {"not_before": None},
        {"max_attempts": 2},
        {"gate": False, "gate_timeout_s": None},
        {"timeout_s": 60.0},
        {"flow_id": "docbot-1", "step_id": "research"},
        {"payload": {**payload, "labels": ["bug", "team:core"]}},  # 11: the current shape, labels kept
    ]
    renamed = {9: "gate_timeout_s"}  # a field a schema renamed: gone from its shape on
    rows: list[tuple[str, int, dict]] = []
    shape: dict = dict(posted)
    for schema in range(1, events.AgentSignalPosted.schema_version + 1):
        shape = {k: v for k, v in {**shape, **grows[schema - 1]}.items() if k != renamed.get(schema)}
        rows.append(("AgentSignalPosted", schema, {**shape, "signal_id": f"sig-{schema:08x}"}))
    rows += [
        ("AgentSignalClaimed", 1, {"signal_id": "sig-00000001", "claimed_by": "ps-researcher", "score": 0.9}),
        (
            "AgentSignalCompleted",
            1,
            {"signal_id": "sig-00000001", "completed_by": "ps-researcher", "result": {}},
        ),
        ("AgentSignalClaimed", 1, {"signal_id": "sig-00000002", "claimed_by": "ps-researcher", "score": 0.9}),
        ("AgentSignalFailed", 1, {"signal_id": "sig-00000002", "failed_by": "ps-researcher", "error": "no"}),
        (
            "AgentSignalClaimed",
            2,
            {"signal_id": "sig-00000003", "claimed_by": "ps-researcher", "score": 0.9, "token": "t-1"},
        ),
        (
            "AgentSignalClaimed",
            3,
            {
                "signal_id": "sig-00000004",
                "claimed_by": "ps-researcher",
                "score": 0.9,
                "token": "t-2",
                "concurrency_key": "api",
            },
        ),
        (  # 4: before a claim recorded its runner (nudges): read as none
            "AgentSignalClaimed",
            4,
            {
                "signal_id": "sig-00000005",
                "claimed_by": "ps-researcher",
                "score": 0.9,
                "token": "t-3",
                "concurrency_key": None,
                "reserved": {"usd": 0.5, "tokens": None},
            },
        ),
    ]
    usage = {  # a runner's run before resumes: no resumed_from (Completed and Failed 2, the others 1)
        "runner": "claude-code",
        "model": "claude-sonnet-5-5",
        "input_tokens": 100,
        "output_tokens": 20,
        "cost_usd": 0.0004,
        "turns": 1,
        "duration_ms": 900,
        "session_id": "s-1",
        "transcript_path": "/t.jsonl",
    }
    for n in (5, 6, 7):
        claim = {"signal_id": f"sig-{n:08x}", "claimed_by": "ps-researcher", "score": 0.9, "token": f"t-{n}"}
        rows.append(("AgentSignalClaimed", 3, {**claim, "concurrency_key": None}))
    rows += [
        (
            "AgentSignalCompleted",
            2,
            {"signal_id": "sig-00000005", "completed_by": "ps-researcher", "result": {}, "usage": usage},
        ),
        (
            "AgentSignalFailed",
            2,
            {"signal_id": "sig-00000006", "failed_by": "ps-researcher", "error": "no", "usage": usage},
        ),
        (
            "AgentSignalAttemptFailed",
            1,
            {
                "signal_id": "sig-00000007",  # posted with max_attempts 2
                "attempt": 1,
                "max_attempts": 2,
                "claimed_by": "ps-researcher",
                "reason": "max_turns reached",
                "retry_at": "2026-01-04T09:01:00+00:00",
                "expired": False,
                "usage": usage,
            },
        ),
        (
            "AgentSignalRunCharged",
            1,
            {
                "signal_id": "sig-00000007",
                "charged_to": "ps-researcher",
                "attempt": 1,
                "usage": usage,
                "reason": "its claim ended",
            },
        ),
    ]
    solve = [  # a solve run's own stream: SolveStarted of schema 1, before a resume's options
        (
            "SolveStarted",
            1,
            {
                "signal_id": None,
                "run_id": "solve-0000000a",
                "actor": "solve",
                "problem": "What is it?",
                "problem_key": "solve/solve-0000000a/problem",
                "controller": "first-finding",
                "runner": "command",
                "model": None,
                "max_iterations": 3,
                "specialists": ["ps-researcher"],
                "without_workers": [],
                "started_workers": [],
            },
        )
    ]
    options = {  # schema 2 added where a resume finds the run's process and options again
        "host": "host-1",
        "pid": 4141,
        "controller_ref": "first-finding",
        "step_timeout": 300.0,
        "start_workers": False,
        "workdir": None,
        "permission_mode": None,
        "allowed_tools": [],
    }
    solved_before = [  # another run: SolveStarted of schema 2, before a best answer was asked for at the limit
        ("SolveStarted", 2, {**solve[0][2], "run_id": "solve-0000000b", **options})
    ]
    stored = {(kind, schema) for kind, schema, _ in rows + solve + solved_before}
    assert set(events.UPCASTERS) <= stored, "an upcaster was added: store a row of the shape it upcasts here"
    _store(sql_engine, rows, "bb-old")
    _store(sql_engine, solve, "bb-old\x1esolve-0000000a", first_id=len(rows) + 1)
    _store(sql_engine, solved_before, "bb-old\x1esolve-0000000b", first_id=len(rows) + 2)
    board = SqlBoard(sql_engine)

    normal, fast = both_paths(board, page_size=3)

    assert fast == normal
    assert len(fast["blackboard_signals"]) == events.AgentSignalPosted.schema_version
    assert [r for r in fast["blackboard_signals"] if '["bug", "team:core"]' in r]  # labels_json: kept


def test_a_catch_up_with_nothing_to_fold_only_reads(sql_engine):
    """Queries and sweeps catch up all the time: with the rows at the log's end it must not take the write
    lock (BEGIN IMMEDIATE on SQLite) nor hold the projection, as the normal path never did."""
    from sqlalchemy import event

    board = SqlBoard(sql_engine)
    busy_board(board, 5, 20)
    projector = ReplayingProjector(board.store, board.read_model, page_size=7)
    seen: list[str] = []

    def note(_conn, _cursor, statement, *_):
        seen.append(" ".join(statement.split()).lower())

    event.listen(sql_engine, "before_cursor_execute", note)
    try:
        assert projector.catch_up() == 0
    finally:
        event.remove(sql_engine, "before_cursor_execute", note)

    writes = ("begin immediate", "insert", "update", "delete", "advisory")
    assert seen and not [s for s in seen if any(w in s for w in writes)], seen


def test_the_fast_writer_refuses_a_time_without_its_zone(sql_engine):
    """As `tables.Moment` does on the normal path: SQLite's text and PostgreSQL's COPY would both store a
    naive time as if it were in some zone."""
    from blackboard.infrastructure.persistence.tables import SIGNALS

    naive = ("sig-00000001", datetime(2026, 1, 5, 9, 0))
    with sql_engine.begin() as conn, pytest.raises(ValueError, match="naive datetimes are refused"):
        replay.DriverWriter().insert(conn, SIGNALS, ("signal_id", "created_at"), [naive])
