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
from typing import Protocol, TypeVar

from blackboard.application.scoring import Scored, Scorer
from blackboard.domain.presence import WorkerPresence
from blackboard.domain.signals import AgentSignal


class OnABoard(Scored, Protocol):
    """A signal or a candidate for one: what it targets, its text, and its board."""

    @property
    def blackboard_id(self) -> str: ...


C = TypeVar("C", bound=OnABoard)


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
        if not signal.is_claimable:  # no worker fits a gate: a person decides it
            continue
        if able := _able(signal, signal.blackboard_id, workers, scorer, default_threshold):
            found[signal.signal_id] = max(able, key=lambda w: (w.live_until, w.worker_id))
        # no worker fits: left out, and the post timeout counts from when it became claimable
    return found


def unattended(
    signals: Iterable[C],
    workers: Sequence[WorkerPresence],
    scorer: Scorer,
    default_threshold: float,
    at: datetime,
) -> list[C]:
    """Those of these claimable signals (or candidates) that no worker live at `at` fits: each waits for a
    worker that fits (docs/control.md), which `post`, `show`, `next` and `status` say."""
    live = [w for w in workers if w.is_live(at)]
    return [s for s in signals if not _able(s, s.blackboard_id, live, scorer, default_threshold)]


def _able(
    signal: Scored, blackboard_id: str, workers: Sequence[WorkerPresence], scorer: Scorer, threshold: float
) -> list[WorkerPresence]:
    """The workers that would claim the signal: serving its board, scoring above their threshold."""
    serving = [w for w in workers if w.serves(blackboard_id)]
    scored = scorer.profiles(signal, [w.agent for w in serving]) if serving else []
    return [
        w
        for w, claimant in zip(serving, scored, strict=True)
        if w.fits(signal, blackboard_id, claimant, threshold)
    ]
