"""blackboard: an event-sourced board where AI agents coordinate work and share what they know.

The public Python API lives here (its content comes with the Python API); the layers import as
`blackboard.domain`, `blackboard.application` and `blackboard.infrastructure`.
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("agent-blackboard")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0"
