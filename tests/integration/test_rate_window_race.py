"""Claims under one rate limit from four processes at once, on two boards, on SQLite and PostgreSQL: together
they never take more than the window holds (a minute's worth, plus what came back while they raced), as the
event log tells it; and calls taking room outside a claim (a runner's later calls) race alike."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import UTC, datetime

import pytest

from blackboard.application.commands import PostSignal
from blackboard.domain.rates import RateLimit
from blackboard.infrastructure.composition import settings
from blackboard.infrastructure.composition.container import Container
from blackboard.infrastructure.persistence.rate_windows import SqlRateWindows

RPM, PROCESSES, SECONDS = 40, 4, 3.0
AGENT = (
    "---\nname: ps-racer\ncapabilities: {RESEARCH: 0.9}\ncommand: echo done\n"
    f"rate_limit: {{key: race, requests_per_minute: {RPM}}}\n---\nRaces for the window.\n"
)
CLAIMING = """
import sys, time
from blackboard.application.commands import ClaimSignals, GetOpenSignals
from blackboard.infrastructure.composition import settings
from blackboard.infrastructure.composition.container import Container
container = Container(config=settings.load({}))
service, queries = container.service(), container.queries()
until, taken = time.monotonic() + float(sys.argv[1]), 0
while time.monotonic() < until:
    for board in ("race-1", "race-2"):
        open_ = [s.signal_id for s in queries.look(GetOpenSignals(capabilities=("RESEARCH",), limit=8,
                 blackboard_id=board, catch_up=False)).candidates]
        if open_:
            taken += len(service.claim_signals(ClaimSignals(blackboard_id=board, signal_ids=open_,
                         agent_id="ps-racer", limit=4)).claimed)
print(taken)
"""
TAKING = """
import sys, time
from datetime import UTC, datetime
from blackboard.domain.rates import RateLimit
from blackboard.infrastructure.composition import settings
from blackboard.infrastructure.composition.container import Container
windows = Container(config=settings.load({})).rate_windows()
limit = RateLimit(key="calls", requests_per_minute=int(sys.argv[2]))
until, taken = time.monotonic() + float(sys.argv[1]), 0
while time.monotonic() < until:
    box = []
    def take(window):
        now = datetime.now(UTC)
        if window.wait(limit, now) > 0:
            return None
        box.append(1)
        return window.taken(limit, now)
    windows.change(limit, datetime.now(UTC), take)
    taken += len(box)
print(taken)
"""


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request, tmp_path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'race.db'}"
    return request.getfixturevalue("pg_private_url")


def run_all(code: str, env: dict[str, str], *args: str) -> tuple[list[int], float]:
    started = time.monotonic()
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", code, *args],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(PROCESSES)
    ]
    counts = []
    for process in processes:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, err
        counts.append(int(out.strip().splitlines()[-1]))
    return counts, time.monotonic() - started


def test_claims_from_four_processes_never_take_more_than_the_window_holds(database, tmp_path):
    agents = tmp_path / "agents"
    agents.mkdir()
    (agents / "ps-racer.md").write_text(AGENT)
    env = {**os.environ, "BLACKBOARD_DB": database, "BLACKBOARD_AGENTS_DIR": str(agents)}
    container = Container(config=settings.load({}, env=env))
    service = container.service()
    for n in range(2 * RPM):
        service.post_signal(
            PostSignal(signal_type="RESEARCH", ps_id=f"race-{n % 2 + 1}", entry_id=f"e-{n}", topic=f"t{n}")
        )

    counts, elapsed = run_all(CLAIMING, env, str(SECONDS))

    claimed = [
        r.event for r in container.event_store().read_all() if r.event.event_type == "AgentSignalClaimed"
    ]
    assert len(claimed) == sum(counts)
    assert RPM <= len(claimed) <= RPM + RPM * elapsed / 60 + 1, (counts, elapsed)


def test_calls_taking_room_from_four_processes_never_take_more_than_the_window_holds(database, tmp_path):
    env = {**os.environ, "BLACKBOARD_DB": database}
    Container(config=settings.load({}, env=env)).rate_windows().windows()  # the schema, made once

    counts, elapsed = run_all(TAKING, env, str(SECONDS), str(RPM))

    assert RPM <= sum(counts) <= RPM + RPM * elapsed / 60 + 1, (counts, elapsed)
    (window,) = SqlRateWindows(Container(config=settings.load({}, env=env)).engine()).windows()
    assert (
        window.key == "calls"
        and window.refilled(RateLimit(key="calls", requests_per_minute=RPM), datetime.now(UTC)).requests < RPM
    )
