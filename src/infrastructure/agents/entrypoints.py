"""An agent file's Python `entrypoint` (`module.path:function`), imported once per process from the agent's folder.

The agent file's folder goes first on `sys.path` for the import, so `handlers/research.py` beside the
file imports as `handlers.research`. Afterwards the folder stays on the path, but last: a module the
handler imports later (inside its function) is still found, and the folder never shadows a module the
worker itself imports later. Imported modules are cached by Python (`sys.modules`), so two folders
cannot hold two different modules of the same name in one process; a worker runs one agent, so they
never need to. A changed module is seen after a restart, not before.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import os
import sys
import threading
from collections.abc import Callable
from typing import Any

from blackboard.domain.errors import InvalidInput
from blackboard.infrastructure.agents.parsing import AgentDefinition

Entrypoint = Callable[..., Any]  # function(document) or function(document, agent)

_loaded: dict[tuple[str, str], Entrypoint] = {}  # (agent folder, entrypoint) -> the function
_importing = threading.Lock()  # sys.path is shared by every thread of the process


class EntrypointNotLoadable(InvalidInput):
    """An agent's entrypoint cannot be imported, or does not name a function."""

    def __init__(self, agent: AgentDefinition, reason: str) -> None:
        super().__init__("entrypoint", f"{reason} (agent {agent.name}, {agent.path})")
        self.agent_name = agent.name
        self.entrypoint = agent.entrypoint


def load_entrypoint(agent: AgentDefinition) -> Entrypoint:
    """The function the agent's entrypoint names, imported on the first call and cached after it.

    Raises EntrypointNotLoadable when the agent names no entrypoint, when its module cannot be
    imported (the reason names the module and the import's error), or when the module has no such
    attribute or it is not callable. A failed import is not cached: the next call tries again.
    """
    if not agent.entrypoint:
        raise EntrypointNotLoadable(agent, "the agent file names no entrypoint")
    key = (os.path.dirname(os.path.abspath(agent.path)), agent.entrypoint)
    function = _loaded.get(key)
    if function is None:
        with _importing:
            function = _loaded.get(key) or _import(key[0], agent)
            _loaded[key] = function
    return function


def _import(folder: str, agent: AgentDefinition) -> Entrypoint:
    module_name, _, function_name = str(agent.entrypoint).partition(":")
    sys.path.insert(0, folder)
    importlib.invalidate_caches()  # a module written since the folder was last looked at is found
    try:
        module = importlib.import_module(module_name)
    except (Exception, SystemExit) as exc:  # whatever the module's own code raises while it loads
        raise EntrypointNotLoadable(
            agent, f"cannot import module {module_name} from {folder}: {type(exc).__name__}: {exc}"
        ) from exc
    finally:
        sys.path.remove(folder)  # the first occurrence: the one put in front above
        if folder not in sys.path:
            sys.path.append(folder)
    where = getattr(module, "__file__", None) or module_name
    if not hasattr(module, function_name):
        raise EntrypointNotLoadable(agent, f"module {module_name} ({where}) has no attribute {function_name}")
    function = getattr(module, function_name)
    if not callable(function):
        kind = type(function).__name__
        raise EntrypointNotLoadable(agent, f"{agent.entrypoint} is a {kind}, not a function (in {where})")
    return function


def invoke(function: Entrypoint, document: dict[str, Any], agent: dict[str, Any]) -> Any:
    """Call an entrypoint with the signal document, and with the agent too when it takes it: as a
    second positional argument, or as `agent=` when it names a parameter so. A one-argument function
    gets the document alone (the agent is in it as well, under `agent`)."""
    style = _style(function)
    if style == "keyword":
        return function(document, agent=agent)
    return function(document, agent) if style == "positional" else function(document)


@functools.lru_cache(maxsize=256)
def _style(function: Entrypoint) -> str:
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):  # a builtin without a signature: the one-argument call
        return "document"
    kinds = inspect.Parameter
    if any(
        p.name == "agent" and p.kind in (kinds.KEYWORD_ONLY, kinds.POSITIONAL_OR_KEYWORD)
        for p in parameters[1:]
    ):
        return "keyword"
    positional = [p for p in parameters if p.kind in (kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD)]
    takes_more = any(p.kind is kinds.VAR_POSITIONAL for p in parameters)
    return "positional" if len(positional) >= 2 or (takes_more and len(positional) <= 1) else "document"
