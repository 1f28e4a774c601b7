"""Keeps the signal read model in step with the event log, and rebuilds it from scratch."""

from __future__ import annotations

from blackboard.application.ports import EventStore, SignalReadModel


class Projector:
    """Folds the events after the read model's position into it, page by page."""

    def __init__(self, store: EventStore, read_model: SignalReadModel, page_size: int = 1000) -> None:
        self._store = store
        self._read_model = read_model
        self._page_size = page_size

    def catch_up(self, until: int | None = None) -> int:
        """Fold every event not yet folded; return how many were. With `until`, a read model that
        has already reached that position (the store folded it) costs one query."""
        if until is not None and self._read_model.position() >= until:
            return 0
        folded = 0
        while page := self._store.read_all(after=self._read_model.position(), limit=self._page_size):
            self._read_model.apply(page)
            folded += len(page)
        return folded

    def rebuild(self) -> int:
        """Forget the read model and replay the whole log into it."""
        self._read_model.reset()
        return self.catch_up()
