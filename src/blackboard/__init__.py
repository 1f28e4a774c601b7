"""blackboard: an event-sourced board where AI agents coordinate work and share what they know.

The public Python API lives here (its content comes with the Python API); the layers import as
`blackboard.domain`, `blackboard.application` and `blackboard.infrastructure`.
"""

from typing import Any


def __getattr__(name: str) -> Any:
    # importlib.metadata costs every CLI call ~70 ms: read the version only when someone asks for it
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("agent-blackboard")
        except PackageNotFoundError:  # a source tree that was never installed
            return "0.0.0"
    raise AttributeError(f"module 'blackboard' has no attribute {name!r}")
