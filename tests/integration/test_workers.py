"""`blackboard worker` as real processes: exactly once, leases, graceful stop, dependencies, batches, entrypoints."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from blackboard.application.commands import PostSignal
from blackboard.domain.signals import SignalStatus
from blackboard.infrastructure.composition import settings
from blackboard.infrastructure.composition.container import Container
from tests.cli_server import run_blackboard, start_blackboard

# A handler that records the signal document it got, then sleeps $SLEEP seconds and reports.
HANDLER = r"""
import json, os, sys, time
doc = json.load(sys.stdin)
log = os.environ["WORK_LOG"]
with open(log, "a") as f:
    f.write(json.dumps({"signal_id": doc["signal_id"], "pid": os.getpid(), "doc": doc}) + "\n")
time.sleep(float(os.environ.get("SLEEP", "0")))
print(json.dumps({"artifact_path": "out/" + doc["signal_id"] + ".md", "knowledge_items": ["done"]}))
"""


# The same as an entrypoint (agents/pyhandlers/work.py): called in the worker's process; a topic naming "fail" fails.
PY_HANDLER = r"""
import json, os
def handle(document):
    topic = document["payload"]["topic"]
    with open(os.environ["WORK_LOG"], "a") as f:
        f.write(json.dumps({"signal_id": document["signal_id"], "pid": os.getpid(), "doc": document}) + "\n")
    if "fail" in topic:
        raise ValueError("no sources for " + topic)
    return {"artifact_path": "py/" + document["signal_id"] + ".md", "knowledge_items": [topic]}
