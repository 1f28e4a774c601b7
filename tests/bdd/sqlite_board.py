"""The features' Board on the real container over a SQLite file: its own event store, read model and unit
of work (the ones the CLI and workers use); the agents, clock, ids and dispatcher stay the test's, so the
steps can register agents, move time and listen, as they do on the in-memory core."""

from __future__ import annotations

from blackboard.application.ports import UnitOfWork
from blackboard.infrastructure.composition.container import Container
from blackboard.infrastructure.composition.settings import BlackboardSettings
from tests.fakes import Board


class SqliteBoard(Board):
    def __init__(self, url: str) -> None:
        self.on_file = Container(config=BlackboardSettings(db=url))
        super().__init__()
        self.store, self.read_model = self.on_file.event_store(), self.on_file.read_model()
        self.presence = self.on_file.presence()  # live workers in the file's table
        self.rewire()

    def unit_of_work(self) -> UnitOfWork:
        return self.on_file.unit_of_work()

    def close(self) -> None:
        self.on_file.engine().dispose()


def entry_read_model(board: Board):
    """The entries as the board's core reads them: the container's SQL tables on a file, else a fold in memory."""
    if isinstance(board, SqliteBoard):
        return board.on_file.entry_read_model()
    from blackboard.infrastructure.memory.entries import InMemoryEntryReadModel

    return InMemoryEntryReadModel(board.store, board.read_model)
