"""What a worker is told by the `blackboard worker` command: whom it runs, how many at once, its timings."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class WorkerOptions:
    """The `worker` command's flags; the CLI derives the sweep and renewal periods from the timeouts."""

    agent: str
    once: bool = False
    concurrency: int = 1
    blackboard_id: str | None = None
    grace: float = 30.0  # seconds a stopping worker lets running handlers finish
    sweep_every: float = 5.0  # seconds between expiry sweeps
    renew_every: float = 100.0  # seconds between lease renewals while a handler runs
    head_start: float = 0.1  # seconds per point of score: an agent waits (best other score - its own)
    # x this before claiming, so when several agents fit one signal the best fit usually gets it