"""


class Board:
    def __init__(self, tmp_path: Path, url: str | None = None, **env: str) -> None:
        self.url = url or f"sqlite:///{tmp_path / 'b.db'}"
        self.agents = tmp_path / "agents"
        self.agents.mkdir()
        (self.agents / "handler.py").write_text(HANDLER)
        self.log = tmp_path / "work.log"
        self.env = {
            **os.environ,
            "BLACKBOARD_DB": self.url,
            "BLACKBOARD_AGENTS_DIR": str(self.agents),
            "WORK_LOG": str(self.log),
            "BLACKBOARD_JSON": "",
            "BLACKBOARD_POST_TIMEOUT": "600",
            **env,
        }
        self.workers: list[subprocess.Popen[str]] = []
        self.stderr: dict[int, str] = {}  # worker pid -> what it logged, once stopped
        self.cli("db", "upgrade")
        # configured as the workers are; this process lives through the restart test too: check pooled
        # connections before use
        self.container = Container(
            config=settings.load({}, env={**self.env, "BLACKBOARD_POOL_PRE_PING": "1"})
        )
        self.read_model, self.store = self.container.read_model(), self.container.event_store()
        self.service = self.container.service()

    def post_many(self, kind: str, count: int, topics: list[str] | None = None) -> list[str]:
        """In this process: a CLI call per signal would take most of a minute for a hundred."""
        return [
            self.service.post_signal(
                PostSignal(
                    signal_type=kind,
                    ps_id="ps-w",
                    entry_id=f"e-{n}",
                    topic=topics[n] if topics else f"topic {n}",
                )
            ).signal_id
            for n in range(count)
        ]

    def agent(self, name: str, capability: str, score: float = 0.9, timeout: int = 60) -> None:
        (self.agents / f"{name}.md").write_text(
            f"---\nname: {name}\ncapabilities: {{{capability}: {score}}}\n"
            f"command: {sys.executable} handler.py\ntimeout: {timeout}\n---\nTest agent.\n"
        )

    def python_agent(self, name: str, capability: str, source: str = PY_HANDLER) -> None:
        """An agent whose handler is a Python function in agents/pyhandlers/work.py (`entrypoint:`)."""
        (self.agents / "pyhandlers").mkdir(exist_ok=True)
        (self.agents / "pyhandlers" / "work.py").write_text(source)
        (self.agents / f"{name}.md").write_text(
            f"---\nname: {name}\ncapabilities: {{{capability}: 0.9}}\n"
            "entrypoint: pyhandlers.work:handle\n---\nTest agent.\n"
        )

    def records(self, event_type: str) -> list:
        return [r for r in self.store.read_all() if r.event.event_type == event_type]

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        done = run_blackboard(list(args), self.env)  # forked warm (tests/cli_server.py)
        assert "Traceback" not in done.stderr, done.stderr
        return done

    def post(self, kind: str, entry: int, *extra: str) -> str:
        done = self.cli(
            "--json",
            "post",
            "--type",
            kind,
            "--ps-id",
            "ps-w",
            "--entry-id",
            f"e-{entry}",
            "--topic",
            f"topic {entry}",
            *extra,
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)["signal_id"]

    def worker(self, agent: str, *extra: str, **env: str) -> subprocess.Popen[str]:
        process = start_blackboard(  # warm, from the CLI fork server; `call_pid` is the worker's own pid
            ["worker", "--agent", agent, *extra],
            {**self.env, **env},
            None,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.workers.append(process)
        return process

    def status(self, signal_id: str) -> SignalStatus:
        return self.read_model.get(signal_id).status

    def until(self, condition, timeout: float = 30.0, what: str = "condition") -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            assert time.monotonic() < deadline, f"timed out waiting for {what}"
            time.sleep(0.05)

    def handled(self) -> list[dict]:
        return [json.loads(line) for line in self.log.read_text().splitlines()] if self.log.exists() else []

    def stop_all(self) -> None:
        for process in self.workers:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.workers:
            if process.pid not in self.stderr:
                self.stderr[process.pid] = process.communicate(timeout=30)[1]


@pytest.fixture
def board(tmp_path):
    made = Board(tmp_path)
    yield made
    made.stop_all()


def test_two_equally_able_workers_do_each_of_100_signals_exactly_once(board):
    board.agent("ps-worker", "RESEARCH")
    ids = board.post_many("RESEARCH", 100)
    first, second = board.worker("ps-worker"), board.worker("ps-worker")

    board.until(lambda: all(board.status(s) is SignalStatus.COMPLETED for s in ids), 120, "100 completions")
    board.stop_all()

    done = [entry["signal_id"] for entry in board.handled()]
    assert sorted(done) == sorted(ids)  # every signal handled, none twice
    claims = [r for r in board.store.read_all() if r.event.event_type == "AgentSignalClaimed"]
    assert len(claims) == 100 and len({r.event.token for r in claims}) == 100  # a token for every claim
    workers = {r.metadata["worker"] for r in claims}  # who claimed: the workers' public ids, not tokens
    assert len(workers) == 2 and all(w.startswith("ps-worker/") for w in workers)  # both workers took part
    assert first.returncode == second.returncode == 0
    assert "claimed" in board.stderr[first.pid] and "claimed" in board.stderr[second.pid]  # both took part
    assert "completed" in board.stderr[second.pid]


def test_a_worker_killed_mid_task_loses_its_claim_on_time_and_nothing_else(board, tmp_path):
    board.env["BLACKBOARD_CLAIM_TIMEOUT"] = "2"
    board.agent("ps-worker", "RESEARCH")
    doomed, waiting = board.post("RESEARCH", 1), board.post("RESEARCH", 2)
    victim = board.worker("ps-worker", "--once", SLEEP="30")
    board.until(lambda: board.status(doomed) is SignalStatus.CLAIMED, 20, "the claim")
    board.until(lambda: len(board.handled()) == 1, 20, "the handler to start")
    board.until(lambda: board.records("AgentSignalClaimRenewed"), 20, "a lease renewal")

    victim.send_signal(signal.SIGKILL)
    victim.wait(timeout=10)
    os.kill(board.handled()[0]["pid"], signal.SIGKILL)  # its orphaned handler, for tidiness
    board.env.pop("SLEEP", None)
    survivor = board.worker("ps-worker")  # a fresh worker sweeps, and takes the work that is left

    board.until(lambda: board.status(doomed) is SignalStatus.EXPIRED, 30, "the dead worker's claim to expire")
    board.until(lambda: board.status(waiting) is SignalStatus.COMPLETED, 15, "the other signal")
    ended = board.read_model.get(doomed)
    assert "did not finish within the claim timeout of 2s" in ended.result.error
    renewals = [r for r in board.store.read_all() if r.event.event_type == "AgentSignalClaimRenewed"]
    assert renewals and all(r.event.signal_id == doomed for r in renewals)
    expired = board.records("AgentSignalExpired")[0].event
    assert (
        expired.occurred_at - renewals[-1].event.occurred_at
    ).total_seconds() >= 2  # never before its timeout
    assert survivor.poll() is None


def test_sigterm_lets_the_running_handler_finish_and_the_worker_exit_cleanly(board):
    board.agent("ps-worker", "RESEARCH")
    signal_id = board.post("RESEARCH", 1)
    worker = board.worker("ps-worker", SLEEP="1.5")
    board.until(lambda: len(board.handled()) == 1, 20, "the handler to start")

    worker.send_signal(signal.SIGTERM)
    out, err = worker.communicate(timeout=30)

    assert worker.returncode == 0, err
    assert board.status(signal_id) is SignalStatus.COMPLETED
    assert "stopping: no new claims" in err and "completed" in err


def test_a_handler_still_running_after_the_grace_period_fails_its_signal_with_the_reason(board):
    board.agent("ps-worker", "RESEARCH")
    signal_id = board.post("RESEARCH", 1)
    worker = board.worker("ps-worker", "--grace", "0.5", SLEEP="30")
    board.until(lambda: len(board.handled()) == 1, 20, "the handler to start")

    worker.send_signal(signal.SIGINT)
    worker.communicate(timeout=30)

    ended = board.read_model.get(signal_id)
    assert worker.returncode == 0
    assert ended.status is SignalStatus.FAILED and "grace period is over" in ended.result.error


def test_a_dependant_runs_only_after_its_upstream_and_gets_its_result(board):
    board.agent("ps-researcher", "RESEARCH")
    board.agent("ps-reviewer", "REVIEW")
    research = board.post("RESEARCH", 1)
    review = board.post("REVIEW", 2, "--after", research)
    reviewer = board.worker("ps-reviewer")
    probe = board.post("REVIEW", 3)  # free to take: once the reviewer has done it, it has looked at the board
    board.until(lambda: board.status(probe) is SignalStatus.COMPLETED, 30, "the reviewer's first signal")
    assert board.status(review) is SignalStatus.POSTED  # waiting: its upstream is not done

    board.worker("ps-researcher")
    board.until(lambda: board.status(review) is SignalStatus.COMPLETED, 30, "the review")

    handled = [entry for entry in board.handled() if entry["signal_id"] != probe]
    assert [entry["signal_id"] for entry in handled] == [research, review]
    upstream = handled[1]["doc"]["payload"]["context"]["upstream"]
    assert upstream[research]["status"] == "COMPLETED"
    assert upstream[research]["result"]["artifact_path"] == f"out/{research}.md"
    assert reviewer.poll() is None


def test_once_exits_0_when_there_is_nothing_to_do(board):
    board.agent("ps-worker", "RESEARCH")

    done = board.cli("worker", "--agent", "ps-worker", "--once")

    assert done.returncode == 0 and "handled 0 signal(s)" in done.stdout


def test_a_worker_for_an_agent_without_a_command_refuses_to_start_when_its_runner_cannot(board):
    (board.agents / "idle.md").write_text(
        "---\nname: idle\ncapabilities: {RESEARCH: 0.9}\n---\nNo command.\n"
    )
    signal_id = board.post("RESEARCH", 1)
    board.env["BLACKBOARD_CLAUDE"] = str(board.agents / "no-claude")  # whatever the machine has

    done = board.cli("worker", "--agent", "idle", "--once")

    assert done.returncode == 2 and "the claude-code runner needs Claude Code" in done.stderr
    assert board.status(signal_id) is SignalStatus.POSTED  # nothing claimed, nothing failed


def test_an_unknown_agent_is_not_found(board):
    done = board.cli("worker", "--agent", "ps-nobody", "--once")

    assert done.returncode == 4 and "no agent named ps-nobody" in done.stderr


def test_a_failed_signal_is_retried_and_a_worker_does_the_retry(board):
    board.agent("ps-worker", "RESEARCH")
    original = board.post("RESEARCH", 1)
    board.cli("claim", original, "--agent", "ps-worker")
    board.cli("fail", original, "--agent", "ps-worker", "--error", "flaky source")

    retried = json.loads(board.cli("--json", "retry", original).stdout)
    board.cli("worker", "--agent", "ps-worker", "--once")

    assert retried["retry_of"] == original and retried["signal_id"] != original
    assert board.status(retried["signal_id"]) is SignalStatus.COMPLETED
    assert board.cli("retry", retried["signal_id"]).returncode == 3  # a COMPLETED signal is not retried


def test_a_worker_on_postgresql_rides_out_a_server_restart_without_losing_or_repeating_work(
    tmp_path, pg_engine, pg_database_url
):
    from sqlalchemy import text

    board = Board(tmp_path, url=pg_database_url)
    try:
        board.agent("ps-worker", "RESEARCH")
        first = board.post_many("RESEARCH", 1)[0]
        board.worker("ps-worker", SLEEP="1.5")
        board.until(lambda: len(board.handled()) == 1, 20, "the first handler to start")

        def restart() -> int:  # what a server restart does to every client: its connections die
            with pg_engine.connect() as conn:
                return conn.execute(
                    text(
                        "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
                        "WHERE datname = current_database() AND pid <> pg_backend_pid()"
                    )
                ).scalar()

        assert restart() >= 1  # mid-handler: the completion must still be recorded
        board.until(lambda: board.status(first) is SignalStatus.COMPLETED, 30, "the first completion")
        assert restart() >= 1  # while idle and listening: the next post must still wake it
        second = board.post_many("RESEARCH", 1)[0]
        board.until(lambda: board.status(second) is SignalStatus.COMPLETED, 30, "the second completion")
    finally:
        board.stop_all()

    assert [entry["signal_id"] for entry in board.handled()] == [first, second]  # each once


@pytest.mark.parametrize("handler", ["command", "entrypoint"])
def test_ten_signals_waiting_for_a_worker_with_ten_slots_are_claimed_in_one_command_and_each_done_once(
    board, handler
):
    if handler == "command":
        board.agent("ps-worker", "RESEARCH")
    else:
        board.python_agent("ps-worker", "RESEARCH")
    ids = board.post_many("RESEARCH", 10)
    worker = board.worker("ps-worker", "--concurrency", "10")

    board.until(lambda: all(board.status(s) is SignalStatus.COMPLETED for s in ids), 60, "10 completions")
    board.stop_all()

    claims = board.records("AgentSignalClaimed")
    assert sorted(r.event.signal_id for r in claims) == sorted(ids)
    assert len({r.metadata["causation_id"] for r in claims}) == 1  # one ClaimSignals command took all ten
    assert {r.metadata["command"] for r in claims} == {"ClaimSignals"}
    assert [r.event.version for r in claims] == list(
        range(claims[0].event.version, claims[0].event.version + 10)
    )
    completions = board.records("AgentSignalCompleted")
    assert sorted(r.event.signal_id for r in completions) == sorted(ids)  # each completed once
    assert {r.metadata["command"] for r in completions} == {"RecordOutcomes"}
    assert sorted(entry["signal_id"] for entry in board.handled()) == sorted(ids)  # each handled once
    prefix = "out" if handler == "command" else "py"
    assert all(board.read_model.get(s).result.artifact_path == f"{prefix}/{s}.md" for s in ids)
    in_process = {entry["pid"] == worker.call_pid for entry in board.handled()}
    assert in_process == {handler == "entrypoint"}
    assert worker.returncode == 0, board.stderr[worker.pid]


def test_an_entrypoint_agent_s_worker_completes_and_fails_its_signals_with_the_function_s_results(board):
    board.python_agent("ps-worker", "RESEARCH")
    topics = ["graph stores", "fail on purpose", "event logs", "fail again"]
    ids = board.post_many("RESEARCH", 4, topics=topics)
    worker = board.worker("ps-worker", "--concurrency", "2")

    board.until(lambda: all(board.status(s).is_final for s in ids), 60, "four outcomes")
    board.stop_all()

    ended = {s: board.read_model.get(s) for s in ids}
    for signal_id, topic in zip(ids, topics, strict=True):
        signal_ = ended[signal_id]
        assert signal_.claimed_by == "ps-worker"
        if "fail" in topic:
            assert signal_.status is SignalStatus.FAILED
            assert signal_.result.error == f"ValueError: no sources for {topic}"
        else:
            assert signal_.status is SignalStatus.COMPLETED
            assert signal_.result.artifact_path == f"py/{signal_id}.md"
            assert signal_.result.knowledge_items == (topic,)
    assert worker.returncode == 0
    assert "completed" in board.stderr[worker.pid] and "failed" in board.stderr[worker.pid]


def test_a_worker_whose_entrypoint_cannot_be_imported_refuses_to_start(board):
    board.python_agent("ps-broken", "RESEARCH", source="raise RuntimeError('needs API_KEY')\n")
    signal_id = board.post("RESEARCH", 1)

    worker = board.worker("ps-broken")  # not --once: it must not start its loop at all
    out, err = worker.communicate(timeout=30)

    assert worker.returncode == 2, err
    assert "blackboard: entrypoint: cannot import module pyhandlers.work" in err and "needs API_KEY" in err
    assert "Traceback" not in err
    assert board.status(signal_id) is SignalStatus.POSTED  # nothing claimed, nothing failed
    assert board.records("AgentSignalClaimed") == []
