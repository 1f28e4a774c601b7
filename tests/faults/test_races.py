"""Racing processes doing random claims, completions, failures, expiries, retries and entry writes on shared
boards: afterwards the event log shows one winner per claim, legal transitions only, only claimers
completing or failing, and the read model equal to a replay; no process surfaced a traceback or
"database is locked"."""

from __future__ import annotations

import json
from collections import Counter

from tests.faults.conftest import assert_clean, scaled

PROCESSES = 4


def test_racing_processes_leave_a_sound_log_and_read_model(fault_store, record_property):
    operations = scaled(120)
    # timeouts of half a second, so sweeps end signals while the others claim and complete them (a fast
    # machine can run all the operations inside the store's two seconds); --settle makes sure of one expiry
    quick = {"BLACKBOARD_POST_TIMEOUT": "0.5", "BLACKBOARD_CLAIM_TIMEOUT": "0.5"}
    actors = [fault_store.actor(seed, operations, "--settle", env=quick) for seed in range(PROCESSES)]
    done: Counter[str] = Counter()
    for n, actor in enumerate(actors):
        stdout, stderr = actor.communicate(timeout=600)
        assert_clean(stderr, f"actor {n}")
        assert actor.returncode == 0, f"actor {n} exited {actor.returncode}:\n{stderr[-4000:]}"
        counts = json.loads(stdout.splitlines()[-1])
        assert counts.pop("settle:posted") >= 1  # then saw a signal of its own expire (see the actor)
        done.update(counts)

    events = fault_store.assert_sound()

    assert done.total() == PROCESSES * operations
    assert done["wrong_claimer:accepted"] == 0  # refused: not the claimer (or the signal ended meanwhile)
    # the race did race: every kind of ending happened, and claims were contested
    for kind in (
        "AgentSignalClaimed",
        "AgentSignalCompleted",
        "AgentSignalFailed",
        "AgentSignalExpired",
        "EntryWritten",
    ):
        assert events.get(kind, 0) > 0, f"no {kind} in {events}"
    record_property("operations", dict(done))
    record_property("events", events)
    print(
        f"\n{PROCESSES} processes x {operations} operations: {dict(sorted(done.items()))}\nevents: {events}"
    )
