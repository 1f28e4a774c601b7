"""A fixed list of agents, for tests and the scripted demo."""

from __future__ import annotations

from collections.abc import Iterable

from blackboard.application.ports import AgentRegistry
from blackboard.domain.capabilities import AgentProfile


class FixedAgentRegistry(AgentRegistry):
    def __init__(self, agents: Iterable[AgentProfile] = ()) -> None:
        self._agents = {a.agent_id: a for a in agents}

    def add(self, agent: AgentProfile) -> None:
        self._agents[agent.agent_id] = agent

    def use_run_options(self, runner: str | None, model: str | None) -> None:
        """A worker's --runner and --model change nothing here: the profiles' spending is as given."""

    def get_all(self) -> list[AgentProfile]:
        return sorted(self._agents.values(), key=lambda a: a.agent_id)
