"""A worker cut off from its board stops its runs once their claims lapse by its own clock: renewals that fail
(an outage) for the whole claim timeout end the run, naming the lapse, rather than letting it go on while the
board gives the work to another worker. In-memory adapters, real threads, a real handler process."""

from __future__ import annotations

import threading
import uuid

import pytest
from dependency_injector import providers

from blackboard.application.commands import PostSignal
from blackboard.application.errors import StoreUnavailable
from blackboard.domain.signals import SignalStatus
from blackboard.infrastructure.agents.handler import ABANDONED
from blackboard.infrastructure.agents.parsing import AgentDefinition
from blackboard.infrastructure.composition.settings import BlackboardSettings, worker_options
from tests.fakes import Board, FixedAgentDefinitions, agent
from tests.waiting import wait_until

WORKER = agent("ps-cut-off", RESEARCH=0.9)
HANDLER = """
import threading
release = threading.Event()

def handle(document):
    release.wait(60)
    return "late"
"""


class Outage:
    """The service, unable to reach its store for any renewal."""

    def __init__(self, service) -> None:
        self._service = service

    def renew_claim(self, command) -> None:
        raise StoreUnavailable("the database is unreachable")

    def __getattr__(self, name: str):
        return getattr(self._service, name)


@pytest.fixture
def module(tmp_path):
    name = f"leases_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(HANDLER)
    yield name
    import sys

    if (loaded := sys.modules.get(name)) is not None:
        loaded.release.set()


def lapsed_run(definition: AgentDefinition) -> str:
    """Run one signal under an outage, with a claim timeout of 1 s; its error once it failed."""
    board = Board()
    board.registry = FixedAgentDefinitions([definition])
    board.rewire()
    command = PostSignal(signal_type="RESEARCH", ps_id="ps-1", entry_id="e-1", topic="t")
    signal_id = board.service.post_signal(command).signal_id
    board.container.service.override(providers.Object(Outage(board.service)))
    # the worker's claim timeout (the board's own stays 300 s: its clock here is a fake one)
    settings = BlackboardSettings(head_start=0, claim_timeout=1.0)
    options = worker_options(settings, WORKER.agent_id, once=True, blackboard_id=None)
    worker = board.container.worker(options=options)
    thread = threading.Thread(target=worker.run, daemon=True)
    thread.start()
    try:
        wait_until(
            lambda: board.read_model.get(signal_id).status is SignalStatus.FAILED, 30, "the run to fail"
        )
    finally:
        worker.stop()
        thread.join(30)
    return board.read_model.get(signal_id).result.error


def test_a_command_whose_renewals_fail_for_the_claim_timeout_is_stopped_naming_the_lapse(tmp_path):
    definition = AgentDefinition(profile=WORKER, path=tmp_path / "a.md", command="sleep 60", timeout=60)

    error = lapsed_run(definition)

    assert error.startswith("stopped: its claim lapsed at ") and "(no renewal since " in error


def test_an_entrypoint_whose_renewals_fail_for_the_claim_timeout_is_given_up_naming_the_lapse(
    tmp_path, module
):
    definition = AgentDefinition(
        profile=WORKER, path=tmp_path / "a.md", entrypoint=f"{module}:handle", timeout=60
    )

    error = lapsed_run(definition)

    assert error.startswith("stopped: its claim lapsed at ") and error.endswith(ABANDONED)
