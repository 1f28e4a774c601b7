"""The fault suite (`make faults`): every test here is marked `faults`. Its rounds are bounded so that CI
runs it in a few minutes; BLACKBOARD_FAULT_SCALE multiplies them for a longer run (e.g. 10)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from blackboard.infrastructure.composition import settings
from blackboard.infrastructure.composition.container import Container
from tests.faults.invariants import counts, violations

ROOT = Path(__file__).resolve().parents[2]
SCALE = float(os.environ.get("BLACKBOARD_FAULT_SCALE", "1"))
FATAL = ("Traceback", "database is locked")  # never on any process's stderr

AGENTS = {
    "ps-researcher.md": "---\nname: ps-researcher\ncapabilities: {RESEARCH: 0.9, ANALYSIS: 0.85}\n---\nResearches.\n",
    "ps-analyst.md": "---\nname: ps-analyst\ncapabilities: {ANALYSIS: 0.9, RESEARCH: 0.85}\n---\nAnalyses.\n",
}


def scaled(n: int) -> int:
    return max(1, round(n * SCALE))


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/faults/" in item.nodeid.replace("\\", "/"):
            item.add_marker(pytest.mark.faults)


class Store:
    """A database the fault tests hit from many processes, and what they need to run against it."""

    def __init__(self, url: str, folder: Path) -> None:
        self.url = url
        agents = folder / "agents"
        agents.mkdir(parents=True, exist_ok=True)
        for name, text in AGENTS.items():
            (agents / name).write_text(text)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("BLACKBOARD_")}
        self.env.update(
            BLACKBOARD_DB=url,
            BLACKBOARD_AGENTS_DIR=str(agents),
            PYTHONPATH=str(ROOT),
            BLACKBOARD_POST_TIMEOUT="2",
            BLACKBOARD_CLAIM_TIMEOUT="2",
        )

    def container(self) -> Container:
        return Container(config=settings.load({}, env={**self.env, "BLACKBOARD_POOL_PRE_PING": "1"}))

    def actor(
        self, seed: int, operations: int, *flags: str, env: dict[str, str] | None = None
    ) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "tests.faults.actor", str(seed), str(operations), *flags],
            env={**self.env, **(env or {})},
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def blackboard(self, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [str(Path(sys.executable).parent / "blackboard"), *args],
            env={**self.env, **(env or {})},
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def assert_sound(self) -> dict[str, int]:
        """The invariants hold on the store; returns how many events of each type it holds."""
        container = self.container()
        try:
            store, read_model = container.event_store(), container.read_model()
            container.projector().catch_up()  # rows a killed import or rebuild left to fold
            broken = violations(store, read_model)
            assert broken == [], "\n".join(broken[:40])
            return counts(store)
        finally:
            container.engine().dispose()


def assert_clean(stderr: str, who: str) -> None:
    for fatal in FATAL:
        at = stderr.find(fatal)
        assert at < 0, f"{who} printed {fatal!r}:\n{stderr[max(0, at - 1500) : at + 3500]}"


@pytest.fixture(params=["sqlite", "postgresql"])
def fault_store(request, tmp_path) -> Store:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'faults.db'}"
        request.getfixturevalue("sqlite_url")
    else:
        request.getfixturevalue("pg_engine")  # the run's database, emptied
        url = request.getfixturevalue("pg_database_url")
    store = Store(url, tmp_path)
    done = subprocess.run(
        [str(Path(sys.executable).parent / "blackboard"), "db", "upgrade"],
        env=store.env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return store
