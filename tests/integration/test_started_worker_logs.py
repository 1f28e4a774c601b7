"""A worker `solve --start-workers` starts logs to a file named after its agent's path slug, never after the
name as written: a name outside the agent-file contract (Claude Code loads `Good List`) reaches no path."""

from __future__ import annotations

import os
from pathlib import Path

from blackboard.infrastructure.worker.started import StartedWorkers
from tests.waiting import wait_until


def test_a_started_worker_logs_under_its_agent_s_slug(tmp_path: Path):
    agents, logs = tmp_path / "agents", tmp_path / "logs"
    agents.mkdir()
    (agents / "good-list.md").write_text(
        '---\nname: Good List\ncapabilities: [REVIEW]\ncommand: "true"\n---\nReviews.\n', encoding="utf-8"
    )
    env = {
        "BLACKBOARD_DB": f"sqlite:///{tmp_path / 'b.db'}",
        "BLACKBOARD_AGENTS_DIR": str(agents),
        "BLACKBOARD_ARTIFACTS_DIR": str(tmp_path / "artifacts"),
    }
    started = StartedWorkers(env, tmp_path, logs)
    try:
        started.start(["Good List"], "ps-1")
        [log] = wait_until(lambda: list(logs.iterdir()), what="the worker's log")
        wait_until(lambda: "started" in log.read_text(errors="replace"), what="the worker to start")
    finally:
        started.stop(grace=10)

    assert log.name.startswith("good-list-") and log.name.endswith(".log")
    assert " " not in log.name and os.sep not in log.name[:-4]
