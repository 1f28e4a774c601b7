"""Keeps the signal read model in step with the event log, and rebuilds it from scratch."""

from __future__ import annotations

from collections.abc import Callable

from blackboard.application.authority import Authority
from blackboard.application.callers import Act
from blackboard.application.ports import EventStore, SignalReadModel

Progress = Callable[[int, int], None]  # (position reached, last position)


class Projector:
    """Folds the events after the read model's position into it, page by page.

    Commands write their rows in their own transaction while the read model is live (its position
    is the log's end), so catching up has work only after `rebuild` cleared it, or when events came
    in some other way (an import).
    """

    def __init__(
        self,
        store: EventStore,
        read_model: SignalReadModel,
        page_size: int = 1000,
        authority: Authority | None = None,
    ) -> None:
        self._authority = authority or Authority()  # only a person rebuilds (application/callers.py)
        self._store = store
        self._read_model = read_model
        self._page_size = page_size

    def catch_up(self, progress: Progress | None = None, flat: bool = False) -> int:
        """Fold every event not yet folded; return how many were. `flat`: in memory flat in how many
        there are (an import's catch-up), where a catch-up from empty would keep every signal."""
        # nothing to fold (the usual case): the log's end first, then how far the rows are folded, so a
        # commit landing between the two reads only moves the second past the first. Read the other
        # way round, a commit in between looked like a page to fold, and folding it takes the
        # projection's lock exclusive, which every command then waited for (one per `get_signal` of a
        # busy worker, measured: two commands waiting on it on average, docs/performance.md)
        if self._store.last_position() <= self._read_model.position():
            return 0
        folded, last = 0, None
        while page := self._store.read_all(after=self._read_model.position(), limit=self._page_size):
            self._read_model.apply(page, flat=flat)
            folded += len(page)
            if progress is not None:
                last = max(last or self._store.last_position(), page[-1].position)
                progress(page[-1].position, last)
        return folded

    def rebuild(self, resume: bool = False, progress: Progress | None = None) -> int:
        """Fold the whole log into the read model again; with `resume`, carry on from where an
        interrupted rebuild stopped (each page moves the position with the rows it wrote).
        Commands go on meanwhile: they decide on the event log until the rebuild reaches its end."""
        self._authority.check(Act.REBUILD)
        if not resume:
            self._read_model.reset()
        return self.catch_up(progress)
