"""A worker's Python entrypoints run on lanes, watched by one supervisor thread: timeouts, the grace
period and lease renewals, on in-memory adapters with real threads."""

from __future__ import annotations

import dataclasses
import threading
import time
import uuid
from pathlib import Path

import pytest
from dependency_injector import providers

from blackboard.application.commands import PostSignal
from blackboard.domain.errors import StaleClaim
from blackboard.domain.signals import SignalStatus
from blackboard.infrastructure.agents.handler import ABANDONED, CANCELLED
from blackboard.infrastructure.agents.parsing import AgentDefinition
from blackboard.infrastructure.composition.settings import BlackboardSettings, worker_options
from blackboard.infrastructure.worker import Worker
from tests.fakes import Board, FixedAgentDefinitions, agent

HANDLER = """
import threading, time
release = threading.Event()  # the test lets a hanging call go once it is over
calls = []

def handle(document):
    calls.append(document["signal_id"])
    topic = document["payload"]["topic"]
    if topic == "hang":
        release.wait(30)
        return "late"
    if topic.startswith("sleep "):
        time.sleep(float(topic.split()[1]))
    if topic == "mutate":  # a handler that changes its document must change nothing else
        document["payload"]["topic"] = "changed"
        return type(document["payload"]).__name__ + " " + type(document["target_capabilities"]).__name__
    return {"artifact_path": "out/" + document["signal_id"] + ".md"}
"""
WORKER = agent("ps-py", RESEARCH=0.9)


@pytest.fixture
def module(tmp_path: Path):
    """A handler module of its own (imported modules are cached per process by name)."""
    name = f"lanes_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(HANDLER)
    yield name
    import sys

    loaded = sys.modules.get(name)
    if loaded is not None:
        loaded.release.set()


class SlowRenewals:
    """The service, with every lease renewal stuck on a held board or a slow network."""

    def __init__(self, service) -> None:
        self._service = service

    def renew_claim(self, command) -> None:
        time.sleep(3)

    def __getattr__(self, name: str):
        return getattr(self._service, name)


class LostClaims:
    """The service, finding every claim it is asked to renew taken over by another agent."""

    def __init__(self, service, signal_id: str) -> None:
        self._service = service
        self._signal_id = signal_id

    def renew_claim(self, command) -> None:
        raise StaleClaim(self._signal_id, "ps-other", "renewed")

    def __getattr__(self, name: str):
        return getattr(self._service, name)


class UnreadableUpstreams:
    """The queries, unable to read the signal a downstream signal's document needs."""

    def __init__(self, queries) -> None:
        self._queries = queries

    def get_signal(self, query):
        raise RuntimeError("upstream results unreadable")

    def __getattr__(self, name: str):
        return getattr(self._queries, name)


def board_running(definition: AgentDefinition) -> Board:
    board = Board()
    board.registry = FixedAgentDefinitions([definition])
    board.rewire()
    return board


def run_worker(board: Board, **options) -> tuple[Worker, threading.Thread]:
    defaults = worker_options(
        BlackboardSettings(head_start=0), WORKER.agent_id, once=False, blackboard_id=None
    )
    worker = board.container.worker(options=dataclasses.replace(defaults, **options))
    thread = threading.Thread(target=worker.run, daemon=True)
    thread.start()
    return worker, thread


def post(board: Board, topic: str, after: tuple[str, ...] = ()) -> str:
    command = PostSignal(signal_type="RESEARCH", ps_id="ps-1", entry_id="e-1", topic=topic, after=after)
    return board.service.post_signal(command).signal_id


def until(condition, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.01)


def test_an_entrypoint_past_its_timeout_fails_its_signal_while_the_others_complete(tmp_path, module):
    definition = AgentDefinition(
        profile=WORKER, path=tmp_path / "ps-py.md", entrypoint=f"{module}:handle", timeout=0.3
    )
    board = board_running(definition)
    hanging, quick = post(board, "hang"), post(board, "sleep 0.01")
    worker, thread = run_worker(board, concurrency=4)

    until(
        lambda: board.read_model.get(hanging).status.is_final and board.read_model.get(quick).status.is_final
    )
    worker.stop()
    thread.join(10)

    failed = board.read_model.get(hanging)
    assert failed.status is SignalStatus.FAILED and failed.result.error == "timed out after 0.3s" + ABANDONED
    assert board.read_model.get(quick).status is SignalStatus.COMPLETED
    assert not thread.is_alive() and worker.handled == 2


def test_a_stopped_worker_gives_up_on_a_running_entrypoint_once_the_grace_period_is_over(tmp_path, module):
    definition = AgentDefinition(
        profile=WORKER, path=tmp_path / "ps-py.md", entrypoint=f"{module}:handle", timeout=60
    )
    board = board_running(definition)
    hanging = post(board, "hang")
    worker, thread = run_worker(board, grace=0.2)
    until(lambda: board.read_model.get(hanging).status is SignalStatus.CLAIMED)

    stopped = time.monotonic()
    worker.stop()
    thread.join(10)

    failed = board.read_model.get(hanging)
    assert failed.status is SignalStatus.FAILED and failed.result.error == CANCELLED + ABANDONED
    assert not thread.is_alive() and 0.2 <= time.monotonic() - stopped < 5


