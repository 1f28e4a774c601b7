"""Draining a backlog with a fleet of workers, for sections (f) and (g): the one poll loop and what it sees.

`watch` polls a progress probe (one query: items done, items gone wrong) every 20 ms until every item
is done, checking that no worker has died, and snapshots meters (the workers' CPU, the server's) at
the first poll that sees an item done and at the end. Section (f) starts its clock at the commit of
the backlog (the workers already idle); section (g) at the spawn of the workers (the backlog already
in place). What each section derives from the timeline is its own.

`blackboard_progress` is the probe for blackboard's read model (any SQLAlchemy URL);
`log_figures` reads what a drain left in blackboard's event log: claims per worker, claims made
twice, and where a worker's time goes between two signals.

Standard library only at the top: the job-queue workers of section (g) import modules that import this.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from bench.stats import dist_ms, ms

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from bench.fleet import Fleet
    from blackboard.application.ports import Recorded

POLL_S = 0.02
Probe = Callable[[], tuple[int, int]]  # (items done, items gone wrong)

# blackboard's read model: done = COMPLETED, wrong = anything a no-op handler should never lead to. It
# counts the whole table at every poll (every 20 ms): right on a database holding the backlog alone, as
# (f)'s and (g)'s do; on a board with history it reads all of it and slows the drain it measures
# (bench/postgres/history.py counts the backlog by the board's index instead)
BLACKBOARD_PROGRESS_SQL = (
    "SELECT count(*) FILTER (WHERE status = 'COMPLETED'), "
    "count(*) FILTER (WHERE status IN ('FAILED', 'EXPIRED', 'UNCLAIMED')) FROM blackboard_signals"
)


@dataclass
class Timeline:
    """What the poll saw: times are time.monotonic(); meters are snapshots at first sight and at the end."""

    start: float  # where the clock started (the caller's choice)
    end: float  # the poll that saw every item done
    first: float  # the first poll that saw an item done
    done_at_first: int
    polls: int
    samples: list[tuple[float, int]]  # (seconds since start, items done)
    at_first: dict[str, float | None] = field(default_factory=dict)
    at_end: dict[str, float | None] = field(default_factory=dict)

    @property
    def seconds(self) -> float:
        return self.end - self.start

    def per_second(self) -> list[int]:
        """Items done at each whole second after the start (a coarse timeline for the JSON)."""
        out, second = [], 1.0
        for t, done in self.samples:
            while t >= second:
                out.append(done)
                second += 1
        return out

    def used(self, meter: str, since: float | None = None) -> float | None:
        """A meter's growth from `since` (default: its value at first sight) to the end; None if unknown."""
        begin = self.at_first.get(meter) if since is None else since
        end = self.at_end.get(meter)
        return None if begin is None or end is None else end - begin


def watch(
    running: Fleet,
    probe: Probe,
    n: int,
    start: float,
    *,
    meters: Mapping[str, Callable[[], float | None]],
    timeout: float = 600.0,
    label: str = "",
) -> Timeline:
    """Poll `probe` until `n` items are done; raise if one goes wrong, a worker exits, or `timeout` passes."""
    samples: list[tuple[float, int]] = []
    first: tuple[float, int, dict[str, float | None]] | None = None
    deadline = start + timeout
    while True:
        done, wrong = probe()
        now = time.monotonic()
        samples.append((now - start, done))
        if wrong:
            raise RuntimeError(f"{label}: {wrong} item(s) ended otherwise than done ({done}/{n} done)")
        if done and first is None:
            first = (now, done, {name: read() for name, read in meters.items()})
        if done >= n:
            at_end = {name: read() for name, read in meters.items()}
            break
        running.check_alive()
        if now > deadline:
            raise TimeoutError(f"{label}: {done}/{n} done after {now - start:.0f} s")
        time.sleep(POLL_S)
    assert first is not None
    return Timeline(
        start=start,
        end=now,
        first=first[0],
        done_at_first=first[1],
        polls=len(samples),
        samples=samples,
        at_first=first[2],
        at_end=at_end,
    )


def blackboard_progress(engine: Engine) -> Probe:
    """blackboard's probe through an SQLAlchemy engine: a fresh connection per poll, nothing held between."""
    from sqlalchemy import text

    statement = text(BLACKBOARD_PROGRESS_SQL)

    def probe() -> tuple[int, int]:
        with engine.connect() as conn:
            done, wrong = conn.execute(statement).one()
        return int(done or 0), int(wrong or 0)

    return probe


# ----------------------------------------------------------------------- blackboard's event log
def log_figures(records: Sequence[Recorded], n: int) -> dict[str, Any]:
    """From the event log of a drain: claims per worker (`worker_of`), exactly once, and the two steps of a
    worker's cycle, claim -> completed (the handler and recording its outcome) and completed -> the same
    worker's next claim (its loop: wake, query, claim)."""
    claims = by_type(records, "AgentSignalClaimed")
    per_token: dict[str, int] = {}
    for r in claims:
        per_token[worker_of(r)] = per_token.get(worker_of(r), 0) + 1
    claimed = {r.event.signal_id for r in claims}
    completions = len(by_type(records, "AgentSignalCompleted"))
    handle, between = step_times(records)
    return {
        "claims": len(claims),
        "completions": completions,
        "claimed_twice": len(claims) - len(claimed),
        "exactly_once": len(claims) == completions == n == len(claimed),
        "claims_per_worker": sorted(per_token.values(), reverse=True),
        "claim_to_completed": dist_ms(handle),
        "completed_to_next_claim": dist_ms(between),
        "completed_to_next_claim_mean_ms": ms(statistics.fmean(between)) if between else None,
        # a worker that has just completed, and then sat idle past the notifier's 0.25 s wait
        "completed_to_next_claim_over_200ms": sum(1 for x in between if x > 0.2),
    }


def worker_of(claim: Recorded) -> str | None:
    """The worker that made a claim: its public id in the claim's metadata (`worker`), or, in a log of a build
    from before each claim drew a token of its own, the claim's token, which was then the worker's."""
    return (claim.metadata or {}).get("worker") or claim.event.token


def step_times(records: Sequence[Recorded]) -> tuple[list[float], list[float]]:
    """Seconds from each claim to its completion, and from each completion to the same worker's
    (token's) next claim, in log order."""
    claims = by_type(records, "AgentSignalClaimed")
    claimed_at = {r.event.signal_id: r.event.occurred_at for r in claims}
    token_of = {r.event.signal_id: worker_of(r) for r in claims}
    handle, between = [], []
    last_done: dict[str, datetime] = {}
    for r in records:
        e = r.event
        if e.event_type == "AgentSignalClaimed" and worker_of(r) in last_done:
            between.append((e.occurred_at - last_done[worker_of(r)]).total_seconds())
        elif e.event_type == "AgentSignalCompleted" and e.signal_id in claimed_at:
            handle.append((e.occurred_at - claimed_at[e.signal_id]).total_seconds())
            last_done[token_of[e.signal_id]] = e.occurred_at
    return handle, between


def by_type(records: Sequence[Recorded], kind: str) -> list[Recorded]:
    return [r for r in records if r.event.event_type == kind]
