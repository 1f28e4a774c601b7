"""A command handler's standard error in the worker's log, through a real worker process and its log: each line
when the handler writes it, with its own time (not all of them when the handler ends), and the lines of a run
that is cancelled before its end (issue 34, item 6; docs/agents.md, "A handler's standard error")."""

from __future__ import annotations

import json
import re
import subprocess
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from tests.cli_server import start_blackboard
from tests.e2e.conftest import Cli
from tests.waiting import wait_until

STAMP = re.compile(r"^(\d\d:\d\d:\d\d\.\d{3}) ")  # the worker's log format: `%H:%M:%S.mmm agent[pid] ...`


@pytest.fixture
def project(tmp_path) -> Path:
    (tmp_path / "agents").mkdir()
    return tmp_path


@pytest.fixture
def pcli(make_cli, project) -> Cli:
    return make_cli(f"sqlite:///{project / 'board.db'}", project, project / "agents")


def agent(project: Path, name: str, command: str) -> None:
    head = f"name: {name}\ndescription: {name}\ncapabilities: {{RESEARCH: 0.95}}\ncommand: {json.dumps(command)}\n"
    (project / "agents" / f"{name}.md").write_text(f"---\n{head}---\n{name}\n", encoding="utf-8")


def post(cli: Cli) -> str:
    return cli.ok("post", "--type", "RESEARCH", "--ps-id", "ps-1", "--entry-id", "e-1", "--topic", "t")[
        "signal_id"
    ]


def worker(cli: Cli, name: str, log: Path) -> subprocess.Popen:
    """`blackboard worker --agent NAME --once` in the background, its log (stderr) going to `log` as it writes."""
    with log.open("wb") as out:
        return start_blackboard(
            ["worker", "--agent", name, "--once"],
            cli.environment(),
            cli.cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=out,
        )


def logged_at(log: str, text: str) -> datetime:
    """The time of the log line that ends with `text`."""
    [line] = [line for line in log.splitlines() if line.endswith(text)]
    found = STAMP.match(line)
    assert found, line
    return datetime.strptime(found.group(1), "%H:%M:%S.%f")


def test_a_handler_s_stderr_lines_reach_the_worker_s_log_as_it_writes_them_each_with_its_own_time(
    pcli, project
):
    go = project / "go"
    agent(
        project,
        "slow",
        f"echo 'reading sources' >&2; while [ ! -e {go} ]; do sleep 0.05; done; echo 'writing notes' >&2; echo done",
    )
    sig = post(pcli)
    log = project / "worker.log"
    proc = worker(pcli, "slow", log)
    try:
        wait_until(
            lambda: f"{sig} stderr: reading sources" in log.read_text(errors="replace"),
            timeout=60,
            what="the handler's first stderr line in the worker's log while it runs",
        )
        running = pcli.ok("show", sig)["status"]
        go.touch()
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()

    written = log.read_text(errors="replace")
    assert running == "CLAIMED"  # the line was logged while the handler still ran
    assert pcli.ok("show", sig)["status"] == "COMPLETED"
    first, second = (
        logged_at(written, f"{sig} stderr: reading sources"),
        logged_at(written, "stderr: writing notes"),
    )
    if second < first:  # the clock passed midnight between them
        second += timedelta(days=1)
    assert first < second, written  # each line with the time it came, not one time for all


def test_a_cancelled_run_s_stderr_is_logged_the_lines_it_wrote_while_it_stopped_included(pcli, project):
    began = project / "began"
    agent(
        project,
        "stoppable",
        "trap 'echo \"stopping: got TERM\" >&2; exit 143' TERM; "
        f"echo 'started the long part' >&2; touch {began}; sleep 60 & wait",
    )
    sig = post(pcli)
    log = project / "worker.log"
    proc = worker(pcli, "stoppable", log)
    try:
        wait_until(began.exists, timeout=60, what="the handler to start")
        pcli.ok("cancel", sig, "--reason", "not needed")
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()

    written = log.read_text(errors="replace")
    assert pcli.ok("show", sig)["status"] == "CANCELLED"
    assert f"{sig} stderr: started the long part" in written, written
    assert f"{sig} stderr: stopping: got TERM" in written, written
