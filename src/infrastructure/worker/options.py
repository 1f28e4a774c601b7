"""What a worker is told by the `blackboard worker` command: whom it runs, how many at once, its timings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class WorkerOptions:
    """The `worker` command's flags and the timings derived from the timeouts: built by
    `blackboard.infrastructure.settings.worker_options`, which holds every default."""

    agent: str
    once: bool
    concurrency: int
    blackboard_id: str | None
    grace: float  # seconds a stopping worker lets running handlers finish
    sweep_every: float  # seconds between expiry sweeps
    renew_every: float  # seconds between lease renewals while a handler runs
    head_start: float  # seconds per point of score: an agent waits (best other score - its own)
    # x this before claiming, so when several agents fit one signal the best fit usually gets it
    artifacts_dir: str = "artifacts"  # besides the agent's folder, where an artifact path may point
    beat_every: float = 2.0  # seconds between the beats that say this worker is live (presence)
    # what every handler gets in its environment: the worker's database, agents folders and artifacts
    # folder as absolute addresses (docs/agents.md: "How a handler reaches the board")
    handler_env: Mapping[str, str] = field(default_factory=dict)
