"""Whatever writes and resolutions the keys receive, replaying their events (a rebuild) gives the same
entries, conflicts and candidates: in memory, in the domain's own fold, and in SQLite's tables."""

from __future__ import annotations

from collections import defaultdict

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from blackboard.application.dispatcher import EventDispatcher
from blackboard.application.knowledge.commands import ResolveEntry, WriteEntry
from blackboard.application.knowledge.ports import EntryFilter
from blackboard.application.knowledge.service import KnowledgeService
from blackboard.application.projection import Projector
from blackboard.domain.errors import BlackboardError
from blackboard.domain.knowledge import rules as entry_rules
from blackboard.infrastructure.composition.settings import BlackboardSettings, store_settings
from blackboard.infrastructure.documents import entries as entry_documents
from blackboard.infrastructure.documents import entry as entry_document
from blackboard.infrastructure.documents import jsonable
from blackboard.infrastructure.memory.entries import InMemoryEntryReadModel
from blackboard.infrastructure.memory.unit_of_work import InMemoryUnitOfWork
from blackboard.infrastructure.persistence.engine import make_engine
from blackboard.infrastructure.persistence.event_store import SqlAlchemyEventStore
from blackboard.infrastructure.persistence.knowledge.read_model import SqlEntryReadModel
from blackboard.infrastructure.persistence.read_model import SqlSignalReadModel
from blackboard.infrastructure.persistence.tables import metadata
from blackboard.infrastructure.persistence.unit_of_work import SqlUnitOfWork
from tests.fakes import InMemoryEventStore, InMemorySignalReadModel, TickingClock

KEYS = st.sampled_from(["plan", "plan/a", "notes"])
AUTHORS = st.sampled_from(["ps-a", "ps-b", "ps-c"])
VALUES = st.sampled_from([0, 1, 1.0, True, "x", [1], {"k": 1}, None])
WRITE = st.tuples(
    st.just("write"), KEYS, AUTHORS, VALUES, st.none() | st.integers(0, 5), st.sampled_from([(), ("t",)])
)
RESOLVE = st.tuples(st.just("resolve"), KEYS, AUTHORS, VALUES, st.none() | st.integers(1, 6), st.just(()))
OPERATIONS = st.lists(st.one_of(WRITE, WRITE, RESOLVE), max_size=25)


def run(knowledge: KnowledgeService, operations) -> None:
    for kind, key, author, value, number, topics in operations:
        try:
            if kind == "write":
                knowledge.write(
                    WriteEntry(
                        blackboard_id="bb",
                        key=key,
                        author=author,
                        value=value,
                        replaces=number,
                        topics=topics,
                    )
                )
            else:
                choice = {"pick": number} if number is not None else {"value": value}
                knowledge.resolve(
                    ResolveEntry(blackboard_id="bb", key=key, author=author, rationale="why", **choice)
                )
        except BlackboardError:  # conflicts, stale versions, nothing to resolve: the rules at work
            pass


def documents(entries) -> list[dict]:
    return jsonable(entry_documents(entries.find(EntryFilter(blackboard_id="bb"))))


def replayed(entries) -> list[dict]:
    """The entries as the domain's fold gives them from the log alone."""
    streams = defaultdict(list)
    for record in entries.records("bb"):
        streams[record.event.key].append((record.event, record.position))
    return jsonable([entry_document(entry_rules.replay(pairs)) for _, pairs in sorted(streams.items())])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(OPERATIONS)
def test_in_memory_a_rebuild_gives_the_same_entries_conflicts_and_candidates(operations):
    store, read_model = InMemoryEventStore(), InMemorySignalReadModel()
    entries = InMemoryEntryReadModel(store, read_model)
    run(
        KnowledgeService(InMemoryUnitOfWork(store, read_model), EventDispatcher(), TickingClock()), operations
    )
    before = documents(entries)

    Projector(store, read_model).rebuild()

    assert documents(entries) == before == replayed(entries)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(OPERATIONS)
def test_in_sqlite_the_rows_a_write_leaves_are_what_a_rebuild_and_a_replay_give(operations):
    engine = make_engine(store_settings(BlackboardSettings(db="sqlite://")))
    metadata.create_all(engine)
    entries = SqlEntryReadModel(engine)
    run(KnowledgeService(SqlUnitOfWork(engine), EventDispatcher(), TickingClock()), operations)
    before = documents(entries)

    Projector(SqlAlchemyEventStore(engine), SqlSignalReadModel(engine), page_size=7).rebuild()

    assert documents(entries) == before == replayed(entries)
    engine.dispose()
