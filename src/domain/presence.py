"""Workers as the board sees them: who announced itself, what it claims with, until when it counts as live.

Presence is not an event: a beat is no fact about a board, and nothing is decided on its own history.
Each worker keeps one row fresh (its beats); the expiry rule reads the rows as they stand. A worker
counts as live until it stops (it says so) or until it has missed `MISSED_BEATS` beats in a row (it
died, or lost the database); from then on it is *gone*, and the time it went is what the post timeout
of the signals it fitted counts from (`blackboard.deadline`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from blackboard.domain.capabilities import AgentProfile, Claimant, Targeted

MISSED_BEATS = 3  # a worker that misses this many beats in a row counts as gone


@dataclass(frozen=True, slots=True)
class WorkerPresence:
    """One worker as it last announced itself.

    `agent` is the profile it claims with, its threshold resolved (its own, else the default it claims
    with), so a sweeper on another host, without that agent's file, judges fit as the worker would.
    `boards` is empty when it serves every board. `running` holds (signal id, board) of the handlers it
    runs now."""

    worker_id: str  # `agent/uuid`, unique per process: public, it proves nothing (no claim token)
    agent: AgentProfile
    host: str
    pid: int
    started_at: datetime
    last_beat: datetime
    beat_every: timedelta
    boards: tuple[str, ...] = ()
    running: tuple[tuple[str, str], ...] = ()
    stopped_at: datetime | None = None

    @property
    def agent_id(self) -> str:
        return self.agent.agent_id

    @property
    def label(self) -> str:
        """`ps-researcher on host:1234`: how a reason names it."""
        return f"{self.agent_id} on {self.host}:{self.pid}"

    @property
    def live_until(self) -> datetime:
        """When it stops counting as live: when it stopped, or once it has missed MISSED_BEATS beats."""
        if self.stopped_at is not None:
            return self.stopped_at
        return self.last_beat + MISSED_BEATS * self.beat_every

    def is_live(self, at: datetime) -> bool:
        return at < self.live_until

    def serves(self, blackboard_id: str) -> bool:
        return not self.boards or blackboard_id in self.boards

    def fits(self, signal: Targeted, blackboard_id: str, scored: Claimant, default_threshold: float) -> bool:
        """Whether it would claim the signal: it serves the board and `scored` (its profile as it scores
        for this signal; by text for one targeting `auto`) is above its threshold."""
        return self.serves(blackboard_id) and scored.score(signal) > scored.threshold_or(default_threshold)

    @property
    def gone(self) -> str:
        """How it went, for a reason: `stopped at T`, or `stopped beating at T` (its last beat)."""
        if self.stopped_at is not None:
            return f"stopped at {self.stopped_at.isoformat()}"
        return f"stopped beating at {self.last_beat.isoformat()}"


@dataclass(frozen=True, slots=True)
class SolveProcess:
    """The process driving a solve run (`blackboard solve`, or a `solve --resume` of it), as it last said it
    is live: one row per run, kept fresh by its beats as a worker's is, so `solve --status` on any host
    tells a run that still has its process from one whose process is gone (`orphaned`).

    `holder` is the process's own token: a resume takes the row over with a new one, and the process it
    replaced (stalled, not dead) finds on its next beat that the run is no longer its own."""

    blackboard_id: str
    run_id: str
    holder: str
    host: str
    pid: int
    started_at: datetime
    last_beat: datetime
    beat_every: timedelta
    stopped_at: datetime | None = None

    @property
    def label(self) -> str:
        return f"{self.host}:{self.pid}"

    @property
    def live_until(self) -> datetime:
        """As a worker's: when it stopped, or once it has missed MISSED_BEATS beats."""
        if self.stopped_at is not None:
            return self.stopped_at
        return self.last_beat + MISSED_BEATS * self.beat_every

    def is_live(self, at: datetime) -> bool:
        return at < self.live_until

    @property
    def gone(self) -> str:
        if self.stopped_at is not None:
            return f"its process ({self.label}) ended at {self.stopped_at.isoformat()}"
        return f"its process ({self.label}) stopped beating at {self.last_beat.isoformat()}"
