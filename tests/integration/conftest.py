"""A blackboard service over the real SQLAlchemy adapters, as the container builds them."""

from __future__ import annotations

import pytest
from dependency_injector import providers
from sqlalchemy import Engine

from blackboard.application.ports import UnitOfWork
from blackboard.application.service import Settings
from blackboard.infrastructure.composition.container import Container
from tests.fakes import Board, agent

AGENTS = (
    agent("ps-researcher", RESEARCH=0.9, INVESTIGATION=0.7),
    agent("ps-analyst", ANALYSIS=0.9, RESEARCH=0.85),
    agent("ps-reviewer", REVIEW=0.95),
)


class SqlBoard(Board):
    """tests.fakes.Board with the SQL event store, read model and unit of work in place of the fakes: the
    container's own, on the test's engine."""

    def __init__(self, engine: Engine, settings: Settings | None = None) -> None:
        self.engine = engine
        self.on_engine = Container()
        self.on_engine.engine.override(providers.Object(engine))
        super().__init__(*AGENTS, settings=settings)
        self.store, self.read_model = self.on_engine.event_store(), self.on_engine.read_model()
        self.rewire()

    def unit_of_work(self) -> UnitOfWork:
        return self.on_engine.unit_of_work()


@pytest.fixture
def sql_board(sql_engine) -> SqlBoard:
    return SqlBoard(sql_engine)
