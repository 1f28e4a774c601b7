"""A signal that only agents with nothing to run fit: said when it is posted, not found out when it expires."""

from __future__ import annotations

from typing import TYPE_CHECKING

from blackboard.application.scoring import Scorer
from blackboard.domain.capabilities import rank
from blackboard.domain.signals import AgentSignal, SignalStatus

if TYPE_CHECKING:
    from blackboard.infrastructure.agents.registry import FrontmatterAgentRegistry


def unrunnable_warning(signal: AgentSignal, registry: FrontmatterAgentRegistry) -> str | None:
    """A warning when no agent that may claim the signal can be run by a worker (no handler, and a runner
    that cannot start), so only a claim by hand takes it; None when one of them can run, or none fits."""
    if signal.status is not SignalStatus.POSTED:
        return None
    scored = Scorer(registry).profiles(signal)  # by text for a signal targeting auto
    fitting = [v.agent.agent_id for v in rank(signal, scored, registry.default_threshold) if v.passes]
    definitions = [d for d in map(registry.definition, fitting) if d is not None]
    if not definitions or any(d.runnable for d in definitions):
        return None
    names = ", ".join(d.name for d in definitions)
    why = "; ".join(dict.fromkeys(str(d.runner_missing) for d in definitions))
    return (
        f"only agents no worker can run fit {signal.signal_id} ({names}): {why}; "
        f"so it waits until it expires unless one claims it by hand (or give one a command or an entrypoint)"
    )
