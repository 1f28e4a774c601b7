"""The projector on SQL: catching up and rebuilding through the fast replay (`replay.py`), page by page."""

from __future__ import annotations

from blackboard.application.authority import Authority
from blackboard.application.ports import EventStore
from blackboard.application.projection import Progress, Projector
from blackboard.infrastructure.persistence.read_model import SqlSignalReadModel
from blackboard.infrastructure.persistence.replay import collector_paused


class ReplayingProjector(Projector):
    """`Projector` whose pages are read, decoded and written by the read model's `replay` (the log and the
    rows share one database): the same fold, the same pages, the same checkpoint after each page."""

    def __init__(
        self,
        store: EventStore,
        read_model: SqlSignalReadModel,
        page_size: int = 1000,
        authority: Authority | None = None,
    ) -> None:
        super().__init__(store, read_model, page_size, authority)
        self._rows = read_model

    def catch_up(self, progress: Progress | None = None, flat: bool = False) -> int:
        # nothing to fold (the usual case): the log's end and the rows' position compared in one statement (one
        # round trip before every read of the board), and no write transaction at all
        if not self._rows.behind():
            return 0
        folded, last = 0, None
        with collector_paused():  # for the whole replay: a collection between pages walks every signal kept
            while n := self._rows.replay(self._page_size, flat):
                folded += n
                if progress is not None:
                    reached = self._rows.position()
                    last = max(last or self._store.last_position(), reached)
                    progress(reached, last)
        return folded
