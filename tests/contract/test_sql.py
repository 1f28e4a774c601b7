"""The contract suites against the SQLAlchemy adapters, on a SQLite file and on PostgreSQL."""

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from blackboard.application.projection import Projector
from blackboard.domain.knowledge import rules as entry_rules
from blackboard.infrastructure.composition.settings import BlackboardSettings, store_settings
from blackboard.infrastructure.persistence.engine import make_engine
from blackboard.infrastructure.persistence.event_store import SqlAlchemyEventStore
from blackboard.infrastructure.persistence.knowledge.read_model import SqlEntryReadModel
from blackboard.infrastructure.persistence.rate_windows import SqlRateWindows
from blackboard.infrastructure.persistence.read_model import SqlSignalReadModel
from blackboard.infrastructure.persistence.schema import ensure_schema
from blackboard.infrastructure.persistence.tables import metadata
from blackboard.infrastructure.persistence.unit_of_work import SqlUnitOfWork
from tests.contract.entry_contract import EntryContract, Parts
from tests.contract.event_store_contract import EventStoreContract
from tests.contract.rate_windows_contract import RateParts, RateWindowsContract
from tests.contract.read_model_contract import ReadModelContract
from tests.fakes import TickingClock


class TestSqlAlchemyEventStore(EventStoreContract):
    @pytest.fixture
    def store(self, sql_engine):
        return SqlAlchemyEventStore(sql_engine)

    @pytest.fixture
    def empty_store(self, request, sql_engine, tmp_path):
        """A second database of the same kind: a SQLite file, or the run's second PostgreSQL database."""
        if request.node.callspec.params["sql_engine"] == "sqlite":
            engine = make_engine(store_settings(BlackboardSettings(db=f"sqlite:///{tmp_path / 'other.db'}")))
            ensure_schema(engine)
            request.addfinalizer(engine.dispose)
            return SqlAlchemyEventStore(engine)
        engine = request.getfixturevalue("pg_other_engine")
        return SqlAlchemyEventStore(engine)


@pytest.fixture(scope="session")
def pg_other_session_engine(pg_database_url):
    """Another PostgreSQL database next to the run's, for what moves between stores (an import)."""
    url = make_url(pg_database_url)
    admin = create_engine(url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    name = f"{url.database}_other"
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    engine = make_engine(
        store_settings(BlackboardSettings(db=url.set(database=name).render_as_string(hide_password=False)))
    )
    ensure_schema(engine)
    yield engine
    engine.dispose()
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


@pytest.fixture
def pg_other_engine(pg_other_session_engine):
    with pg_other_session_engine.begin() as conn:
        tables = [t.name for t in metadata.sorted_tables] + ["entry_search"]  # + the search index
        conn.execute(text(f"TRUNCATE {', '.join(tables)} RESTART IDENTITY"))
    return pg_other_session_engine


class TestSqlSignalReadModel(ReadModelContract):
    @pytest.fixture
    def read_model(self, sql_engine):
        return SqlSignalReadModel(sql_engine)


class TestSqlEntries(EntryContract):
    @pytest.fixture
    def parts(self, sql_engine):
        read_model = SqlSignalReadModel(sql_engine)
        return Parts(
            SqlUnitOfWork(sql_engine),
            SqlEntryReadModel(sql_engine),
            Projector(SqlAlchemyEventStore(sql_engine), read_model),
            read_model,
        )

    def test_an_error_inside_the_transaction_writes_neither_events_nor_row(self, parts):
        """A real transaction rolls back the events and the row together (memory appends at once)."""
        with pytest.raises(RuntimeError), parts.uow.entry("bb-1", "plan") as tx:
            event = entry_rules.write(
                tx.load(), "bb-1", "plan", {"author": "ps-a", "value": 1}, TickingClock().now()
            )
            tx.commit([event], {})
            raise RuntimeError("the decision failed after the commit call")

        assert parts.entries.get("bb-1", "plan") is None and parts.entries.records("bb-1") == []


def test_on_postgresql_writers_of_other_keys_and_claimers_do_not_wait_on_a_held_key(pg_engine):
    """An entry key is its own boundary: while one transaction holds key `a`, key `b` and the board commit."""
    from concurrent.futures import ThreadPoolExecutor

    from blackboard.application.dispatcher import EventDispatcher
    from blackboard.application.knowledge.commands import WriteEntry
    from blackboard.application.knowledge.service import KnowledgeService
    from blackboard.application.ports import Scope

    uow = SqlUnitOfWork(pg_engine)
    knowledge = KnowledgeService(uow, EventDispatcher(), TickingClock())

    def write_b():
        return knowledge.write(WriteEntry(blackboard_id="bb-1", key="b", author="ps-b", value=1))

    def hold_board():
        with uow.board("bb-1") as tx:
            return tx.load(Scope()).version

    with uow.entry("bb-1", "a") as tx, ThreadPoolExecutor(2) as pool:
        tx.load()
        other_key, board = pool.submit(write_b), pool.submit(hold_board)

        assert other_key.result(timeout=10).current.version == 1
        assert board.result(timeout=10) == 0


def test_on_postgresql_a_second_writer_of_the_same_key_waits_for_the_first(pg_engine):
    import threading

    from blackboard.application.dispatcher import EventDispatcher
    from blackboard.application.knowledge.commands import WriteEntry
    from blackboard.application.knowledge.service import KnowledgeService

    uow = SqlUnitOfWork(pg_engine)
    knowledge = KnowledgeService(uow, EventDispatcher(), TickingClock())
    done = threading.Event()

    def write_a():
        knowledge.write(WriteEntry(blackboard_id="bb-1", key="a", author="ps-b", value=2))
        done.set()

    with uow.entry("bb-1", "a") as tx:
        tx.load()
        threading.Thread(target=write_a, daemon=True).start()
        assert not done.wait(0.5)  # held: the second writer queues on the key's lock
    assert done.wait(10)


class TestSqlRateWindows(RateWindowsContract):
    @pytest.fixture
    def parts(self, sql_engine):
        return RateParts(SqlRateWindows(sql_engine), SqlUnitOfWork(sql_engine))
