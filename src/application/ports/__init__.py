"""Ports: what the application needs from the outside world, stated as contracts adapters keep."""

from blackboard.application.errors import ConcurrencyConflict, StoreUnavailable  # the errors of these ports
from blackboard.application.ports.agents import AgentRegistry
from blackboard.application.ports.boards import (
    BoardHoldNeeded,
    BoardRows,
    BoardTransaction,
    Hold,
    Overdue,
    Scope,
    UnitOfWork,
)
from blackboard.application.ports.clock import Clock, IdGenerator
from blackboard.application.ports.log import EventStore, ImportedRange, Recorded, StoredEvent
from blackboard.application.ports.reading import (
    CLAIM_WAIT,
    RUN_TIME,
    BoardSignals,
    Durations,
    Look,
    SignalFilter,
    SignalReadModel,
    SignalState,
)
from blackboard.application.ports.telling import EventPublisher, LogNews, LogNotifier, Tracer

__all__ = [
    "ConcurrencyConflict",
    "StoreUnavailable",
    "EventStore",
    "ImportedRange",
    "Recorded",
    "StoredEvent",
    "BoardHoldNeeded",
    "BoardRows",
    "BoardTransaction",
    "Hold",
    "Overdue",
    "Scope",
    "UnitOfWork",
    "AgentRegistry",
    "BoardSignals",
    "CLAIM_WAIT",
    "Durations",
    "Look",
    "RUN_TIME",
    "SignalFilter",
    "SignalReadModel",
    "SignalState",
    "EventPublisher",
    "LogNews",
    "LogNotifier",
    "Tracer",
    "Clock",
    "IdGenerator",
]
