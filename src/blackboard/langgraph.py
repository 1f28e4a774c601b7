"""LangGraph on the board (`pip install 'agent-blackboard[langgraph]'`; docs/langgraph.md):
`from blackboard.langgraph import BlackboardStore`, LangGraph's long-term memory store over a board's entries."""

from typing import Any

# name -> the module that defines it (imported on first use: each needs the langgraph extra)
NAMES = {
    "BlackboardStore": "blackboard.infrastructure.langgraph.store",
    "ItemInConflict": "blackboard.infrastructure.langgraph.store",
    "ItemVersion": "blackboard.infrastructure.langgraph.store",
    "VersionConflict": "blackboard.infrastructure.langgraph.store",
}
__all__ = sorted(NAMES)


def __getattr__(name: str) -> Any:
    if name in NAMES:
        from importlib import import_module

        return getattr(import_module(NAMES[name]), name)
    raise AttributeError(f"module 'blackboard.langgraph' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
