"""Two workers in two processes, two agents, two boards, one concurrency key of max 1: never two claims at
once under the key, as the event log tells it (not as the workers say). 200 signals here, in `make test`;
the 1,000 of issue 24 in `make faults` (tests/faults/test_concurrency_key_race.py), which CI runs too."""

from __future__ import annotations

import subprocess

import pytest

from blackboard.application.commands import PostSignal
from blackboard.domain.signals import SignalStatus
from tests.cli_server import start_blackboard
from tests.integration.test_workers import Board

SIGNALS = 200
BOARDS = ("race-1", "race-2")
ENDS = {
    "AgentSignalCompleted",
    "AgentSignalFailed",
    "AgentSignalExpired",
    "AgentSignalCancelled",
    "AgentSignalUnclaimed",
}

NO_OP = "def handle(document):\n    return {'knowledge_items': ['done']}\n"


def limited_agent(board: Board, name: str) -> None:
    (board.agents / "pyhandlers").mkdir(exist_ok=True)
    (board.agents / "pyhandlers" / "noop.py").write_text(NO_OP)
    (board.agents / f"{name}.md").write_text(
        f"---\nname: {name}\ncapabilities: {{RESEARCH: 0.9}}\nentrypoint: pyhandlers.noop:handle\n"
        "concurrency: {key: model-api, max: 1}\n---\nA fast agent under one API's quota.\n"
    )


def most_claimed_at_once(records) -> tuple[int, int]:
    """Walk the log in commit order: the most signals claimed under `model-api` at one time, and the
    number of claims seen."""
    open_claims: set[str] = set()
    most = claims = 0
    for record in records:
        event = record.event
        if event.event_type == "AgentSignalClaimed":
            assert event.concurrency_key == "model-api", event
            open_claims.add(event.signal_id)
            claims += 1
            most = max(most, len(open_claims))
        elif event.event_type in ENDS or event.event_type == "AgentSignalPosted":
            open_claims.discard(event.signal_id)  # a retry's new attempt is posted again
    return most, claims


def worker(board: Board, agent: str) -> subprocess.Popen[str]:
    """A worker logging to a file: a thousand signals' lines would fill a pipe nobody reads until the end,
    and block it."""
    log = (board.agents.parent / f"{agent}.log").open("w")
    process = start_blackboard(  # warm, from the CLI fork server: its pipes, signals and exit the worker's
        ["worker", "--agent", agent, "--concurrency", "4"],
        board.env,
        None,
        stdout=subprocess.DEVNULL,
        stderr=log,
        text=True,
    )
    board.workers.append(process)
    return process


@pytest.fixture(params=["sqlite", "postgresql"])
def race(request, tmp_path):
    if request.param == "sqlite":
        made = Board(tmp_path)
    else:
        request.getfixturevalue("pg_engine")  # emptied for this test
        made = Board(tmp_path, url=request.getfixturevalue("pg_database_url"))
    yield made
    made.stop_all()


def test_two_workers_racing_under_a_key_of_max_1_never_hold_two_claims_at_once(race):
    race_under_one_key(race, SIGNALS)


def race_under_one_key(board: Board, signals: int) -> None:
    limited_agent(board, "fast-a")
    limited_agent(board, "fast-b")
    ids = [
        board.service.post_signal(
            PostSignal(signal_type="RESEARCH", ps_id=BOARDS[n % 2], entry_id=f"e-{n}", topic=f"t {n}")
        ).signal_id
        for n in range(signals)
    ]
    # each worker could run four at once: only the key holds them to one
    first, second = worker(board, "fast-a"), worker(board, "fast-b")

    board.until(
        lambda: sum(board.read_model.count_by_status(b).get("COMPLETED", 0) for b in BOARDS) == signals,
        900,  # one at a time, on a machine shared with other work: a few minutes
        f"{signals} completions",
    )
    board.stop_all()

    most, claims = most_claimed_at_once(board.store.read_all())
    assert claims == signals and most == 1
    claimed = [r.event for r in board.store.read_all() if r.event.event_type == "AgentSignalClaimed"]
    assert {e.claimed_by for e in claimed} == {"fast-a", "fast-b"}  # both workers took part
    assert len({e.token for e in claimed}) == signals  # each claim with a token of its own
    assert first.returncode == second.returncode == 0
    assert all(board.status(s) is SignalStatus.COMPLETED for s in ids[:10])
