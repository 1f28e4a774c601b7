"""Wake-up, for sections (f) and (g): how long a posted signal waits before an idle worker claims it.

k `blackboard worker` processes are started on an empty board and left to go idle (each has logged
"started", then `settle_s` more); optionally their CPU is read over `idle_s` of doing nothing. Then
n signals are posted one at a time through the application's service (built by its container),
`gap` seconds apart (uniform, fixed seed), the poster's whole `post_signal` call timed. Once every
signal is done, the figures come from the event log: for each signal, the claim event's occurred_at
minus the post event's (the same machine clock), split at the post's recorded_at (when its append
started). One claim per signal, however many workers raced for it.
"""

from __future__ import annotations

import os
import random
import statistics
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from bench.drain import Probe, by_type
from bench.fleet import Fleet
from bench.stats import dist_ms

if TYPE_CHECKING:
    from blackboard.infrastructure.composition.container import Container


def wakeup(
    running: Fleet,
    container: Container,
    probe: Probe,
    *,
    command: Sequence[str],
    k: int,
    n: int,
    board: str,
    gap: tuple[float, float],
    seed: int,
    settle_s: float,
    idle_s: float = 0.0,
    timeout: float = 60.0,
) -> dict[str, Any]:
    """`running` is an empty fleet on the container's database; it is left to its caller to stop."""
    from blackboard.application.commands import PostSignal

    service = container.service()
    rng = random.Random(seed)
    posted: list[str] = []
    post_calls: list[float] = []
    load = os.getloadavg()[0]
    running.start(command, k)
    startup = running.wait_started()
    time.sleep(settle_s)  # past their first round: idle, waiting for the log to move
    idle = None
    if idle_s:
        idle0 = running.cpu_seconds()
        time.sleep(idle_s)
        idle = running.cpu_seconds() - idle0
    cpu0, t0 = running.cpu_seconds(), time.monotonic()
    for i in range(n):
        started = time.perf_counter()
        posted.append(
            service.post_signal(
                PostSignal(
                    signal_type="RESEARCH",
                    ps_id=board,
                    entry_id=f"e-{i}",
                    topic=f"wake-up {i}",
                    prompt="nothing to do",
                )
            ).signal_id
        )
        post_calls.append(time.perf_counter() - started)
        time.sleep(rng.uniform(*gap))
        if i % 20 == 0:
            running.check_alive()
    deadline = time.monotonic() + timeout
    while True:
        done, wrong = probe()
        if wrong:
            raise RuntimeError(
                f"wake-up with {k} worker(s): {wrong} signal(s) ended otherwise than COMPLETED"
            )
        if done >= n:
            break
        running.check_alive()
        if time.monotonic() > deadline:
            raise TimeoutError(f"wake-up with {k} worker(s): {done}/{n} completed after {timeout:g} s")
        time.sleep(0.02)
    wall, cpu = time.monotonic() - t0, running.cpu_seconds() - cpu0
    records = container.event_store().read_all()
    posts = {r.event.signal_id: r for r in by_type(records, "AgentSignalPosted")}
    claims = {r.event.signal_id: r for r in by_type(records, "AgentSignalClaimed")}
    latency, to_append, after_append = [], [], []
    for sid in posted:
        p, c = posts[sid], claims[sid]
        latency.append((c.event.occurred_at - p.event.occurred_at).total_seconds())
        to_append.append((p.recorded_at - p.event.occurred_at).total_seconds())
        after_append.append((c.event.occurred_at - p.recorded_at).total_seconds())
    result: dict[str, Any] = {
        "workers": k,
        "signals": n,
        "gap_ms": [gap[0] * 1000, gap[1] * 1000],
        "claims": len(claims),  # one per signal, however many workers raced for it
        "post_to_claim": dist_ms(latency),
        "post_decided_to_append_start": dist_ms(to_append),
        "post_append_start_to_claim": dist_ms(after_append),
        "post_signal_call": dist_ms(
            post_calls
        ),  # the poster's whole call: decide, append and commit, catch up
        "startup_s": {"max": round(max(startup), 3), "median": round(statistics.median(startup), 3)},
        "cpu_percent_per_worker": round(100 * cpu / wall / k, 1),
        "load_average_1min": [round(load, 2), round(os.getloadavg()[0], 2)],
    }
    if idle is not None:
        result["idle_cpu_percent_per_worker"] = round(100 * idle / idle_s / k, 1)
    return result
