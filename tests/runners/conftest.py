"""A board for runner tests: an agents folder, a SQLite store, a workdir, and the real `blackboard` CLI."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import Cli, assert_signal


class RunnerCli(Cli):
    """Signals wait an hour before they expire: a run on a loaded machine takes its time."""

    def environment(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        return super().environment({"BLACKBOARD_POST_TIMEOUT": "3600", **(extra or {})})


@dataclass
class Board:
    cli: Cli
    agents: Path
    workdir: Path

    def agent(self, name: str, frontmatter: str, body: str) -> Path:
        path = self.agents / f"{name}.md"
        path.write_text(f"---\nname: {name}\n{frontmatter}---\n{body}\n", encoding="utf-8")
        return path

    def post(self, capability: str, *args: str, topic: str = "a topic", **options: str) -> dict[str, Any]:
        return self.cli.post("--capability", capability, *args, topic=topic, **options)

    def show(self, signal_id: str) -> dict[str, Any]:
        return assert_signal(self.cli.ok("show", signal_id))

    def entries(self, board: str = "ps-1") -> dict[str, Any]:
        return {e["key"]: e for e in self.cli.ok("entries", "--blackboard", board)}

    def transcript(self, signal: dict[str, Any]) -> list[dict[str, Any]]:
        path = Path(signal["usage"]["transcript_path"])
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _board(tmp_path: Path, url: str) -> Iterator[Board]:
    agents, workdir = tmp_path / "agents", tmp_path / "work"
    agents.mkdir()
    workdir.mkdir()
    cli = RunnerCli(url, agents, workdir)
    yield Board(cli, agents, workdir)
    cli.close()


@pytest.fixture
def board(tmp_path) -> Iterator[Board]:
    """On SQLite."""
    yield from _board(tmp_path, f"sqlite:///{tmp_path / 'board.db'}")


@pytest.fixture(params=["sqlite", "postgresql"])
def both_board(request, tmp_path) -> Iterator[Board]:
    """On SQLite, then on a PostgreSQL database of its own."""
    url = (
        f"sqlite:///{tmp_path / 'board.db'}"
        if request.param == "sqlite"
        else request.getfixturevalue("pg_private_url")
    )
    yield from _board(tmp_path, url)
