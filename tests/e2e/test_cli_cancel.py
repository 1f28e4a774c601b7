"""Cancel (docs/control.md): through the real CLI and real worker processes, on SQLite and PostgreSQL.

A cancel ends a signal that is not final and what waits on it, each naming the signal that took it down;
it stops a handler running in another process (SIGTERM, then SIGKILL) and refuses its later outcome;
`wait` on it exits 3; a cancel racing a completion: exactly one wins, the other is refused.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.e2e.conftest import Cli, assert_signal, assert_signals, database_url
from tests.waiting import wait_until

HANG = """---
name: ps-hang
description: Writes its pid, notes a SIGTERM, and would run for a minute.
capabilities: {{RESEARCH: 0.95}}
command: >-
  echo $$ > {folder}/$BLACKBOARD_SIGNAL_ID.pid;
  trap 'touch {folder}/$BLACKBOARD_SIGNAL_ID.term; exit 1' TERM;
  sleep 60 & wait
timeout: 120
---
Hangs until stopped.
"""


@pytest.fixture(params=["sqlite", "postgresql"])
def ccli(request, make_cli, tmp_path_factory, tmp_path) -> Cli:
    url = database_url(request, tmp_path_factory, "cancel")
    agents = tmp_path / "agents"
    agents.mkdir()
    runs = tmp_path / "runs"
    runs.mkdir()
    (agents / "ps-hang.md").write_text(HANG.format(folder=runs), encoding="utf-8")
    (agents / "ps-researcher.md").write_text(
        "---\nname: ps-researcher\ncapabilities: {ANALYSIS: 0.95}\n---\nNo handler.\n", encoding="utf-8"
    )
    return make_cli(url, tmp_path, agents)


def post(cli: Cli, entry: str, *args: str, board: str = "ps-c", signal_type: str = "RESEARCH") -> str:
    return cli.post(*args, type=signal_type, ps=board, entry=entry, topic=entry)["signal_id"]


def events_of(cli: Cli, signal_id: str) -> list[dict]:
    return [e for e in cli.ok("events", "--all") if e["data"].get("signal_id") == signal_id]


def test_a_cancel_ends_the_signal_and_every_signal_waiting_on_it_each_naming_its_upstream(ccli):
    a = post(ccli, "e-1", signal_type="ANALYSIS")
    b = post(ccli, "e-2", "--after", a, signal_type="ANALYSIS")
    c = post(ccli, "e-3", "--after", b, signal_type="ANALYSIS")
    other = post(ccli, "e-4", signal_type="ANALYSIS")

    cancelled = assert_signal(ccli.ok("cancel", a, "--reason", "the plan changed", "--by", "alice"))

    assert cancelled["status"] == "CANCELLED"
    assert cancelled["result"]["error"] == "cancelled by alice: the plan changed"
    second, third = (assert_signal(ccli.ok("show", s)) for s in (b, c))
    assert second["status"] == third["status"] == "CANCELLED"
    assert second["result"]["error"] == f"upstream {a} was cancelled by alice: the plan changed"
    assert third["result"]["error"] == f"upstream {b} was cancelled by alice: the plan changed"
    assert ccli.ok("show", other)["status"] == "POSTED"
    event = events_of(ccli, b)[-1]
    assert event["event_type"] == "AgentSignalCancelled"
    assert event["data"]["cause"] == a and event["data"]["reason"] == "the plan changed"
    assert event["data"]["cancelled_by"] == "alice" and event["metadata"]["actor"] == "alice"

    waited = ccli("--json", "wait", a, "--timeout", "5").expect(3)
    assert assert_signal(waited.json())["status"] == "CANCELLED"
    again = ccli("cancel", a).expect(3)
    assert f"{a} is CANCELLED" in again.stderr
    ccli("cancel", "sig-00000000").expect(4)


def test_bad_cancels_exit_2_naming_the_field_and_write_nothing(ccli):
    a = post(ccli, "e-1", signal_type="ANALYSIS")
    before = len(ccli.ok("events", "--all"))

    assert "reason" in ccli("cancel", a, "--reason", "").expect(2).stderr
    assert "SIG" in ccli("cancel").expect(2).stderr
    assert "not both" in ccli("cancel", a, "--blackboard", "ps-c").expect(2).stderr
    assert "SIG: String should match" in ccli("cancel", "sig-nothex!").expect(2).stderr

    assert len(ccli.ok("events", "--all")) == before
    assert ccli.ok("show", a)["status"] == "POSTED"


def test_bulk_cancels_by_board_and_by_correlation_id(ccli):
    mine = [post(ccli, f"e-{i}", "--correlation-id", "run-7", signal_type="ANALYSIS") for i in (1, 2)]
    elsewhere = post(ccli, "e-3", "--correlation-id", "run-7", board="ps-d", signal_type="ANALYSIS")
    unrelated = post(ccli, "e-4", signal_type="ANALYSIS")
    like = post(ccli, "e-5", "--correlation-id", "run_7", signal_type="ANALYSIS")  # `_` is no wildcard
    done = post(ccli, "e-6", "--correlation-id", "run-7", signal_type="ANALYSIS")
    ccli.ok("claim", done, "--agent", "ps-researcher")
    ccli.ok("complete", done, "--agent", "ps-researcher")

    on_board = assert_signals(ccli.ok("cancel", "--correlation-id", "run-7", "--blackboard", "ps-c"))
    assert sorted(s["signal_id"] for s in on_board) == sorted(mine)
    assert ccli.ok("show", elsewhere)["status"] == "POSTED"
    anywhere = ccli.ok("cancel", "--correlation-id", "run-7", "--reason", "run 7 aborted")
    assert [s["signal_id"] for s in anywhere] == [elsewhere]
    assert anywhere[0]["result"]["error"] == "cancelled by ps-skill: run 7 aborted"
    assert ccli.ok("show", like)["status"] == "POSTED"

    rest = ccli.ok("cancel", "--blackboard", "ps-c")
    assert sorted(s["signal_id"] for s in rest) == sorted([unrelated, like])
    assert ccli.ok("show", done)["status"] == "COMPLETED"
    assert ccli.ok("cancel", "--blackboard", "ps-c") == []


def test_a_cancel_stops_the_handler_running_in_another_process_and_refuses_its_outcome(ccli, tmp_path):
    # --grace 1: at the end the worker stops with the next signal's handler still hanging
    worker = ccli.start("worker", "--agent", "ps-hang", "--board", "ps-c", "--grace", "1")
    sig = post(ccli, "e-1")
    pid_file = tmp_path / "runs" / f"{sig}.pid"
    wait_until(lambda: pid_file.exists() and pid_file.read_text().strip(), what="the handler to start")
    pid = int(pid_file.read_text())

    ccli.ok("cancel", sig, "--reason", "stop it")

    wait_until(lambda: not _alive(pid), what="the handler to be stopped")
    assert (tmp_path / "runs" / f"{sig}.term").exists()  # SIGTERM first: it could clean up
    assert ccli.ok("show", sig)["status"] == "CANCELLED"
    late = ccli("complete", sig, "--agent", "ps-hang").expect(3)
    assert f"{sig} is CANCELLED" in late.stderr
    next_one = post(ccli, "e-2")  # the worker's slot is free again: it claims the next one
    wait_until(lambda: ccli.ok("show", next_one)["status"] == "CLAIMED", what="the next claim")
    worker.terminate()
    result = ccli.finish(worker)
    assert f"{sig}: stopped: the signal was cancelled" in result.stderr
    assert [e["event_type"] for e in events_of(ccli, sig)][-1] == "AgentSignalCancelled"


def test_a_cancel_racing_a_completion_exactly_one_wins(ccli):
    outcomes = []
    for round_ in range(6):
        sig = post(ccli, f"e-{round_}", signal_type="ANALYSIS")
        ccli.ok("claim", sig, "--agent", "ps-researcher")
        racing = ccli.many(
            {
                "complete": (("complete", sig, "--agent", "ps-researcher", "--knowledge", "done"), None),
                "cancel": (("cancel", sig, "--reason", "race"), None),
            }
        )
        codes = {name: future.result().returncode for name, future in racing.items()}
        assert sorted(codes.values()) == [0, 3], codes
        winner = next(name for name, code in codes.items() if code == 0)
        status = ccli.ok("show", sig)["status"]
        assert status == {"complete": "COMPLETED", "cancel": "CANCELLED"}[winner]
        ended = [e["event_type"] for e in events_of(ccli, sig) if e["event_type"].startswith("AgentSignal")][
            2:
        ]
        assert len(ended) == 1, ended  # one ending, never both
        outcomes.append(winner)
    assert outcomes  # which one wins is the race's; that exactly one does is the rule


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
