"""End-to-end fixtures: the real `blackboard` executable in a subprocess, as a script or an agent runs it.

Every run goes through `Cli`, which asserts centrally that no traceback ever reaches stderr
(docs/cli.md: "No traceback reaches a user"). Documents printed with `--json` are checked against
the signal schema the package ships (generated from the models; it refines the contract's, test_schemas.py)
with a format checker that really checks `date-time`.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from jsonschema import Draft7Validator, FormatChecker
from sqlalchemy import create_engine, text
from sqlalchemy.pool import NullPool

from tests.cli_server import run_blackboard, start_blackboard
from tests.paths import SIGNAL_SCHEMA

BLACKBOARD = str(Path(sys.executable).parent / "blackboard")
SCHEMA = json.loads(SIGNAL_SCHEMA.read_text(encoding="utf-8"))
EVENT_KEYS = {"position", "event_type", "stream_id", "version", "recorded_at", "data"}
TIMEOUT = 60.0  # seconds one CLI call may take before the test fails (never reached when things work)
PARALLEL = max(2, os.cpu_count() or 2)  # CLI calls run at once by Cli.many

# jsonschema checks "date-time" only with the optional rfc3339-validator installed; check it here instead.
_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})")
FORMATS = FormatChecker()


@FORMATS.checks("date-time", raises=ValueError)
def _date_time(value: object) -> bool:
    if not isinstance(value, str):
        return True
    if not _RFC3339.fullmatch(value):
        return False
    datetime.fromisoformat(value.upper().replace("Z", "+00:00"))  # a real date and time
    return True


Draft7Validator.check_schema(SCHEMA)
SIGNAL_VALIDATOR = Draft7Validator(SCHEMA, format_checker=FORMATS)


def assert_signal(document: Any) -> dict[str, Any]:
    """One AgentSignal document that validates against the shipped signal schema."""
    errors = [
        f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}"
        for e in SIGNAL_VALIDATOR.iter_errors(document)
    ]
    assert not errors, f"not an AgentSignal: {errors}\n{json.dumps(document, indent=2)}"
    return document


def assert_signals(documents: Any) -> list[dict[str, Any]]:
    assert isinstance(documents, list), f"expected a JSON array of signals, got {documents!r}"
    return [assert_signal(d) for d in documents]


def assert_events(items: Any) -> list[dict[str, Any]]:
    assert isinstance(items, list), f"expected a JSON array of events, got {items!r}"
    for item in items:
        assert set(item) >= EVENT_KEYS, f"an event lacks {EVENT_KEYS - set(item)}: {item}"
        assert isinstance(item["position"], int) and isinstance(item["version"], int)
        assert isinstance(item["data"], dict)
        assert FORMATS.conforms(item["recorded_at"], "date-time"), item["recorded_at"]
    return items


class Result(NamedTuple):
    returncode: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        try:
            return json.loads(self.stdout)
        except json.JSONDecodeError as exc:
            raise AssertionError(
                f"stdout is not JSON ({exc}):\n{self.stdout}\nstderr:\n{self.stderr}"
            ) from None

    def expect(self, code: int) -> Result:
        assert self.returncode == code, (
            f"exit {self.returncode}, expected {code}\nstdout:\n{self.stdout}\nstderr:\n{self.stderr}"
        )
        return self


def no_traceback(result: Result, args: tuple[str, ...]) -> Result:
    assert "Traceback" not in result.stderr, (
        f"`blackboard {' '.join(args)}` showed a traceback:\n{result.stderr}"
    )
    return result


class Cli:
    """Runs `blackboard` with BLACKBOARD_DB and BLACKBOARD_AGENTS_DIR set, in `cwd`."""

    def __init__(self, db_url: str, agents_dir: Path, cwd: Path) -> None:
        self.db_url = db_url
        self.agents_dir = agents_dir
        self.cwd = cwd
        self._started: list[subprocess.Popen[str]] = []

    def environment(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("BLACKBOARD_")}
        env.update(BLACKBOARD_DB=self.db_url, BLACKBOARD_AGENTS_DIR=str(self.agents_dir))
        # no Claude Code, whatever the machine has: an agent with no handler has no runner that can start
        # (a runner test names the pinned one in `extra`)
        env.update(BLACKBOARD_CLAUDE=str(self.cwd / "no-claude-here"))
        # BLACKBOARD_POST_TIMEOUT is off unless set: a posted signal waits for its worker however busy the
        # machine; a test about expiry sets its own timeouts
        env.update(extra or {})
        return env

    def __call__(self, *args: str, env: dict[str, str] | None = None, timeout: float = TIMEOUT) -> Result:
        done = run_blackboard(list(args), self.environment(env), self.cwd, timeout)
        return no_traceback(Result(done.returncode, done.stdout, done.stderr), args)

    def ok(self, *args: str, env: dict[str, str] | None = None) -> Any:
        """Run with --json, expect exit 0, return the parsed output."""
        return self("--json", *args, env=env).expect(0).json()

    def post(
        self,
        *args: str,
        type: str = "RESEARCH",
        ps: str = "ps-1",
        entry: str = "e-1",
        topic: str = "a topic",
        env: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        """Post with --json; expect exit 0; the signal document, checked against the schema."""
        return assert_signal(
            self.ok(
                "post", "--type", type, "--ps-id", ps, "--entry-id", entry, "--topic", topic, *args, env=env
            )
        )

    def many(
        self, calls: Mapping[str, tuple[Sequence[str], dict[str, str] | None]]
    ) -> dict[str, Future[Result]]:
        """Start independent calls, each `(args, env)`, at once (a CLI call is mostly start-up time); a test
        takes its own `.result()`, so a traceback or a timeout fails the test that made the call, not the others."""
        pool = ThreadPoolExecutor(max_workers=PARALLEL)
        try:
            return {name: pool.submit(self, *args, env=env) for name, (args, env) in calls.items()}
        finally:
            pool.shutdown(wait=False)

    def chains(self, *steps: Callable[[], Any]) -> list[Any]:
        """Run independent sequences of calls (each a function) at once; their return values, in order."""
        with ThreadPoolExecutor(max_workers=PARALLEL) as pool:
            return [f.result() for f in [pool.submit(step) for step in steps]]

    def start(self, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        """Start `blackboard ARGS` in the background (`start_blackboard`: warm, from the CLI fork server), and
        return once it has opened the database."""
        proc = start_blackboard(
            args, self.environment(env), self.cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        self._started.append(proc)
        self._until_connected(proc)
        return proc

    def close(self) -> None:
        """Stop what `start` started and a failed test left running, and wait until each is gone: killing a
        warm start's shim ends the shim at once and the call a moment later (the fork server kills it when
        its shim goes), and a worker still beating then would be a live worker on the next test's database."""
        for proc in self._started:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
            call = getattr(proc, "call_pid", proc.pid)
            deadline = time.monotonic() + 30.0
            while not _gone(call) and time.monotonic() < deadline:
                time.sleep(0.02)
            assert _gone(call), f"a process `start` started (pid {call}) outlived its kill"
        self._started.clear()

    def finish(self, proc: subprocess.Popen[str], timeout: float = TIMEOUT) -> Result:
        try:
            stdout, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            stdout, stderr = proc.communicate()
            raise AssertionError(
                f"`blackboard {' '.join(proc.args[1:])}` still running after {timeout}s\n{stderr}"
            ) from None
        return no_traceback(Result(proc.returncode, stdout, stderr), tuple(proc.args[1:]))

    def _until_connected(self, proc: subprocess.Popen[str], limit: float = 30.0) -> None:
        """Block until the process holds its database connection (the SQLite file or a socket).

        `watch` takes its starting log position right after connecting, so a change made from
        then on (by a process that itself needs ~0.5 s to start) happens after the watch began."""
        sqlite_file = (
            os.path.realpath(self.db_url.removeprefix("sqlite:///"))
            if self.db_url.startswith("sqlite:")
            else None
        )
        deadline = time.monotonic() + limit
        fd_dir = Path(f"/proc/{proc.call_pid}/fd")
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                return  # ended already: finish() reports what it printed
            try:
                # not its stdin, stdout or stderr, which it was given (a socket, were its stdin one)
                targets = [os.readlink(fd_dir / fd) for fd in os.listdir(fd_dir) if int(fd) > 2]
            except OSError:
                targets = []
            if any(t == sqlite_file if sqlite_file else t.startswith("socket:") for t in targets):
                time.sleep(0.05)
                return
            time.sleep(0.02)
        proc.kill()
        raise AssertionError(
            f"`blackboard {' '.join(proc.args[1:])}` did not open {self.db_url} within {limit}s"
        )