def test_a_long_entrypoint_call_has_its_claim_renewed_and_then_completes(tmp_path, module):
    definition = AgentDefinition(
        profile=WORKER, path=tmp_path / "ps-py.md", entrypoint=f"{module}:handle", timeout=60
    )
    board = board_running(definition)
    slow = post(board, "sleep 0.5")
    worker, thread = run_worker(board, renew_every=0.1)

    until(lambda: board.read_model.get(slow).status.is_final)
    worker.stop()
    thread.join(10)

    assert board.read_model.get(slow).status is SignalStatus.COMPLETED
    assert board.read_model.get(slow).result.artifact_path == f"out/{slow}.md"
    assert board.event_types().count("AgentSignalClaimRenewed") >= 2


def test_a_call_that_returns_after_its_timeout_is_recorded_once_as_timed_out(tmp_path, module):
    import sys

    definition = AgentDefinition(
        profile=WORKER, path=tmp_path / "ps-py.md", entrypoint=f"{module}:handle", timeout=0.2
    )
    board = board_running(definition)
    hanging = post(board, "hang")
    worker, thread = run_worker(board)
    until(lambda: board.read_model.get(hanging).status is SignalStatus.FAILED)

    sys.modules[module].release.set()  # the abandoned call returns now, while the worker still runs
    time.sleep(0.3)
    worker.stop()
    thread.join(10)

    assert (
        board.event_types().count("AgentSignalFailed") == 1
        and "AgentSignalCompleted" not in board.event_types()
    )
    assert board.read_model.get(hanging).result.error.startswith("timed out after 0.2s")
    assert worker.handled == 1


def test_a_slow_renewal_does_not_hold_up_another_call_s_timeout(tmp_path, module):
    definition = AgentDefinition(
        profile=WORKER, path=tmp_path / "ps-py.md", entrypoint=f"{module}:handle", timeout=0.5
    )
    board = board_running(definition)
    hanging = post(board, "hang")
    board.container.service.override(providers.Object(SlowRenewals(board.service)))
    worker, thread = run_worker(board, renew_every=0.05)
    started = time.monotonic()

    until(lambda: board.read_model.get(hanging).status is SignalStatus.FAILED)
    took = time.monotonic() - started
    worker.stop()
    thread.join(10)

    assert took < 2.0, f"the timeout came {took:.2f}s after the claim"
    assert board.read_model.get(hanging).result.error.startswith("timed out after 0.5s")


def test_a_document_whose_upstream_results_cannot_be_read_fails_the_signal_with_the_reason(tmp_path, module):
    definition = AgentDefinition(
        profile=WORKER, path=tmp_path / "ps-py.md", entrypoint=f"{module}:handle", timeout=60
    )
    board = board_running(definition)
    upstream = post(board, "sleep 0")
    downstream = post(board, "sleep 0", after=(upstream,))
    board.container.queries.override(providers.Object(UnreadableUpstreams(board.queries)))
    worker, thread = run_worker(board)

    until(lambda: board.read_model.get(downstream).status.is_final)
    worker.stop()
    thread.join(10)

    assert board.read_model.get(upstream).status is SignalStatus.COMPLETED
    failed = board.read_model.get(downstream)
    assert failed.status is SignalStatus.FAILED
    assert (
        failed.result.error
        == "the worker could not run the handler: RuntimeError: upstream results unreadable"
    )


def test_a_renewal_that_finds_the_claim_lost_stops_the_call_naming_why(tmp_path, module):
    definition = AgentDefinition(
        profile=WORKER, path=tmp_path / "ps-py.md", entrypoint=f"{module}:handle", timeout=60
    )
    board = board_running(definition)
    hanging = post(board, "hang")
    board.container.service.override(providers.Object(LostClaims(board.service, hanging)))
    worker, thread = run_worker(board, renew_every=0.05)

    until(lambda: board.read_model.get(hanging).status is SignalStatus.FAILED)
    worker.stop()
    thread.join(10)

    error = board.read_model.get(hanging).result.error
    assert error.startswith(f"stopped: {hanging} is CLAIMED by ps-other") and error.endswith(ABANDONED)


def test_each_call_gets_a_document_of_its_own_made_of_json_values(tmp_path, module):
    definition = AgentDefinition(
        profile=WORKER, path=tmp_path / "ps-py.md", entrypoint=f"{module}:handle", timeout=60
    )
    board = board_running(definition)
    first, second = post(board, "mutate"), post(board, "mutate")
    worker, thread = run_worker(board)

    until(lambda: all(board.read_model.get(s).status.is_final for s in (first, second)))
    worker.stop()
    thread.join(10)

    for signal_id in (first, second):
        done = board.read_model.get(signal_id)
        assert done.status is SignalStatus.COMPLETED and done.result.knowledge_items == ("dict list",)
        assert done.payload.topic == "mutate"
