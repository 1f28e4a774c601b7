"""LangGraph on a board (docs/langgraph.md; `pip install 'agent-blackboard[langgraph]'`)."""

from blackboard.infrastructure.langgraph import *  # noqa: F403
from blackboard.infrastructure.langgraph import __all__  # noqa: F401
