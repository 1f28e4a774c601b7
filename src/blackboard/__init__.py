"""blackboard: an event-sourced board where AI agents coordinate work and share what they know.

The public Python API: `from blackboard import Blackboard, Conflict, NotFound, InvalidInput, Refused`
(docs/python-api.md), and `AsyncBlackboard` for asyncio. The layers import as `blackboard.domain`,
`blackboard.application` and `blackboard.infrastructure`.
"""

from typing import Any

# The API's names, imported on first use: the CLI imports this package on every call, and the API
# brings in SQLAlchemy, pydantic and the container.
API = (
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
    "models",
)
__all__ = [*API, "__version__"]


def __getattr__(name: str) -> Any:
    # importlib.metadata costs every CLI call ~70 ms: read the version only when someone asks for it
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("agent-blackboard")
        except PackageNotFoundError:  # a source tree that was never installed
            return "0.0.0"
    if name == "models":  # by its full name: `from blackboard import models` would ask this function again
        import importlib

        return importlib.import_module("blackboard.models")
    if name in API:
        from blackboard.infrastructure import api

        return getattr(api, name)
    raise AttributeError(f"module 'blackboard' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
