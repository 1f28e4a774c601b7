"""Why limits hold signals back, for the web view's cards (application/holding.py), with this process's
settings: the claim threshold and claim timeout `next` plans with, the agent files, the read model and the
rate limits' windows."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported by the container, which every command imports: nothing heavy at the top
    from collections.abc import Callable, Sequence

    from blackboard.domain.signals import AgentSignal


def held_back(
    config: Any, queries: Any, registry: Callable[[], Any], signals: Any, rate_windows: Any, clock: Any
) -> Callable[[Sequence[AgentSignal]], dict[str, str]]:
    """For some signals read already, why a limit holds each it holds (signal -> `next`'s reason)."""
    from blackboard.application.holding import held_back as words

    def held(shown: Sequence[AgentSignal]) -> dict[str, str]:
        now = clock.now()
        lapsed = now - timedelta(seconds=config.claim_timeout)  # claims older than that count no more
        return words(
            queries, registry, config.claim_threshold, signals, rate_windows.windows, shown, now, lapsed
        )

    return held
