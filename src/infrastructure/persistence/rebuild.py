"""Rebuilding the signal read model by replaying the whole event log, page by page."""

from __future__ import annotations

from collections.abc import Callable

from sqlalchemy import Engine

from blackboard.infrastructure.persistence import projection
from blackboard.infrastructure.persistence.engine import write_transaction
from blackboard.infrastructure.persistence.event_store import SqlAlchemyEventStore
from blackboard.infrastructure.persistence.projection import FoldCache

Progress = Callable[[int, int], None]  # (position reached, last position)


class BlackboardProjectionRebuilder:
    """Clears the read model and folds every event into it again, one transaction per page.

    Each page moves the checkpoint with the rows it wrote, so a rebuild that stops half way
    resumes where it stopped (`rebuild(resume=True)`), and folding a page twice changes nothing.
    While it runs, appends leave the read model to it; once it reaches the end they fold again.
    """

    def __init__(self, engine: Engine, page_size: int = 5000) -> None:
        self._engine = engine
        self._store = SqlAlchemyEventStore(engine, project=False)
        self._page_size = page_size

    def rebuild(self, resume: bool = False, progress: Progress | None = None) -> int:
        """Returns the number of events folded."""
        with write_transaction(self._engine) as conn:
            if not resume:
                projection.clear(conn)
            reached = projection.checkpoint(conn)
        cache = FoldCache(complete=reached == 0)  # from empty, every signal passes through the cache
        folded, last = 0, self._store.last_position()
        while page := self._store.read_all(after=reached, limit=self._page_size):
            with write_transaction(self._engine) as conn:
                if projection.checkpoint(conn) != reached:
                    cache = FoldCache()  # someone else folded in between: what we hold may be stale
                folded += projection.fold(conn, page, cache)
            reached = page[-1].position
            if progress:
                progress(reached, max(last, reached))
        return folded
