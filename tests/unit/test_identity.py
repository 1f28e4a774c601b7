"""Where a caller comes from (infrastructure/keeper/identity.py): the run variables of a process's own environment, an
entrypoint's context, and a worker's process for as long as the worker runs in it."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from blackboard.application.callers import PERSON, Caller, Kind
from blackboard.infrastructure.keeper import identity, marks


def test_any_run_variable_makes_a_run_and_the_rest_are_what_it_presents(monkeypatch):
    for name in identity.RUN_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    assert identity.run_in({}) is None
    assert identity.run_in({identity.AGENT: ""}) == Caller(Kind.RUN)  # empty: a run that shows nothing
    env = marks.identity("ps-a", "sig-0000000a", "tok", "ps-1")  # what a worker starts a run with
    assert identity.run_in(env) == Caller(Kind.RUN, "ps-a", "sig-0000000a", "tok", "ps-1")
    monkeypatch.setenv(identity.AGENT, "ps-a")
    assert identity.process_caller() == Caller(Kind.RUN, "ps-a")


def test_an_entrypoint_s_context_is_its_run_only_while_it_runs_and_only_in_its_thread():
    run = Caller(Kind.RUN, "ps-a", "sig-0000000a", "tok", "ps-1")
    seen: list[Caller] = []
    with identity.running(run):
        inside = identity.current_caller()
        thread = threading.Thread(target=lambda: seen.append(identity.current_caller()))
        thread.start()
        thread.join()
    assert (inside, seen, identity.current_caller()) == (run, [PERSON], PERSON)


def test_a_worker_s_process_is_its_agent_s_while_the_worker_runs_and_is_named_so_then_only():
    comm = Path(f"/proc/{os.getpid()}/comm")
    before = comm.read_text().strip()
    with identity.hosting("ps-a"):
        during = (identity.process_caller(), comm.read_text().strip())
        below = subprocess.run(  # a child of the worker's process, its variables gone: a run showing no claim
            [
                sys.executable,
                "-c",
                "from blackboard.infrastructure.keeper import identity; print(identity.process_caller())",
            ],
            capture_output=True,
            text=True,
            env={k: v for k, v in os.environ.items() if k not in identity.RUN_VARIABLES},
        ).stdout
    assert during == (Caller(Kind.RUN, "ps-a"), identity.WORKER_NAME)
    assert "kind=<Kind.RUN" in below and "agent=None" in below
    assert (identity.process_caller(), comm.read_text().strip()) == (PERSON, before)


def test_the_web_view_decides_as_a_person_s_unless_it_was_started_inside_a_run(monkeypatch):
    for name in identity.RUN_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    assert identity.web_caller() == Caller(Kind.WEB)
    monkeypatch.setenv(identity.AGENT, "ps-a")
    assert identity.web_caller() == Caller(Kind.RUN, "ps-a")
