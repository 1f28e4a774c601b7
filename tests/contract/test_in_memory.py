"""The contract suites against the in-memory adapters."""

import pytest

from blackboard.application.projection import Projector
from blackboard.infrastructure.memory.entries import InMemoryEntryReadModel
from blackboard.infrastructure.memory.rates import InMemoryRateWindows
from blackboard.infrastructure.memory.unit_of_work import InMemoryUnitOfWork
from tests.contract.entry_contract import EntryContract, Parts
from tests.contract.event_store_contract import EventStoreContract
from tests.contract.rate_windows_contract import RateParts, RateWindowsContract
from tests.contract.read_model_contract import ReadModelContract
from tests.fakes import InMemoryEventStore, InMemorySignalReadModel


class TestInMemoryEventStore(EventStoreContract):
    @pytest.fixture
    def store(self):
        return InMemoryEventStore()

    @pytest.fixture
    def empty_store(self):
        return InMemoryEventStore()


class TestInMemoryReadModel(ReadModelContract):
    @pytest.fixture
    def read_model(self):
        return InMemorySignalReadModel()


class TestInMemoryEntries(EntryContract):
    @pytest.fixture
    def parts(self):
        store, read_model = InMemoryEventStore(), InMemorySignalReadModel()
        return Parts(
            InMemoryUnitOfWork(store, read_model),
            InMemoryEntryReadModel(store, read_model),
            Projector(store, read_model),
            read_model,
        )


class TestInMemoryRateWindows(RateWindowsContract):
    @pytest.fixture
    def parts(self):
        store = InMemoryEventStore()
        return RateParts(InMemoryRateWindows(store), InMemoryUnitOfWork(store, InMemorySignalReadModel()))
