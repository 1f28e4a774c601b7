"""The contract suites against the in-memory adapters."""

import pytest

from tests.contract.event_store_contract import EventStoreContract
from tests.contract.read_model_contract import ReadModelContract
from tests.fakes import InMemoryEventStore, InMemorySignalReadModel


class TestInMemoryEventStore(EventStoreContract):
    @pytest.fixture
    def store(self):
        return InMemoryEventStore()


class TestInMemoryReadModel(ReadModelContract):
    @pytest.fixture
    def read_model(self):
        return InMemorySignalReadModel()
