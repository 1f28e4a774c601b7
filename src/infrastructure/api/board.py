"""`Blackboard`: the calls of SignalCalls, KnowledgeCalls, SolveCalls and FlowCalls on one store."""

from __future__ import annotations

from blackboard.infrastructure.api.flows import FlowCalls
from blackboard.infrastructure.api.knowledge import KnowledgeCalls
from blackboard.infrastructure.api.signals import SignalCalls
from blackboard.infrastructure.api.solve import SolveCalls


class Blackboard(SignalCalls, KnowledgeCalls, SolveCalls, FlowCalls):
    """One board store, in process: `Blackboard()` opens the CLI's default (BLACKBOARD_DB, else
    `.blackboard/blackboard.db`), `Blackboard(url, agents_dir=...)` another. Each call is the CLI
    command of the same name and returns the document it prints with `--json`, typed; a refusal
    raises the exception of its exit code. Share one between threads; close it with `close()` or `with`.
    """
