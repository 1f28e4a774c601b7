"""Live workers: the port their beats go through, and which of them fits a signal.

Workers announce themselves (docs/agents.md: "Live workers"): each keeps one row fresh with its beats,
says when it stops, and a dead one goes stale after `MISSED_BEATS` missed beats. This is not the event
log: a beat records no fact about a board. The expiry rule (`blackboard.domain.blackboard.deadline`)
asks, per POSTED signal, for the worker that fits it and counted as live the longest; `fitting` answers
with the domain's scoring, as the worker itself would claim.
"""

from __future__ import annotations

import abc
from collections.abc import Iterable, Sequence
from datetime import datetime

from blackboard.application.scoring import Scorer
from blackboard.domain.presence import WorkerPresence
from blackboard.domain.signals import AgentSignal, SignalStatus


class PresenceStore(abc.ABC):
    """Where workers say they are live. Writes are one small row per worker, never an event."""

    @abc.abstractmethod
    def beat(self, worker: WorkerPresence) -> None:
        """Store the worker's row as given (insert or replace): its last beat, profile and what it runs.
        Raises StoreUnavailable when the store cannot be reached."""

    @abc.abstractmethod
    def stopped(self, worker_id: str, at: datetime) -> None:
        """The worker stopped at `at`: it runs nothing and no longer counts as live; its row stays (so a
        signal it fitted counts its post timeout from `at`) until `forget` drops it."""

    @abc.abstractmethod
    def workers(self) -> list[WorkerPresence]:
        """Every row, live or not, ordered by agent and worker id."""

    @abc.abstractmethod
    def forget(self, gone_before: datetime) -> int:
        """Drop the rows of workers that stopped counting as live before `gone_before`; how many."""


def fitting(
    signals: Iterable[AgentSignal],
    workers: Sequence[WorkerPresence],
    scorer: Scorer,
    default_threshold: float,
) -> dict[str, WorkerPresence]:
    """For each claimable POSTED signal that some worker fits, the one that counts as live the longest
    (a live one before any that is gone). Scored as a claim is (`Scorer`: by text for a signal
    targeting `auto`, with this registry's text index; a worker whose agent it lacks scores 0 there)."""
    found: dict[str, WorkerPresence] = {}
    if not workers:
        return found
    for signal in signals:
        if signal.status is not SignalStatus.POSTED or signal.waiting_for:
            continue
        serving = [w for w in workers if w.serves(signal.blackboard_id)]
        scored = scorer.profiles(signal, [w.agent for w in serving]) if serving else []
        able = [
            w
            for w, claimant in zip(serving, scored, strict=True)
            if w.fits(signal, signal.blackboard_id, claimant, default_threshold)
        ]
        if able:
            found[signal.signal_id] = max(able, key=lambda w: (w.live_until, w.worker_id))
        # no worker fits: left out, and the post timeout counts from when it became claimable
    return found
