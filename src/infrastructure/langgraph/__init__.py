"""LangGraph on a board (docs/langgraph.md): imported only by those who use it (the `langgraph` extra)."""

from blackboard.infrastructure.langgraph.checkpointer import BlackboardSaver, UnreadableValue
from blackboard.infrastructure.langgraph.store import (
    BlackboardStore,
    ItemInConflict,
    ItemVersion,
    VersionConflict,
)

__all__ = [
    "BlackboardSaver",
    "BlackboardStore",
    "ItemInConflict",
    "ItemVersion",
    "UnreadableValue",
    "VersionConflict",
]
