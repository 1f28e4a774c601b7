"""Test doubles (a ticking clock, ids in sequence, the in-memory adapters) and a Board the container builds on them."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta

from dependency_injector import providers

from blackboard.application.dispatcher import EventDispatcher
from blackboard.application.ports import Clock, IdGenerator, UnitOfWork
from blackboard.application.service import BlackboardService, Settings
from blackboard.domain.capabilities import AgentCapability, AgentProfile
from blackboard.infrastructure.agents.parsing import AgentDefinition
from blackboard.infrastructure.composition.container import Container
from blackboard.infrastructure.composition.settings import BlackboardSettings, service_settings
from blackboard.infrastructure.memory.agents import FixedAgentRegistry
from blackboard.infrastructure.memory.event_store import InMemoryEventStore
from blackboard.infrastructure.memory.presence import InMemoryPresenceStore
from blackboard.infrastructure.memory.read_model import InMemorySignalReadModel
from blackboard.infrastructure.memory.unit_of_work import InMemoryUnitOfWork
from blackboard.infrastructure.persistence.polling import PollingNotifier

T0 = datetime(2026, 1, 4, 9, 0, tzinfo=UTC)
# seed 003's rule: a POSTED signal no live worker fits expires 30 s after it became claimable; off by default
# (work waits for its worker), so a test of that rule sets it, as BLACKBOARD_POST_TIMEOUT=30 does
SEED_RULE = service_settings(BlackboardSettings(post_timeout=30))

__all__ = [
    "T0",
    "SEED_RULE",
    "TickingClock",
    "SequentialIds",
    "FixedAgentRegistry",
    "FixedAgentDefinitions",
    "InMemoryEventStore",
    "InMemorySignalReadModel",
    "agent",
    "Board",
    "CountingStore",
    "Container",
]


class TickingClock(Clock):
    """Each call returns one second later than the last; `advance` jumps ahead."""

    def __init__(self, start: datetime = T0, step: timedelta = timedelta(seconds=1)) -> None:
        self._now = start - step
        self._step = step

    def now(self) -> datetime:
        self._now += self._step
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += timedelta(seconds=seconds)


class SequentialIds(IdGenerator):
    def __init__(self) -> None:
        self._counter = itertools.count(1)

    def new_signal_id(self) -> str:
        return f"sig-{next(self._counter):08x}"


def agent(name: str, threshold: float | None = None, **scores: float) -> AgentProfile:
    """agent("ps-researcher", RESEARCH=0.9, INVESTIGATION=0.7)"""
    caps = tuple(AgentCapability(type=t, score=s) for t, s in scores.items())
    return AgentProfile(agent_id=name, capabilities=caps, threshold=threshold)


class FixedAgentDefinitions(FixedAgentRegistry):
    """Fixed agents with what a worker runs for each, as their files would say (`definition`)."""

    def __init__(self, definitions: Iterable[AgentDefinition]) -> None:
        self._definitions = {d.name: d for d in definitions}
        super().__init__(d.profile for d in self._definitions.values())

    def definition(self, agent_id: str) -> AgentDefinition | None:
        return self._definitions.get(agent_id)


class Board:
    """A service and its queries, built by the container over fresh in-memory adapters."""

    def __init__(self, *agents: AgentProfile, settings: Settings | None = None) -> None:
        self.store = InMemoryEventStore()
        self.read_model = InMemorySignalReadModel()
        self.registry = FixedAgentRegistry(agents)
        self.dispatcher = EventDispatcher()
        self.clock = TickingClock()
        self.settings = settings or service_settings(BlackboardSettings())
        self.ids = SequentialIds()
        self.presence = InMemoryPresenceStore()  # live workers, as their beats leave them
        self.rewire()

    def compose(self) -> Container:
        """A container over the current adapters, as a process of its own would build it."""
        container = Container(config=BlackboardSettings(claim_threshold=self.settings.claim_threshold))
        container.event_store.override(providers.Object(self.store))
        container.read_model.override(providers.Object(self.read_model))
        container.unit_of_work.override(providers.Object(self.unit_of_work()))
        container.agent_registry.override(providers.Object(self.registry))
        container.dispatcher.override(providers.Object(self.dispatcher))
        container.clock.override(providers.Object(self.clock))
        container.ids.override(providers.Object(self.ids))
        container.settings.override(providers.Object(self.settings))
        container.presence.override(providers.Object(self.presence))
        container.notifier.override(providers.Singleton(PollingNotifier, container.event_store))
        return container

    def rewire(self) -> None:
        """Build the service and queries over the current adapters (after swapping one)."""
        self.container = self.compose()
        self.service = self.container.service()
        self.queries = self.container.queries()

    def fresh_service(self) -> BlackboardService:
        """Another service on the same adapters: a new process would be like this."""
        return self.compose().service()

    def unit_of_work(self) -> UnitOfWork:
        """What the service writes through: in memory here, over the store and read model above."""
        return InMemoryUnitOfWork(self.store, self.read_model)

    def event_types(self) -> list[str]:
        return [r.event.event_type for r in self.store.read_all()]


class CountingStore:
    """Wraps an event store and remembers the `after_version` of every load."""

    def __init__(self, store) -> None:
        self._store = store
        self.loads: list[int] = []

    def load(self, blackboard_id, after_version=0):
        self.loads.append(after_version)
        return self._store.load(blackboard_id, after_version)

    def __getattr__(self, name):
        return getattr(self._store, name)
