"""The Python API (primary adapter, like the CLI): the board in process, for frameworks and services.

`from blackboard import Blackboard, AsyncBlackboard` re-exports what is here. docs/python-api.md is the contract.
"""

from __future__ import annotations

from blackboard.infrastructure.api.asynchronous import AsyncBlackboard
from blackboard.infrastructure.api.board import Blackboard
from blackboard.infrastructure.api.errors import (
    BlackboardError,
    Closed,
    Conflict,
    InvalidInput,
    IterationsSpent,
    NotFound,
    Refused,
    TimedOut,
    Unavailable,
    UpgradeNeeded,
)

__all__ = [
    "AsyncBlackboard",
    "Blackboard",
    "BlackboardError",
    "Closed",
    "Conflict",
    "InvalidInput",
    "IterationsSpent",
    "NotFound",
    "Refused",
    "TimedOut",
    "Unavailable",
    "UpgradeNeeded",
]
