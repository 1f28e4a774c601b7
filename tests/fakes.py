"""Test doubles: a clock that ticks one second per call, ids in sequence, and the in-memory adapters."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

from blackboard.application.dispatcher import EventDispatcher
from blackboard.application.ports import Clock, IdGenerator
from blackboard.application.projection import Projector
from blackboard.application.queries import BlackboardQueries
from blackboard.application.service import BlackboardService, Settings
from blackboard.domain.capabilities import AgentCapability, AgentProfile
from blackboard.infrastructure.memory.agents import FixedAgentRegistry
from blackboard.infrastructure.memory.event_store import InMemoryEventStore
from blackboard.infrastructure.memory.read_model import InMemorySignalReadModel
from blackboard.infrastructure.memory.unit_of_work import InMemoryUnitOfWork

T0 = datetime(2026, 1, 4, 9, 0, tzinfo=UTC)

__all__ = [
    "T0",
    "TickingClock",
    "SequentialIds",
    "FixedAgentRegistry",
    "InMemoryEventStore",
    "InMemorySignalReadModel",
    "agent",
    "Board",
    "CountingStore",
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


class Board:
    """A service and its queries wired to fresh in-memory adapters."""

    def __init__(self, *agents: AgentProfile, settings: Settings | None = None) -> None:
        self.store = InMemoryEventStore()
        self.read_model = InMemorySignalReadModel()
        self.registry = FixedAgentRegistry(agents)
        self.dispatcher = EventDispatcher()
        self.clock = TickingClock()
        self.settings = settings or Settings()
        self.ids = SequentialIds()
        self.rewire()

    def rewire(self) -> None:
        """Build the service and queries over the current adapters (after swapping one)."""
        self.service = self.fresh_service()
        self.queries = BlackboardQueries(self.store, self.read_model, self.registry, self.settings.claim_threshold)

    def fresh_service(self) -> BlackboardService:
        """Another service on the same adapters: a new process would be like this."""
        return BlackboardService(
            self.unit_of_work(), self.read_model, self.registry, self.dispatcher,
            self.clock, self.ids, self.settings, Projector(self.store, self.read_model),
        )

    def unit_of_work(self):
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
