"""A new user's hour (issue 34), each defect through the real `blackboard` executable (and a real worker where a
run is involved), on SQLite and PostgreSQL:

- `next` says what waits and why (a gate for a person, a signal posted for later, a spent budget) instead of
  "nothing to do next", in text and JSON; `show` prints a signal's not-before time;
- `show` of a cancelled signal says who cancelled it, the stopped run's agent on a line of its own;
- `retry` posts a CANCELLED signal again, and `retry -q` prints only the new id;
- a cancelled signal's dependant waits for nothing: its reason names what took it down.
(`post` without jargon: test_cli_post_defaults.py.)
"""

from __future__ import annotations

import re
from datetime import datetime

import pytest

from tests.e2e.conftest import Cli, assert_signal, cli_with_agents
from tests.waiting import wait_until

SLOWPOKE = """---
name: slowpoke
description: Writes its pid, then would run for a minute.
capabilities: {{ANALYSIS: 0.95}}
command: >-
  echo $$ > {runs}/$BLACKBOARD_SIGNAL_ID.pid;
  sleep 60 & wait
timeout: 120
---
Slow.
"""
QUICK = "---\nname: ps-quick\ncapabilities: {RESEARCH: 0.95}\ncommand: echo done\n---\nQuick.\n"
NO_HANDLER = "---\nname: ps-judge\ncapabilities: {DECISION: 0.9}\n---\nNo handler.\n"


@pytest.fixture(params=["sqlite", "postgresql"])
def ncli(request, make_cli, tmp_path_factory, tmp_path) -> Cli:
    runs = tmp_path / "runs"
    runs.mkdir()
    agents = {
        "slowpoke.md": SLOWPOKE.format(runs=runs),
        "ps-quick.md": QUICK,
        "ps-judge.md": NO_HANDLER,
    }
    return cli_with_agents(request, make_cli, tmp_path_factory, tmp_path, "new-user-hour", agents)


def post(cli: Cli, *args: str) -> str:
    """A post as the README has it now: a board and a topic, and who it is for."""
    return assert_signal(cli.ok("post", "--blackboard", "ps-h", "--topic", "a topic", *args))["signal_id"]


# -- 2: `next` and `show` explain waits ------------------------------------------------------------------------
def test_next_lists_a_gate_waiting_for_a_person_and_work_posted_for_later_instead_of_nothing_to_do(ncli):
    gate = post(ncli, "--gate", "--type", "DECISION", "--topic", "ship it?")
    later = post(ncli, "--type", "RESEARCH", "--topic", "tomorrow's work", "--not-before", "2h")
    due = datetime.fromisoformat(ncli.ok("show", later)["not_before"])

    planned = ncli.ok("next", "--blackboard", "ps-h")
    text = ncli("next", "--blackboard", "ps-h").expect(0).stdout

    assert planned["next"] == []
    [person] = planned["waiting_for_a_person"]
    assert person["signal_id"] == gate and f"blackboard approve {gate}" in person["reason"]
    [time] = planned["waiting_for_a_time"]
    assert time["signal_id"] == later and time["agent"] == "ps-quick"  # who would take it then
    assert datetime.fromisoformat(time["not_before"]) == due
    lines = text.splitlines()
    assert "nothing to do next" not in text and lines[0].startswith("nothing to claim now"), text
    assert any(f"blackboard approve {gate} --by NAME" in line for line in lines), text
    assert any(later in line and f"not before {due:%H:%M:%S}" in line for line in lines), text

    shown = ncli("show", later).expect(0).stdout
    assert f"not before {due:%Y-%m-%d %H:%M:%S}" in shown, shown
    ncli.ok("approve", gate, "--by", "alice")
    assert ncli.ok("next", "--blackboard", "ps-h")["waiting_for_a_person"] == []


def test_next_under_a_spent_budget_says_nothing_to_claim_now_and_then_why(ncli):
    waiting = post(ncli, "--type", "RESEARCH")
    ncli.ok("budget", "ps-h", "--usd", "0", "--by", "alice")

    text = ncli("next", "--blackboard", "ps-h").expect(0).stdout

    first, *rest = text.splitlines()
    assert first == "nothing to claim now; what waits, and why:", text
    assert rest[0].startswith("waiting for a budget on ps-h") and waiting in rest[1], text
    assert "nothing to do next" not in text


