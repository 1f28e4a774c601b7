"""The contract suites against the SQLAlchemy adapters, on a SQLite file and on PostgreSQL."""

import pytest

from blackboard.infrastructure.persistence.event_store import SqlAlchemyEventStore
from blackboard.infrastructure.persistence.read_model import SqlSignalReadModel
from tests.contract.event_store_contract import EventStoreContract
from tests.contract.read_model_contract import ReadModelContract


class TestSqlAlchemyEventStore(EventStoreContract):
    @pytest.fixture
    def store(self, sql_engine):
        return SqlAlchemyEventStore(sql_engine)


class TestSqlSignalReadModel(ReadModelContract):
    @pytest.fixture
    def read_model(self, sql_engine):
        return SqlSignalReadModel(sql_engine)
