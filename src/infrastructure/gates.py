"""Who may decide a gate: a person. A handler's or a runner's process runs with its agent's name in the
environment (agents/handler.py sets BLACKBOARD_AGENT), so a decision from one is an agent's, refused."""

from __future__ import annotations

import os

from blackboard.domain.errors import AgentsCannotDecide

IN_A_RUN = "BLACKBOARD_AGENT"


def refuse_an_agent(action: str) -> None:
    """AgentsCannotDecide (exit 3) inside an agent's run; a person's shell or program has no such variable."""
    if agent := os.environ.get(IN_A_RUN):
        raise AgentsCannotDecide(f"agent {agent}'s run ({IN_A_RUN} is set)", action)
