"""The agent registry's port: the agent files a worker and the controller choose from."""

from __future__ import annotations

import abc
from typing import TYPE_CHECKING

from blackboard.domain.capabilities import (
    AgentProfile,
)

if TYPE_CHECKING:
    pass

# ---------------------------------------------------------------- agents


class AgentRegistry(abc.ABC):
    """The agents that may claim signals."""

    @abc.abstractmethod
    def get_all(self) -> list[AgentProfile]:
        """Every registered agent, ordered by name."""

    def get(self, agent_id: str) -> AgentProfile | None:
        return next((a for a in self.get_all() if a.agent_id == agent_id), None)

    def text_scores(self, text: str) -> dict[str, float]:
        """Each agent's text relevance to `text` in 0..1, by name (`post --capability auto`, docs/matching.md);
        an agent left out scores 0. A registry without text matching scores everyone 0."""
        return {}

    def can_run(self, agent_id: str) -> bool:
        """Whether a worker has a handler to run for the agent (`runnable`); what `next` may propose."""
        return True

    def get_by_capability(self, capability: str) -> list[AgentProfile]:
        """Agents declaring the capability, best score first."""
        able = [a for a in self.get_all() if a.score_for_capability(capability) > 0]
        return sorted(able, key=lambda a: (-a.score_for_capability(capability), a.agent_id))