AGENT_FILES = {
    "ps-researcher.md": """---
name: ps-researcher
description: Finds prior work on a topic.
capabilities:
  - type: RESEARCH
    score: 0.95
  - type: INVESTIGATION
    score: 0.7
---
You research.
""",
    "ps-analyst.md": """---
name: ps-analyst
description: Analyses; researches too, a little less well.
capabilities:
  - type: ANALYSIS
    score: 0.9
  - type: RESEARCH
    score: 0.85
---
You analyse.
""",
    "ps-reviewer.md": """---
name: ps-reviewer
capabilities: {REVIEW: 0.95}
tools: Read, Grep
model: sonnet
---
You review.
""",
    "ps-generalist.md": """---
name: ps-generalist
description: Does a bit of everything; claims with its own low threshold.
capabilities:
  - type: INVESTIGATION
    score: 0.6
  - type: DECISION
    score: 0.6
threshold: 0.5
---
You do what nobody else does.
""",
}


def write_agents(folder: Path, extra: dict[str, str] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, content in {**AGENT_FILES, **(extra or {})}.items():
        (folder / name).write_text(content, encoding="utf-8")
    return folder


@pytest.fixture(scope="session")
def agents_dir(tmp_path_factory) -> Path:
    return write_agents(tmp_path_factory.mktemp("agents"))


@pytest.fixture(scope="session")
def make_cli(agents_dir) -> Iterator[Callable[..., Cli]]:
    made: list[Cli] = []

    def make(db_url: str, cwd: Path, agents: Path | None = None) -> Cli:
        made.append(Cli(db_url, agents or agents_dir, cwd))
        return made[-1]

    yield make
    for cli in made:
        cli.close()


@pytest.fixture
def cli(make_cli, tmp_path) -> Iterator[Cli]:
    """The CLI on a fresh SQLite file of this test, run from tmp_path."""
    made = make_cli(f"sqlite:///{tmp_path / 'blackboard.db'}", tmp_path)
    yield made
    made.close()


def _gone(pid: int) -> bool:
    """Whether the process has ended (no such process, or a zombie its parent has yet to reap)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return True
    return state in ("Z", "X")


def database_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, label: str) -> str:
    """For a fixture parametrised with "sqlite" and "postgresql": a SQLite file of its own, or the run's
    PostgreSQL database emptied (fails, never skips, without PostgreSQL)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path_factory.mktemp(label) / 'blackboard.db'}"
    url = request.getfixturevalue("pg_database_url")
    empty_database(url)
    return url