def test_next_with_nothing_open_still_says_there_is_nothing_to_do(ncli):
    assert ncli("next").expect(0).stdout.strip() == "nothing to do next: no open signal a runnable agent fits"


# -- 3 and 10b: who cancelled, the run it stopped, and what took a dependant down ------------------------------
def test_show_of_a_cancelled_run_names_who_cancelled_and_the_stopped_run_s_agent_on_its_own_line(
    ncli, tmp_path
):
    worker = ncli.start("worker", "--agent", "slowpoke", "--board", "ps-h", "--grace", "1")
    sig = post(ncli, "--type", "ANALYSIS")
    pid = tmp_path / "runs" / f"{sig}.pid"
    wait_until(lambda: pid.exists() and pid.read_text().strip(), what="slowpoke's run to start")

    ncli.ok("cancel", sig, "--by", "alice", "--reason", "wrong board")
    shown = ncli("show", sig).expect(0).stdout
    document = ncli.ok("show", sig)
    worker.terminate()
    ncli.finish(worker)

    head, *lines = shown.splitlines()
    assert re.search(r"CANCELLED\s+by alice\b", head) and "slowpoke" not in head, shown
    assert any(line.strip().startswith("claimed by slowpoke") and "stopped" in line for line in lines), shown
    assert "  reason: cancelled by alice: wrong board" in lines, shown
    assert (document["claimed_by"], document["decided_by"], document["decision_note"]) == (
        "slowpoke",
        "alice",
        "wrong board",
    )


def test_a_cancelled_signal_s_dependant_waits_for_nothing_and_its_reason_names_what_took_it_down(ncli):
    upstream = post(ncli, "--type", "DECISION")
    dependant = post(ncli, "--type", "DECISION", "--after", upstream)
    assert ncli.ok("show", dependant)["waiting_for"] == [upstream]

    ncli.ok("cancel", upstream, "--by", "alice", "--reason", "not needed")

    document = assert_signal(ncli.ok("show", dependant))
    text = ncli("show", dependant).expect(0).stdout
    assert (document["status"], document["waiting_for"]) == ("CANCELLED", [])
    assert document["result"]["error"] == f"upstream {upstream} was cancelled by alice: not needed"
    assert "waiting for" not in text and f"  after {upstream}\n" in text, text
    ncli.ok("projection", "rebuild")  # the same from the events alone
    assert ncli.ok("show", dependant) == document


# -- 4: retry undoes a cancel ----------------------------------------------------------------------------------
def test_retry_posts_a_cancelled_signal_again_and_retry_q_prints_only_the_new_id(ncli):
    upstream = post(ncli, "--type", "RESEARCH")
    dependant = post(ncli, "--type", "DECISION", "--after", upstream)
    ncli.ok("cancel", upstream, "--by", "alice", "--reason", "oops, wrong one")

    quiet = ncli("retry", "-q", upstream).expect(0)
    again = quiet.stdout.strip()
    later = assert_signal(ncli.ok("retry", dependant))

    assert quiet.stdout == f"{again}\n" and re.fullmatch(r"sig-[0-9a-f]{8}", again), quiet.stdout
    retried = assert_signal(ncli.ok("show", again))
    assert (retried["status"], retried["retry_of"]) == ("POSTED", upstream)
    assert (later["status"], later["retry_of"], later["after"]) == ("POSTED", dependant, [again])
    ncli("worker", "--agent", "ps-quick", "--once", "--board", "ps-h").expect(0)
    assert ncli.ok("show", again)["status"] == "COMPLETED"
    assert ncli.ok("show", later["signal_id"])["waiting_for"] == []  # its new upstream completed: it may run
    refused = ncli("retry", later["signal_id"]).expect(3)  # a POSTED signal is not one to post again
    assert "only CANCELLED or EXPIRED or FAILED signals can be retried" in refused.stderr, refused.stderr
