"""Read side: queries answered from the read model and the event log, never by replaying a board."""

from __future__ import annotations

from dataclasses import dataclass, field

from blackboard.application.commands import GetOpenSignals, GetSignalById, ListSignals, WatchSignals
from blackboard.application.ports import AgentRegistry, EventStore, SignalFilter, SignalReadModel
from blackboard.application.projection import Projector
from blackboard.domain.capabilities import Volunteer, rank
from blackboard.domain.errors import SignalNotFound
from blackboard.domain.events import AgentSignalCompleted
from blackboard.domain.signals import AgentSignal, Candidate


@dataclass(frozen=True, slots=True)
class WatchResult:
    """Completions found, and the position to pass as `since` next time."""

    signals: list[AgentSignal]
    position: int
    # the log position of each signal's completion: `since` that sees the signals after this one
    completed_at: list[int] = field(default_factory=list)


class BlackboardQueries:
    def __init__(
        self,
        store: EventStore,
        read_model: SignalReadModel,
        registry: AgentRegistry,
        claim_threshold: float,
    ) -> None:
        self._store = store
        self._read_model = read_model
        self._registry = registry
        self._threshold = claim_threshold
        self._projector = Projector(store, read_model)

    def get_signal(self, query: GetSignalById) -> AgentSignal:
        self._projector.catch_up()
        signal = self._read_model.get(query.signal_id)
        if signal is None:
            raise SignalNotFound(query.signal_id)
        return signal

    def open_candidates(self, query: GetOpenSignals) -> list[Candidate]:
        """POSTED signals whose dependencies completed, targeting any of the capabilities, oldest
        first, as candidates: enough to choose which to claim."""
        if query.catch_up:
            self._projector.catch_up()
        return self._read_model.candidates(query.capabilities, query.limit, query.blackboard_id)

    def list_signals(self, query: ListSignals) -> list[AgentSignal]:
        self._projector.catch_up()
        return self._read_model.find(
            SignalFilter(
                status=query.status,
                signal_type=query.signal_type,
                capabilities=(query.capability,) if query.capability else (),
                blackboard_id=query.blackboard_id,
                limit=query.limit,
            )
        )

    def watch(self, query: WatchSignals) -> WatchResult:
        """Signals of the given types that completed after position `since`, in completion order."""
        self._projector.catch_up()
        position, found, at = query.since, [], []
        while page := self._store.read_all(after=position, limit=1000):
            for record in page:
                if isinstance(record.event, AgentSignalCompleted):
                    signal = self._read_model.get(record.event.signal_id)
                    if signal and signal.signal_type in query.signal_types and (
                        query.blackboard_id in (None, signal.blackboard_id)
                    ):
                        found.append(signal)
                        at.append(record.position)
            position = page[-1].position
        return WatchResult(found, position, at)

    def match(self, query: GetSignalById) -> list[Volunteer]:
        """Every registered agent ranked by its score for the signal; `passes` marks who may claim."""
        signal = self.get_signal(query)
        return rank(signal, self._registry.get_all(), self._threshold)
