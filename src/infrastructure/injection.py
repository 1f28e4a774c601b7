"""dependency-injector as the adapters use it, imported without its optional hooks.

`dependency_injector.wiring` imports `starlette.requests` (and fastapi's and werkzeug's helpers) whenever
they are installed, only to leave such request objects alone when it patches a module. The `mcp` SDK
brings starlette into every install, and that import cost every command about 35 ms of start-up; no
module we wire holds one of those objects. Its providers import PyYAML and pydantic (or
pydantic-settings) for `Configuration.from_yaml` and `from_pydantic`, which we never call: another
40 ms, and a command that prints a signal from its row (`blackboard show`) needs neither. So these
modules are hidden while dependency-injector loads, and are importable again right after it (the web
view, the MCP server, the agent registry and the models import them themselves).
"""

from __future__ import annotations

import sys

# top-level packages: a finder is asked for a package before its modules (`starlette` before `.requests`)
_HOOKS = ("starlette", "fastapi", "werkzeug", "fast_depends", "yaml", "pydantic", "pydantic_settings")


class _Hidden:
    """A finder, first on sys.meta_path while dependency-injector loads, that finds the hooks missing
    (not None in sys.modules: the compiled providers take a None found there for the module)."""

    @staticmethod
    def find_spec(name: str, path: object = None, target: object = None) -> None:
        if name.partition(".")[0] in _HOOKS:
            raise ModuleNotFoundError(f"{name} is hidden while dependency-injector loads", name=name)


def _load_without_hooks() -> None:
    sys.meta_path.insert(0, _Hidden)  # type: ignore[arg-type]
    try:
        import dependency_injector.containers  # noqa: F401 - imports the providers and the wiring
    finally:
        sys.meta_path.remove(_Hidden)  # type: ignore[arg-type]


_load_without_hooks()

from dependency_injector import containers, providers  # noqa: E402
from dependency_injector.wiring import Provide, inject  # noqa: E402

__all__ = ["Provide", "containers", "inject", "providers"]
