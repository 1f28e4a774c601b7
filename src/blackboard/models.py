"""The documents the Python API returns, typed (`from blackboard.models import Signal, Entry`)."""

from blackboard.infrastructure.api.models import (
    Agent,
    Agents,
    Candidates,
    Document,
    Entries,
    Entry,
    Event,
    Events,
    History,
    HistoryVersion,
    Listing,
    Match,
    Payload,
    Ranking,
    Result,
    Signal,
    Signals,
    Summary,
    Version,
    WatchedSignal,
)

__all__ = ["Agent", "Agents", "Candidates", "Document", "Entries", "Entry", "Event", "Events", "History",
           "HistoryVersion", "Listing", "Match", "Payload", "Ranking", "Result", "Signal", "Signals", "Summary",
           "Version", "WatchedSignal"]