QUICK_AGENT = """---
name: ps-quick
capabilities: {RESEARCH: 0.95}
command: echo done
---
Answers at once.
"""


def cli_with_agents(
    request: pytest.FixtureRequest,
    make_cli: Callable[..., Cli],
    tmp_path_factory: pytest.TempPathFactory,
    tmp_path: Path,
    label: str,
    agents: Mapping[str, str],
) -> Cli:
    """For a fixture parametrised with "sqlite" and "postgresql": the CLI on its database (database_url),
    run from tmp_path, with an agents folder of its own holding `agents` (file name -> text)."""
    url = database_url(request, tmp_path_factory, label)
    folder = tmp_path / "agents"
    folder.mkdir()
    for name, content in agents.items():
        (folder / name).write_text(content, encoding="utf-8")
    return make_cli(url, tmp_path, folder)


def empty_database(url: str) -> None:
    """Other tests of the run may have left rows (even a read model out of step with its events)."""
    engine = create_engine(url, poolclass=NullPool)
    with engine.begin() as conn:
        tables = (
            conn.execute(
                text(
                    "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() "
                    "AND tablename <> 'alembic_version'"
                )
            )
            .scalars()
            .all()
        )
        if tables:
            conn.execute(text(f"TRUNCATE {', '.join(tables)} RESTART IDENTITY"))
    engine.dispose()
