"""What a worker is told by the `blackboard worker` command: whom it runs, how many at once, its timings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class WorkerOptions:
    """The `worker` command's flags and the timings derived from the timeouts: built by
    `blackboard.infrastructure.composition.settings.worker_options`, which holds every default."""

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
    run: RunOptions = field(default_factory=lambda: RunOptions())  # for agents a runner runs
    # seconds after its last renewal that a claim lapses: a run still going then is stopped (docs/agents.md,
    # "A run's lifetime"); None: the worker judges no lease (and starts no keeper)
    claim_timeout: float | None = None


@dataclass(frozen=True, slots=True)
class RunOptions:
    """The `worker` command's runner flags (docs/agents.md, "Runners")."""

    runner: str | None = None  # --runner: overrides the agent file's
    model: str | None = None  # --model / BLACKBOARD_MODEL: for a file whose model is absent or inherit
    workdir: str | None = None  # --workdir: where runs work (default: where the worker runs)
    permission_mode: str | None = None  # --permission-mode: widens what a headless run may do
    allowed_tools: tuple[str, ...] = ()  # --allow-tool: pre-approved besides the file's tools
    board_env: tuple[tuple[str, str], ...] = ()  # the settings a run's board session needs, as variables
