"""`status` (and `--watch`), the paging of `signals` and `events`, `events --jsonl`, and exit 4 for a board
the store does not hold: through the real CLI, on SQLite and on PostgreSQL."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from blackboard.application.commands import PostSignal
from blackboard.infrastructure.composition.container import Container
from blackboard.infrastructure.composition.settings import BlackboardSettings
from tests.e2e.conftest import BLACKBOARD, TIMEOUT, Cli, assert_events, assert_signals, database_url

pytestmark = pytest.mark.one_process  # its tests share a costly module fixture (tests/scheduling.py)

SEEDED = 130  # posted in process on ps-many: more than a page (100)
LONG = {"BLACKBOARD_POST_TIMEOUT": "3600", "BLACKBOARD_CLAIM_TIMEOUT": "3600"}


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def store(request, tmp_path_factory, make_cli, agents_dir) -> Iterator[Cli]:
    """ps-many: SEEDED POSTED signals targeting RESEARCH, then (through the CLI) ps-few: one claimed by
    ps-researcher, one completed, one posted for REVIEW; ps-notes: entries only, one key in conflict."""
    url = database_url(request, tmp_path_factory, "status")
    container = Container(config=BlackboardSettings(db=url, agents_dir=str(agents_dir)))
    service = container.service()
    for i in range(SEEDED):
        service.post_signal(
            PostSignal(signal_type="RESEARCH", ps_id="ps-many", entry_id=f"e-{i}", topic=f"t{i}")
        )
    container.engine().dispose()
    cli = make_cli(url, tmp_path_factory.mktemp("status-cwd"))
    claimed = cli.post(ps="ps-few", env=LONG)["signal_id"]
    cli.ok("claim", claimed, "--agent", "ps-researcher", env=LONG)
    done = cli.post(ps="ps-few", entry="e-2", env=LONG)["signal_id"]
    cli.ok("claim", done, "--agent", "ps-analyst", env=LONG)
    cli.ok("complete", done, "--agent", "ps-analyst", env=LONG)
    cli.post(type="REVIEW", ps="ps-few", entry="e-3", env=LONG)
    cli.ok("write", "plan", "--blackboard", "ps-notes", "--author", "a", "--value", "1")
    cli("write", "plan", "--blackboard", "ps-notes", "--author", "b", "--value", "2").expect(3)
    cli.ok("write", "other", "--blackboard", "ps-notes", "--author", "a", "--value", "3")
    yield cli


def test_status_counts_each_board(store):
    boards = {b["blackboard_id"]: b for b in store.ok("status", env=LONG)}
    assert set(boards) == {"ps-many", "ps-few", "ps-notes"}
    assert boards["ps-many"]["signals"] == {"POSTED": SEEDED} and boards["ps-many"]["live_workers"] == []
    few = boards["ps-few"]
    assert few["signals"] == {"CLAIMED": 1, "COMPLETED": 1, "POSTED": 1} and few["signals_total"] == 3
    assert few["live_workers"] == ["ps-researcher"]  # the completer holds no claim any more
    assert 0 <= few["oldest_waiting_seconds"] < boards["ps-many"]["oldest_waiting_seconds"]
    assert (
        boards["ps-notes"]["entries"],
        boards["ps-notes"]["open_conflicts"],
        boards["ps-notes"]["signals"],
    ) == (2, 1, {})


def test_a_claim_past_its_timeout_is_no_live_worker(store):
    few = store.ok("status", "--blackboard", "ps-few", env={"BLACKBOARD_CLAIM_TIMEOUT": "0.001"})
    assert [b["live_workers"] for b in few] == [[]]


def test_status_text_is_a_table_of_the_boards(store):
    text = store("status", env=LONG).expect(0).stdout
    rows: dict[str, list[str]] = {}
    for line in text.splitlines():  # the boards' table comes first (the waiting signals' names boards too)
        if line.strip().startswith("ps-"):
            rows.setdefault(line.split()[0], line.split())
    assert (
        rows["ps-few"][1:4] == ["1", "1", "1"] and rows["ps-few"][-1] == "ps-researcher"
    )  # posted claimed completed
    assert rows["ps-many"][1] == str(SEEDED) and "all" in text


@pytest.mark.parametrize("command", [("status",), ("signals",), ("events",), ("entries",), ("summary",)])
def test_a_board_the_store_does_not_hold_is_exit_4(store, command):
    result = store(*command, "--blackboard", "ps-none").expect(4)
    assert "no blackboard ps-none" in result.stderr and not result.stdout


def test_signals_print_a_page_and_say_more_remain(store):
    result = store("--json", "signals", "--blackboard", "ps-many").expect(0)
    assert (
        len(assert_signals(result.json())) == 100
        and "more remain" in result.stderr
        and "--all" in result.stderr
    )
    every = store("--json", "signals", "--blackboard", "ps-many", "--all").expect(0)
    assert len(every.json()) == SEEDED and not every.stderr
    assert [s["signal_id"] for s in every.json()[:100]] == [s["signal_id"] for s in result.json()]
    few = store("--json", "signals", "--limit", "5").expect(0)
    assert len(few.json()) == 5 and not few.stderr
    assert store("signals", "--all", "--limit", "5").expect(2).stderr


def test_a_repeated_capability_keeps_every_value(store):
    review = store.ok("signals", "--capability", "REVIEW")
    both = store.ok("signals", "--capability", "REVIEW", "--capability", "RESEARCH", "--all")
    assert len(review) == 1 and len(both) == SEEDED + 3
    assert store("signals", "--capability", "").expect(2).stderr


def test_events_page_and_name_the_next_position(store):
    first = store("--json", "events").expect(0)
    page = assert_events(first.json())
    assert len(page) == 100 and f"--since {page[-1]['position']}" in first.stderr
    rest = assert_events(store.ok("events", "--since", str(page[-1]["position"]), "--all"))
    every = assert_events(store.ok("events", "--all"))
    assert page + rest == every and len(every) > 100


def test_events_jsonl_streams_the_same_documents(store):
    every = store.ok("events", "--all")
    lines = store("events", "--all", "--jsonl").expect(0).stdout.splitlines()
    assert [json.loads(line) for line in lines] == every
    mine = [
        json.loads(line)
        for line in store("events", "--jsonl", "--blackboard", "ps-few").expect(0).stdout.splitlines()
    ]
    assert mine == [e for e in every if e["stream_id"] == "ps-few"] and len(mine) == 6
    text = store("events", "--limit", "3").expect(0).stdout.splitlines()
    assert [int(line.split()[0]) for line in text] == [e["position"] for e in every[:3]]


def test_status_watch_json_prints_a_line_per_change_and_ends_on_ctrl_c(store):
    store.post(type="REVIEW", ps="ps-watch", env=LONG)  # a board of its own: the other tests' counts stay
    watch = store.start(
        "--json", "status", "--watch", "--blackboard", "ps-watch", "--interval", "0.5", env=LONG
    )
    first = json.loads(watch.stdout.readline())
    assert first[0]["signals"] == {"POSTED": 1}
    store.post(type="REVIEW", ps="ps-watch", entry="e-9", env=LONG)
    assert json.loads(watch.stdout.readline())[0]["signals"] == {
        "POSTED": 2
    }  # a line per change, not per interval
    watch.send_signal(signal.SIGINT)
    assert store.finish(watch).returncode == 0


ANSI = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")


def _read_until(fd: int, row: re.Pattern[bytes], seen: bytearray, limit: float = TIMEOUT) -> None:
    """Read the terminal until its text (colours and cursor moves left out) shows `row`."""
    deadline = time.monotonic() + limit
    while not row.search(ANSI.sub(b"", bytes(seen))):
        assert time.monotonic() < deadline, (
            f"{row.pattern!r} never appeared in:\n{seen.decode(errors='replace')}"
        )
        if select.select([fd], [], [], 0.2)[0]:
            seen += os.read(fd, 65536)


def test_status_watch_redraws_the_table_in_a_terminal(store, tmp_path: Path):
    store.ok("write", "first", "--blackboard", "ps-tty", "--author", "a", "--value", "1")
    main, terminal = pty.openpty()
    proc = subprocess.Popen(
        [BLACKBOARD, "status", "--watch", "--blackboard", "ps-tty"],
        stdin=terminal,
        stdout=terminal,
        stderr=terminal,
        env=store.environment({"COLUMNS": "160", **LONG}),
        cwd=tmp_path,
    )
    os.close(terminal)
    try:
        seen = bytearray()
        _read_until(
            main, re.compile(rb"ps-tty(\s+0){7}\s+-\s+1\s+0\s"), seen
        )  # no signal, 1 entry, 0 conflicts
        store.ok("write", "second", "--blackboard", "ps-tty", "--author", "a", "--value", "2")
        _read_until(main, re.compile(rb"ps-tty(\s+0){7}\s+-\s+2\s+0\s"), seen)  # redrawn: 2 entries
        proc.send_signal(signal.SIGINT)
        assert _drained_until_exit(main, proc) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(main)


def _drained_until_exit(fd: int, proc: subprocess.Popen, limit: float = TIMEOUT) -> int | None:
    """Keep reading the terminal until the process ends, as a terminal does: a redraw written into a
    full terminal nobody reads would block the process before it could exit (seen under load)."""
    deadline = time.monotonic() + limit
    while proc.poll() is None and time.monotonic() < deadline:
        if select.select([fd], [], [], 0.1)[0]:
            try:
                os.read(fd, 65536)
            except OSError:  # the process closed its side
                break
    return proc.wait(max(0.1, deadline - time.monotonic()))
