"""dependency-injector as the adapters use it, imported without its web-framework hooks.

`dependency_injector.wiring` imports `starlette.requests` (and fastapi's and werkzeug's helpers) whenever
they are installed, only to leave such request objects alone when it patches a module. The `mcp` SDK
brings starlette into every install, and that import cost every command about 35 ms of start-up; no
module we wire holds one of those objects. So the hooks are hidden while the wiring module loads, and
are importable again right after it (the web view and the MCP server import starlette themselves).
"""

from __future__ import annotations

import sys

_HOOKS = ("starlette.requests", "fastapi.params", "werkzeug.local")


def _load_wiring_without_hooks() -> None:
    hidden = [name for name in _HOOKS if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment] - an import of it raises ImportError
    try:
        import dependency_injector.wiring  # noqa: F401
    finally:
        for name in hidden:
            if sys.modules.get(name, False) is None:
                del sys.modules[name]


_load_wiring_without_hooks()

from dependency_injector import containers, providers  # noqa: E402
from dependency_injector.wiring import Provide, inject  # noqa: E402

__all__ = ["Provide", "containers", "inject", "providers"]
