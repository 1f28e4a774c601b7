"""A blackboard service over the real SQLAlchemy adapters."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine

from blackboard.application.service import Settings
from blackboard.infrastructure.persistence.event_store import SqlAlchemyEventStore
from blackboard.infrastructure.persistence.read_model import SqlSignalReadModel
from blackboard.infrastructure.persistence.unit_of_work import SqlUnitOfWork
from tests.fakes import Board, agent

AGENTS = (
    agent("ps-researcher", RESEARCH=0.9, INVESTIGATION=0.7),
    agent("ps-analyst", ANALYSIS=0.9, RESEARCH=0.85),
    agent("ps-reviewer", REVIEW=0.95),
)


class SqlBoard(Board):
    """tests.fakes.Board with the SQL event store, read model and unit of work in place of the fakes."""

    def __init__(self, engine: Engine, settings: Settings | None = None) -> None:
        self.engine = engine
        super().__init__(*AGENTS, settings=settings)
        self.store = SqlAlchemyEventStore(engine)
        self.read_model = SqlSignalReadModel(engine)
        self.rewire()

    def unit_of_work(self) -> SqlUnitOfWork:
        return SqlUnitOfWork(self.engine)


@pytest.fixture
def sql_board(sql_engine) -> SqlBoard:
    return SqlBoard(sql_engine)
