"""LangGraph on a board (docs/langgraph.md): imported only by those who use it (the `langgraph` extra)."""

from blackboard.infrastructure.langgraph.checkpointer import BlackboardSaver

__all__ = [
    "BlackboardSaver",
]
