"""An event stored in an older schema loads through its upcaster."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from sqlalchemy import insert

from blackboard.domain import events
from blackboard.domain.blackboard import BlackboardAggregate, deadline
from blackboard.domain.events import AgentSignalFailed
from blackboard.domain.knowledge import permissions as key_permissions
from blackboard.domain.signals import SignalResult
from blackboard.infrastructure.persistence.event_store import SqlAlchemyEventStore
from blackboard.infrastructure.persistence.tables import EVENTS


def _store_posted(
    sql_engine, stream_id: str, schema_version: int, data: dict, at: datetime, event_id: str
) -> None:
    """One AgentSignalPosted row as an older version of the code wrote it."""
    with sql_engine.begin() as conn:
        conn.execute(
            insert(EVENTS).values(
                event_id=event_id,
                stream_id=stream_id,
                version=1,
                event_type="AgentSignalPosted",
                schema_version=schema_version,
                data=json.dumps(data),
                metadata="{}",
                occurred_at=at,
                recorded_at=at,
            )
        )


def test_a_row_of_an_older_schema_version_is_upcast_when_loaded(sql_engine, monkeypatch):
    # Suppose AgentSignalFailed is at schema 2, where version 1 called the error "message".
    monkeypatch.setattr(AgentSignalFailed, "schema_version", 2)
    monkeypatch.setitem(
        events.UPCASTERS,
        ("AgentSignalFailed", 1),
        lambda data: {**{k: v for k, v in data.items() if k != "message"}, "error": data["message"]},
    )
    at = datetime(2026, 1, 4, tzinfo=UTC)
    old_shape = {"signal_id": "sig-0000000a", "failed_by": "ps-researcher", "message": "no sources"}
    with sql_engine.begin() as conn:
        conn.execute(
            insert(EVENTS).values(
                event_id="6f1c1d7e-0000-4000-8000-000000000001",
                stream_id="bb-old",
                version=1,
                event_type="AgentSignalFailed",
                schema_version=1,
                data=json.dumps(old_shape),
                metadata="{}",
                occurred_at=at,
                recorded_at=at,
            )
        )

    (loaded,) = SqlAlchemyEventStore(sql_engine).load("bb-old")

    assert isinstance(loaded, AgentSignalFailed)
    assert (loaded.error, loaded.failed_by, loaded.occurred_at) == ("no sources", "ps-researcher", at)


def test_posted_and_claimed_events_of_schema_1_load_without_retry_link_or_token(sql_engine):
    """Schema 2 added AgentSignalPosted.retry_of and AgentSignalClaimed.token; rows written before load."""
    at = datetime(2026, 1, 4, tzinfo=UTC)
    posted_v1 = {
        "signal_id": "sig-0000000b",
        "signal_type": "RESEARCH",
        "payload": {"ps_id": "ps-1", "entry_id": "e-1", "topic": "t", "prompt": "", "context": {}},
        "target_capabilities": ["RESEARCH"],
        "posted_by": "ps-skill",
        "after": [],
        "dedupe_key": None,
    }
    claimed_v1 = {"signal_id": "sig-0000000b", "claimed_by": "ps-researcher", "score": 0.9}
    with sql_engine.begin() as conn:
        for version, (kind, data) in enumerate(
            [("AgentSignalPosted", posted_v1), ("AgentSignalClaimed", claimed_v1)], 1
        ):
            conn.execute(
                insert(EVENTS).values(
                    event_id=f"6f1c1d7e-0000-4000-8000-00000000001{version}",
                    stream_id="bb-v1",
                    version=version,
                    event_type=kind,
                    schema_version=1,
                    data=json.dumps(data),
                    metadata="{}",
                    occurred_at=at,
                    recorded_at=at,
                )
            )

    posted, claimed = SqlAlchemyEventStore(sql_engine).load("bb-v1")

    assert posted.retry_of is None and claimed.token is None
    board = BlackboardAggregate.replay("bb-v1", [posted, claimed])
    assert board.signal("sig-0000000b").claimed_by == "ps-researcher"
    board.complete_signal("sig-0000000b", "ps-researcher", SignalResult(), at)  # an old claim needs no token


def test_a_posted_event_of_schema_2_loads_with_no_key_permissions_and_restricts_nothing(sql_engine):
    """Schema 3 added AgentSignalPosted.read_keys and write_keys; a signal posted before has neither list."""
    at = datetime(2026, 1, 4, tzinfo=UTC)
    posted_v2 = {
        "signal_id": "sig-0000000c",
        "signal_type": "RESEARCH",
        "payload": {"ps_id": "ps-1", "entry_id": "e-1", "topic": "t", "prompt": "", "context": {}},
        "target_capabilities": ["RESEARCH"],
        "posted_by": "ps-skill",
        "after": [],
        "dedupe_key": None,
        "retry_of": None,
    }
    _store_posted(sql_engine, "bb-v2", 2, posted_v2, at, "6f1c1d7e-0000-4000-8000-000000000021")

    (posted,) = SqlAlchemyEventStore(sql_engine).load("bb-v2")

    assert (posted.read_keys, posted.write_keys) == ((), ())
    signal = BlackboardAggregate.replay("bb-v2", [posted]).signal("sig-0000000c")
    assert not key_permissions.restricts(signal)


def test_a_posted_event_of_schema_4_loads_with_the_default_priority_and_is_claimed_in_its_place(sql_engine):
    """Schema 5 added AgentSignalPosted.priority; a signal posted before is P2, the default."""
    at = datetime(2026, 1, 4, tzinfo=UTC)
    posted_v4 = {
        "signal_id": "sig-0000000d",
        "signal_type": "RESEARCH",
        "payload": {"ps_id": "ps-1", "entry_id": "e-1", "topic": "t", "prompt": "", "context": {}},
        "target_capabilities": ["RESEARCH"],
        "posted_by": "ps-skill",
        "after": [],
        "dedupe_key": None,
        "retry_of": None,
        "read_keys": [],
        "write_keys": [],
        "budget_usd": None,
    }
    _store_posted(sql_engine, "bb-v4", 4, posted_v4, at, "6f1c1d7e-0000-4000-8000-000000000041")

    (posted,) = SqlAlchemyEventStore(sql_engine).load("bb-v4")

    assert posted.priority == 2
    assert BlackboardAggregate.replay("bb-v4", [posted]).signal("sig-0000000d").priority == 2


def test_a_posted_event_of_schema_5_loads_claimable_at_once(sql_engine):
    """Schema 6 added AgentSignalPosted.not_before; a signal posted before is claimable at once."""
    at = datetime(2026, 1, 4, tzinfo=UTC)
    posted_v5 = {
        "signal_id": "sig-0000000e",
        "signal_type": "RESEARCH",
        "payload": {"ps_id": "ps-1", "entry_id": "e-1", "topic": "t", "prompt": "", "context": {}},
        "target_capabilities": ["RESEARCH"],
        "posted_by": "ps-skill",
        "after": [],
        "dedupe_key": None,
        "retry_of": None,
        "read_keys": [],
        "write_keys": [],
        "budget_usd": None,
        "priority": 1,
    }
    _store_posted(sql_engine, "bb-v5", 5, posted_v5, at, "6f1c1d7e-0000-4000-8000-000000000051")

    (posted,) = SqlAlchemyEventStore(sql_engine).load("bb-v5")

    assert (posted.not_before, posted.priority) == (None, 1)
    signal = BlackboardAggregate.replay("bb-v5", [posted]).signal("sig-0000000e")
    assert signal.due(at) and signal.claimable_since == at


def test_a_posted_event_of_schema_6_or_7_loads_as_no_gate(sql_engine):
    """Schema 8 added AgentSignalPosted.gate and gate_timeout_s (7 added max_attempts); a signal posted
    before is not a gate, and has no timeout of its own (schema 9's `timeout_s`)."""
    at = datetime(2026, 1, 4, tzinfo=UTC)
    posted_v6 = {
        "signal_id": "sig-0000000f",
        "signal_type": "DECISION",
        "payload": {"ps_id": "ps-1", "entry_id": "e-1", "topic": "t", "prompt": "", "context": {}},
        "target_capabilities": ["DECISION"],
        "posted_by": "ps-skill",
        "after": [],
        "dedupe_key": None,
        "retry_of": None,
        "read_keys": [],
        "write_keys": [],
        "budget_usd": None,
        "priority": 2,
        "not_before": None,
    }
    _store_posted(sql_engine, "bb-v6", 6, posted_v6, at, "6f1c1d7e-0000-4000-8000-000000000061")
    posted_v7 = {**posted_v6, "max_attempts": 3}
    _store_posted(sql_engine, "bb-v7", 7, posted_v7, at, "6f1c1d7e-0000-4000-8000-000000000071")

    for board, max_attempts in (("bb-v6", None), ("bb-v7", 3)):
        (posted,) = SqlAlchemyEventStore(sql_engine).load(board)

        assert (posted.gate, posted.timeout_s, posted.max_attempts) == (False, None, max_attempts)
        signal = BlackboardAggregate.replay(board, [posted]).signal("sig-0000000f")
        assert signal.is_claimable and not signal.gate


def test_a_posted_event_of_schema_8_keeps_its_gate_s_timeout_as_its_own_timeout(sql_engine):
    """Schema 9 renamed AgentSignalPosted.gate_timeout_s to timeout_s, which any signal may have: a gate
    stored with a timeout keeps it, and expires by it as before; a signal that was no gate has none (it
    waits for a worker, unless the reader's default post timeout is set)."""
    at = datetime(2026, 1, 4, tzinfo=UTC)
    gate_v8 = {
        "signal_id": "sig-0000001f",
        "signal_type": "DECISION",
        "payload": {"ps_id": "ps-1", "entry_id": "e-1", "topic": "ship it?", "prompt": "", "context": {}},
        "target_capabilities": ["DECISION"],
        "posted_by": "ps-lead",
        "after": [],
        "dedupe_key": None,
        "retry_of": None,
        "read_keys": [],
        "write_keys": [],
        "budget_usd": None,
        "priority": 2,
        "not_before": None,
        "max_attempts": None,
        "gate": True,
        "gate_timeout_s": 3600.0,
    }
    _store_posted(sql_engine, "bb-v8-gate", 8, gate_v8, at, "6f1c1d7e-0000-4000-8000-000000000081")
    work_v8 = {**gate_v8, "signal_type": "RESEARCH", "target_capabilities": ["RESEARCH"], "gate": False}
    _store_posted(
        sql_engine,
        "bb-v8-work",
        8,
        {**work_v8, "gate_timeout_s": None},
        at,
        "6f1c1d7e-0000-4000-8000-000000000082",
    )

    (gate,) = SqlAlchemyEventStore(sql_engine).load("bb-v8-gate")
    (work,) = SqlAlchemyEventStore(sql_engine).load("bb-v8-work")

    assert (gate.gate, gate.timeout_s, work.gate, work.timeout_s) == (True, 3600.0, False, None)
    opened = BlackboardAggregate.replay("bb-v8-gate", [gate]).signal("sig-0000001f")
    assert deadline(opened, None, timedelta(seconds=300)) == at + timedelta(hours=1)
    waiting = BlackboardAggregate.replay("bb-v8-work", [work]).signal("sig-0000001f")
    assert deadline(waiting, None, timedelta(seconds=300)) is None
    assert deadline(waiting, timedelta(seconds=30), timedelta(seconds=300)) == at + timedelta(seconds=30)


def test_a_posted_event_of_schema_9_loads_and_rebuilds_as_a_signal_of_no_flow(sql_engine):
    """Schema 10 added AgentSignalPosted.flow_id and step_id: a post stored before is of no flow, and its
    signal's row (a rebuild folds it) is in no flow's count."""
    from blackboard.infrastructure.persistence.projector import ReplayingProjector
    from blackboard.infrastructure.persistence.read_model import SqlSignalReadModel

    at = datetime(2026, 1, 5, tzinfo=UTC)
    posted_v9 = {
        "signal_id": "sig-00000091",
        "signal_type": "RESEARCH",
        "payload": {"ps_id": "ps-1", "entry_id": "e-1", "topic": "old work", "prompt": "", "context": {}},
        "target_capabilities": ["RESEARCH"],
        "posted_by": "ps-lead",
        "after": [],
        "dedupe_key": None,
        "retry_of": None,
        "read_keys": [],
        "write_keys": [],
        "budget_usd": None,
        "priority": 2,
        "not_before": None,
        "max_attempts": None,
        "gate": False,
        "timeout_s": None,
    }
    _store_posted(sql_engine, "bb-v9", 9, posted_v9, at, "6f1c1d7e-0000-4000-8000-000000000091")

    (posted,) = SqlAlchemyEventStore(sql_engine).load("bb-v9")
    read_model = SqlSignalReadModel(sql_engine)
    ReplayingProjector(SqlAlchemyEventStore(sql_engine), read_model).rebuild()

    assert (posted.flow_id, posted.step_id) == (None, None)
    signal = read_model.get("sig-00000091")
    assert signal is not None and (signal.flow_id, signal.step_id) == (None, None)
    assert read_model.flow_counts("bb-v9") == [] and read_model.flow_signals("bb-v9", "None") == []


def test_a_posted_event_of_schema_10_loads_and_rebuilds_as_an_unlabelled_signal(sql_engine):
    """Schema 11 added the payload's labels: a post stored before carries none, both when the log is read
    (the normal path) and when a rebuild folds it (the fast replay), and no label filter finds it; a row an
    older release wrote (its payload without labels, no labels_json) reads as unlabelled too."""
    from sqlalchemy import update

    from blackboard.application.ports import SignalFilter
    from blackboard.infrastructure.persistence.projector import ReplayingProjector
    from blackboard.infrastructure.persistence.read_model import SqlSignalReadModel
    from blackboard.infrastructure.persistence.tables import SIGNALS

    at = datetime(2026, 1, 5, tzinfo=UTC)
    payload = {"ps_id": "ps-1", "entry_id": "e-1", "topic": "old work", "prompt": "", "context": {}}
    posted_v10 = {
        "signal_id": "sig-00000101",
        "signal_type": "RESEARCH",
        "payload": payload,
        "target_capabilities": ["RESEARCH"],
        "posted_by": "ps-lead",
        "after": [],
        "dedupe_key": None,
        "retry_of": None,
        "read_keys": [],
        "write_keys": [],
        "budget_usd": None,
        "priority": 2,
        "not_before": None,
        "max_attempts": None,
        "gate": False,
        "timeout_s": None,
        "flow_id": None,
        "step_id": None,
    }
    _store_posted(sql_engine, "bb-v10", 10, posted_v10, at, "6f1c1d7e-0000-4000-8000-000000000101")

    (posted,) = SqlAlchemyEventStore(sql_engine).load("bb-v10")
    read_model = SqlSignalReadModel(sql_engine)
    ReplayingProjector(SqlAlchemyEventStore(sql_engine), read_model).rebuild()

    assert posted.payload.labels == () and posted.payload.topic == "old work"
    signal = read_model.get("sig-00000101")
    assert signal is not None and signal.payload.labels == ()
    assert read_model.find(SignalFilter(blackboard_id="bb-v10")) == [signal]
    assert read_model.find(SignalFilter(blackboard_id="bb-v10", labels=("bug",))) == []
    with sql_engine.begin() as conn:  # the row as a release before labels wrote it
        conn.execute(update(SIGNALS).values(payload_json=json.dumps(payload), labels_json=None))
    assert read_model.get("sig-00000101") == signal


def test_a_solve_started_of_schema_1_loads_with_the_options_a_resume_falls_back_on(sql_engine):
    """Schema 2 added SolveStarted's host, pid and the options a resume continues with (controller_ref,
    step_timeout, start_workers, workdir, permission_mode, allowed_tools); a run started before has none."""
    from blackboard.domain.solve.run import fold, with_process
    from blackboard.infrastructure.persistence.solve.log import SqlSolveLog

    at = datetime(2026, 1, 5, tzinfo=UTC)
    started_v1 = {
        "signal_id": None,
        "run_id": "solve-0000000a",
        "actor": "solve",
        "problem": "What is the number?",
        "problem_key": "solve/solve-0000000a/problem",
        "controller": "first-finding",
        "runner": "command",
        "model": None,
        "max_iterations": 3,
        "specialists": ["finder"],
        "without_workers": [],
        "started_workers": ["finder"],
    }
    with sql_engine.begin() as conn:
        conn.execute(
            insert(EVENTS).values(
                event_id="6f1c1d7e-0000-4000-8000-0000000000a1",
                stream_id="bb-s\x1esolve-0000000a",
                version=1,
                event_type="SolveStarted",
                schema_version=1,
                data=json.dumps(started_v1),
                metadata="{}",
                occurred_at=at,
                recorded_at=at,
            )
        )

    [record] = SqlSolveLog(sql_engine).history("bb-s", "solve-0000000a")

    started = record.event
    assert (started.controller_ref, started.step_timeout, started.start_workers) == (
        "first-finding",
        None,
        True,
    )
    assert (started.host, started.pid, started.workdir, started.allowed_tools) == (None, None, None, ())
    run = fold("solve-0000000a", "bb-s", [started])
    assert (run.state, run.process, run.max_iterations) == ("running", None, 3)
    assert with_process(run, None, at).state == "orphaned"  # no process ever said it drives it


def test_a_solve_started_of_schema_2_loads_asking_for_the_best_answer_at_the_limit(sql_engine):
    """Schema 3 added SolveStarted's `synthesis` (`--no-synthesis` turns it off); a run started before it
    asks for its best answer at the limit when a resume takes it there, as a run started now does."""
    from blackboard.domain.solve.run import fold
    from blackboard.infrastructure.persistence.solve.log import SqlSolveLog

    at = datetime(2026, 1, 6, tzinfo=UTC)
    started_v2 = {
        "signal_id": None,
        "run_id": "solve-0000000b",
        "actor": "solve",
        "problem": "What is the number?",
        "problem_key": "solve/solve-0000000b/problem",
        "controller": "first-finding",
        "runner": "command",
        "model": None,
        "max_iterations": 3,
        "specialists": ["finder"],
        "without_workers": [],
        "started_workers": [],
        "host": "host-1",
        "pid": 4141,
        "controller_ref": "first-finding",
        "step_timeout": 300.0,
        "start_workers": False,
        "workdir": None,
        "permission_mode": None,
        "allowed_tools": [],
    }
    with sql_engine.begin() as conn:
        conn.execute(
            insert(EVENTS).values(
                event_id="6f1c1d7e-0000-4000-8000-0000000000b1",
                stream_id="bb-s\x1esolve-0000000b",
                version=1,
                event_type="SolveStarted",
                schema_version=2,
                data=json.dumps(started_v2),
                metadata="{}",
                occurred_at=at,
                recorded_at=at,
            )
        )

    [record] = SqlSolveLog(sql_engine).history("bb-s", "solve-0000000b")

    assert record.event.synthesis is True
    run = fold("solve-0000000b", "bb-s", [record.event])
    assert (run.synthesis, run.synthesized, run.step_timeout, run.process) == (
        True,
        False,
        300.0,
        "host-1:4141",
    )
