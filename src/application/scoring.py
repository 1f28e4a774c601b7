"""Agents as they score for one signal: by declared capability, and by text for a signal targeting `auto`.

A signal posted with `--capability auto` keeps `auto` as its target in its event. Whenever it is scored
(post, match, claim, the worker's choice, `next`) each agent's text score for the signal's topic and prompt,
from the registry as it is then, becomes that agent's capability `auto` for it (docs/matching.md).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from blackboard.application.ports import AgentRegistry
from blackboard.domain.capabilities import AgentProfile, Claimant, Targeted, targets_auto


class Scored(Targeted, Protocol):
    """A signal or a candidate for one: what it targets and its text (topic and prompt)."""

    @property
    def text(self) -> str: ...


class Scorer:
    def __init__(self, registry: AgentRegistry) -> None:
        self._registry = registry

    def profiles(self, signal: Scored, agents: Iterable[AgentProfile] | None = None) -> list[Claimant]:
        """The agents (the whole registry by default) as they score for `signal`."""
        everyone = self._registry.get_all() if agents is None else list(agents)
        if not targets_auto(signal):
            return list(everyone)
        scores = self._registry.text_scores(signal.text)
        return [a.with_text_score(scores.get(a.agent_id, 0.0)) for a in everyone]

    def profile(self, agent: AgentProfile, signal: Scored) -> Claimant:
        return self.profiles(signal, (agent,))[0]
