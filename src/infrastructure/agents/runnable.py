"""Said when a signal is posted, not found out later: only agents with nothing to run fit it, or no live
worker fits it (it waits for one, and which agents a worker may be started for)."""

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
    definitions = [d for d in map(registry.definition, _able(signal, registry)) if d is not None]
    if not definitions or any(d.runnable for d in definitions):
        return None
    names = ", ".join(d.name for d in definitions)
    why = "; ".join(dict.fromkeys(str(d.runner_missing) for d in definitions))
    return (
        f"only agents no worker can run fit {signal.signal_id} ({names}): {why}; "
        f"so it waits unless one claims it by hand (or give one a command or an entrypoint)"
    )


def unstarted_warning(signal: AgentSignal, registry: FrontmatterAgentRegistry) -> str:
    """A signal no live worker fits: it waits for a worker that fits (docs/control.md, "Work waits for its
    worker"), and the agents whose worker would take it."""
    from blackboard.infrastructure.interfaces.waiting import waiting_for_a_worker

    best, *others = _able(signal, registry, runnable=True) or [None]
    also = f" (or --agent {', '.join(others)})" if others else ""
    how = (
        f"start one: blackboard worker --agent {best}{also}" if best else "no agent a worker can run fits it"
    )
    return f"{signal.signal_id} is waiting for {waiting_for_a_worker(signal.target_capabilities)}; none is live ({how})"


def _able(signal: AgentSignal, registry: FrontmatterAgentRegistry, runnable: bool = False) -> list[str]:
    """The agents of the registry that may claim the signal, best first (by text for one targeting auto);
    `runnable`: only those a worker can run."""
    scored = Scorer(registry).profiles(signal)
    able = [v.agent.agent_id for v in rank(signal, scored, registry.default_threshold) if v.passes]
    return [name for name in able if registry.can_run(name)] if runnable else able
