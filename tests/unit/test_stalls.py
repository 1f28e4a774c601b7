"""Stalled runs (docs/control.md, "Stalls"): the claimer's failure of a run that showed no progress records the
stall with it, in the same append, and the signal's retries decide what follows: one failed attempt, once."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta

from blackboard.domain.admission import admit
from blackboard.domain.blackboard import BlackboardAggregate
from blackboard.domain.events import (
    AgentSignalAttemptFailed,
    AgentSignalFailed,
    AgentSignalStalled,
)
from blackboard.domain.retries import AttemptRules, RetryPolicy
from blackboard.domain.signals import SignalPayload, SignalStatus, SignalType, Stall
from blackboard.infrastructure.persistence.codec import signal_from_row, signal_row
from blackboard.infrastructure.worker.runs import WorkerControl, stall_reason
from tests.fakes import T0, agent
from tests.waiting import wait_until

BB, A = "bb-1", "sig-0000000a"
RESEARCHER = agent("ps-researcher", RESEARCH=0.9)
PAYLOAD = SignalPayload(ps_id="PS-1", entry_id="e-1", topic="a run that goes quiet")
STALLED = "stalled: no output line, token or tool call for 30s (the agent file's stall_timeout is 30s)"


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def board_with(policy: RetryPolicy | None) -> BlackboardAggregate:
    board = BlackboardAggregate(BB)
    board.attempts = AttemptRules(policy_of=lambda _agent: policy, draw=lambda: 0.0)
    board.post_signal(
        signal_id=A, signal_type=SignalType.RESEARCH, payload=PAYLOAD, posted_by="ps-skill", at=at(0)
    )
    return board


def test_a_stalled_attempt_with_attempts_left_is_recorded_with_its_one_failure_and_retried():
    board = board_with(RetryPolicy(max_attempts=3, initial=1, max=1, jitter=0))
    board.claim_signal(A, RESEARCHER, at(1))
    before = len(board.pending_events)

    board.fail_signal(A, "ps-researcher", STALLED, at(31), stalled=30.0)

    recorded = board.pending_events[before:]
    assert [type(e) for e in recorded] == [AgentSignalStalled, AgentSignalAttemptFailed]
    stalled, failed = recorded
    assert (stalled.actor, stalled.seconds_idle, stalled.attempt) == ("ps-researcher", 30.0, 1)
    assert failed.attempt == 1 and failed.reason == STALLED
    signal = board.signal(A)
    assert signal.status is SignalStatus.POSTED and signal.attempt == 2 and len(signal.attempts) == 1
    assert signal.stalls == (Stall(attempt=1, actor="ps-researcher", seconds_idle=30.0, at=at(31)),)


def test_a_stall_on_the_last_attempt_fails_the_signal_saying_it_stalled():
    board = board_with(None)
    board.claim_signal(A, RESEARCHER, at(1))
    before = len(board.pending_events)

    board.fail_signal(A, "ps-researcher", STALLED, at(31), stalled=30.0)

    assert [type(e) for e in board.pending_events[before:]] == [AgentSignalStalled, AgentSignalFailed]
    signal = board.signal(A)
    assert signal.status is SignalStatus.FAILED and signal.result is not None
    assert signal.result.error == STALLED and [s.attempt for s in signal.stalls] == [1]


def test_a_failure_that_did_not_stall_records_no_stall():
    board = board_with(None)
    board.claim_signal(A, RESEARCHER, at(1))

    board.fail_signal(A, "ps-researcher", "exit 1", at(2))

    assert not any(isinstance(e, AgentSignalStalled) for e in board.pending_events)
    assert board.signal(A).stalls == ()


def test_an_import_admits_a_stall_with_its_failure_and_refuses_one_of_another_attempt():
    source = board_with(RetryPolicy(max_attempts=3, initial=1, max=1, jitter=0))
    source.claim_signal(A, RESEARCHER, at(1))
    source.fail_signal(A, "ps-researcher", STALLED, at(31), stalled=30.0)
    events = source.pending_events

    copy = BlackboardAggregate(BB)
    for event in events:
        admit(copy, event)
    assert copy.signal(A).stalls == source.signal(A).stalls

    replayed = BlackboardAggregate(BB)
    for event in events[:2]:  # posted, claimed
        admit(replayed, event)
    wrong = events[2].model_copy(update={"attempt": 2})
    try:
        admit(replayed, wrong)
    except Exception as refused:  # noqa: BLE001 - the rule's error, whichever it is
        assert "attempt 2 stalled while attempt 1 ran" in str(refused)
    else:
        raise AssertionError("a stall of another attempt was admitted")


def test_a_signal_s_stalls_survive_its_row():
    board = board_with(RetryPolicy(max_attempts=3, initial=1, max=1, jitter=0))
    board.claim_signal(A, RESEARCHER, at(1))
    board.fail_signal(A, "ps-researcher", STALLED, at(31), stalled=30.0)
    signal = board.signal(A)

    row = signal_row(signal)
    assert row["stalls"] == 1 and "seconds_idle" in row["stalls_json"]

    class Row:
        def __init__(self, values):
            self.__dict__.update(values, post_event_id=None)

    assert signal_from_row(Row(row)).stalls == signal.stalls
    assert signal.stalls[0].at.tzinfo is not None and signal.stalls[0].at.astimezone(UTC) == at(31)


def control(stall_timeout: float | None) -> WorkerControl:
    return WorkerControl(
        3600, threading.Event(), lambda: None, 3600, lambda: None, stall_timeout=stall_timeout
    )


def test_the_worker_s_control_stops_a_run_idle_for_its_stall_timeout_and_0_turns_that_off():
    idle, off, busy = control(0.2), control(0), control(0.2)
    busy_since = time.monotonic()

    def looked() -> bool:
        busy.progressed()  # progress all along: it never stalls
        return idle.stop_reason() is not None

    wait_until(looked, 30, "the idle run to stall")

    assert idle.stalled is not None and idle.stalled >= 0.2
    assert idle.stop_reason() == stall_reason(idle.stalled, 0.2)  # said again the same, never recounted
    assert idle.stop_reason().startswith("stalled: no output line, token or tool call for")
    assert off.stop_reason() is None and off.stalled is None  # idle as long, and 0: never
    assert busy.stop_reason() is None and busy.stalled is None and time.monotonic() - busy_since >= 0.2
