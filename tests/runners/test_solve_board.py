"""`blackboard solve` that sees the board (seed 004): each step's signal carries the run's entries so far; the
controller is asked again only once the last step's knowledge has landed; at the iteration limit it is asked
once for its best answer from what is known (`--no-synthesis` skips it). Real `blackboard solve` processes with
a command controller (no model) and the real workers it starts, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.runners.conftest import Board, RunnerCli

PROBLEM = "What are the parts of the number?"
RUN_BOARD = "ps-1"

# A specialist with rules: it keeps the signal document it was given (its stdin), then hands back as many
# findings as `items.txt` says, each `FOUND <iteration>.<n>` padded to `pad.txt` characters.
FINDER = """import json, pathlib, sys
doc = json.load(sys.stdin)
seen = pathlib.Path("seen")
seen.mkdir(exist_ok=True)
(seen / (doc["signal_id"] + ".json")).write_text(json.dumps(doc), encoding="utf-8")
step = doc["payload"]["context"]["iteration"]
count, pad = int(pathlib.Path("items.txt").read_text()), int(pathlib.Path("pad.txt").read_text())
print(json.dumps({"knowledge_items": [f"FOUND {step}.{n} ".ljust(pad, "x") for n in range(1, count + 1)]}))
"""

# A controller with rules: it notes each message it is given (whether the iterations are spent, how many
# findings the board's summary counts), posts for finder while `posts.txt` allows, then answers; at the limit
# it answers with the results its message lists.
CONTROLLER = """import json, pathlib, re, sys
prompt = sys.stdin.read()
at_limit = "iterations are spent" in prompt
counted = re.search(r'"finding": (\\d+)', prompt)
with open("asked.jsonl", "a", encoding="utf-8") as log:
    log.write(json.dumps({"at_limit": at_limit, "findings": int(counted[1]) if counted else 0}) + "\\n")
if at_limit:
    found = re.findall(r"^   result: (FOUND [0-9.]+)", prompt, re.MULTILINE)
    print(json.dumps({"action": "solved", "answer": "best so far: " + ", ".join(found),
                      "reason": "the findings so far; nothing says they are all the parts"}))
    sys.exit()
iteration = int(re.search(r"iteration (\\d+) of at most", prompt)[1])
if iteration <= int(pathlib.Path("posts.txt").read_text()):
    print(json.dumps({"action": "post", "agent": "finder", "capability": "RESEARCH",
                      "topic": f"find part {iteration}", "reason": "a part is missing"}))
else:
    print(json.dumps({"action": "solved", "answer": "all parts found", "reason": "the findings"}))
"""


@pytest.fixture(params=["sqlite", "postgresql"])
def any_board(request, tmp_path) -> Iterator[Board]:
    agents, workdir = tmp_path / "agents", tmp_path / "work"
    agents.mkdir()
    workdir.mkdir()
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'board.db'}"
    else:
        request.getfixturevalue("pg_engine")  # emptied for this test
        url = request.getfixturevalue("pg_database_url")
    cli = RunnerCli(url, agents, workdir)
    yield Board(cli, agents, workdir)
    cli.close()


def setup(board: Board, posts: int, items: int, pad: int = 12) -> Path:
    """finder (a handler) in the agents folder, the controller in its own folder; the controller's file."""
    (board.agents / "finder.py").write_text(FINDER, encoding="utf-8")
    (board.agents / "items.txt").write_text(str(items), encoding="utf-8")
    (board.agents / "pad.txt").write_text(str(pad), encoding="utf-8")
    board.agent(
        "finder",
        "capabilities:\n  - type: RESEARCH\n    score: 0.95\ndescription: Finds parts.\n"
        f"command: {sys.executable} finder.py\n",
        "You find.",
    )
    folder = board.workdir / "controllers"
    folder.mkdir()
    (folder / "rules.py").write_text(CONTROLLER, encoding="utf-8")
    (folder / "posts.txt").write_text(str(posts), encoding="utf-8")
    path = folder / "rules.md"
    path.write_text(
        f"---\nname: rules\ndescription: a controller with rules\ncommand: {sys.executable} rules.py\n---\n",
        encoding="utf-8",
    )
    return path


def solve(board: Board, ctl: Path, *args: str, code: int) -> dict[str, Any]:
    done = board.cli(
        "--json",
        "solve",
        PROBLEM,
        "--blackboard",
        RUN_BOARD,
        "--controller",
        str(ctl),
        "--start-workers",
        *args,
        timeout=300,
    ).expect(code)
    run = done.json()
    run["stderr"] = done.stderr
    return run


def asked(ctl: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line) for line in (ctl.parent / "asked.jsonl").read_text(encoding="utf-8").splitlines()
    ]


def seen(board: Board, signal_id: str) -> dict[str, Any]:
    """The signal document finder's handler was given on its stdin."""
    return json.loads((board.agents / "seen" / f"{signal_id}.json").read_text(encoding="utf-8"))


def log(board: Board) -> list[dict[str, Any]]:
    return board.cli.ok("events", "--blackboard", RUN_BOARD, "--all")


DECISIONS = {"SolveStepPosted", "SolveDecisionFailed", "SolveSolved", "SolveSynthesized"}


def landed_before_each_decision(events: list[dict[str, Any]], run: dict[str, Any]) -> None:
    """Each decision after a step (and the step's recorded end) comes after every entry its knowledge landed
    as, in the log."""
    in_run = [e for e in events if e["stream_id"] == f"{RUN_BOARD}\x1e{run['run_id']}"]
    decisions = [e for e in in_run if e["event_type"] in DECISIONS]
    for step, decision in zip(run["steps"], decisions[1:], strict=True):  # each step, then a decision
        items = [
            e["position"]
            for e in events
            if e["event_type"] == "EntryWritten"
            and e["data"]["key"].startswith(f"{step['signal_id']}/knowledge/")
        ]
        ended = next(
            e["position"]
            for e in in_run
            if e["event_type"] == "SolveStepEnded" and e["data"]["signal_id"] == step["signal_id"]
        )
        assert items and max(items) < ended < decision["position"], (step["iteration"], max(items), decision)


def test_a_steps_handler_finds_the_runs_entries_so_far_in_its_document_newest_first(any_board):
    board = any_board
    ctl = setup(board, posts=2, items=2)

    run = solve(board, ctl, "--max-iterations", "3", code=0)

    first, second = run["steps"]
    problem_key = f"solve/{run['run_id']}/problem"
    before = seen(board, first["signal_id"])["payload"]["context"]
    assert [e["key"] for e in before["entries"]] == [problem_key]
    assert before["entries"][0]["value"] == PROBLEM and before["entries"][0]["entry_type"] == "query"
    after = seen(board, second["signal_id"])["payload"]
    keys = [e["key"] for e in after["context"]["entries"]]
    sig = first["signal_id"]
    assert keys == [f"{sig}/knowledge/2", f"{sig}/knowledge/1", problem_key]  # newest first
    found = after["context"]["entries"][0]
    assert (found["value"], found["entry_type"], found["author"], found["signal_id"]) == (
        "FOUND 1.2 ".ljust(12, "x"),
        "finding",
        "finder",
        sig,
    )
    assert "entries_left_out" not in after["context"]
    assert "What the run knows so far is in this signal's context, `entries`" in after["prompt"]


def test_the_controller_decides_only_once_the_last_steps_knowledge_has_landed(any_board):
    board = any_board
    # 120 findings a step, each landing as an entry of its own after the completion's commit: long enough
    # that a controller asked at the completion would count some of them missing
    ctl = setup(board, posts=2, items=120, pad=150)

    run = solve(board, ctl, "--max-iterations", "3", code=0)

    assert [a["findings"] for a in asked(ctl)] == [0, 120, 240]  # each message counted every finding
    landed_before_each_decision(log(board), run)
    # and the second step's document held as many of the first step's findings as 16 KiB do, newest first
    context = seen(board, run["steps"][1]["signal_id"])["payload"]["context"]
    shown = context["entries"]
    assert len(json.dumps(shown, ensure_ascii=False, separators=(",", ":")).encode()) <= 16 * 1024
    assert shown[0]["key"] == f"{run['steps'][0]['signal_id']}/knowledge/120"
    assert context["entries_left_out"] == 121 - len(shown) and context["entries_left_out"] > 0


def test_at_the_limit_the_controller_gives_its_best_answer_once_recorded_as_such_and_exit_5(any_board):
    board = any_board
    ctl = setup(board, posts=99, items=2)

    run = solve(board, ctl, "--max-iterations", "2", code=5)

    assert [a["at_limit"] for a in asked(ctl)] == [False, False, True]  # asked once more, at the limit
    assert asked(ctl)[-1]["findings"] == 4  # after the last step's findings landed
    assert (run["state"], run["iterations"], run["synthesis"], run["synthesized"]) == (
        "stopped",
        2,
        True,
        True,
    )
    best = "best so far: FOUND 1.1, FOUND 1.2, FOUND 2.1, FOUND 2.2"
    key = f"solve/{run['run_id']}/answer"
    assert (run["answer"], run["answer_key"]) == (best, key)
    assert run["reason"] == (
        "--max-iterations 2 reached without an answer; the controller's best answer from what is known is the "
        f"entry {key}"
    )
    assert f"the controller's best answer from what is known: {key}" in run["stderr"]
    entry = board.entries()[key]
    assert (entry["value"], entry["entry_type"], entry["author"], entry["label"]) == (
        best,
        "final",
        "rules",
        "synthesis",
    )
    assert entry["meta"]["synthesis"] is True and entry["meta"]["solve_run"] == run["run_id"]

    events = log(board)
    kinds = [e["event_type"] for e in events if e["stream_id"] == f"{RUN_BOARD}\x1e{run['run_id']}"]
    assert kinds[-3:] == ["SolveStepEnded", "SolveSynthesized", "SolveStopped"]
    landed_before_each_decision(events, run)
    shown = board.cli("solve", "--status", run["run_id"], "--blackboard", RUN_BOARD).expect(0).stdout
    assert (
        f"best answer at the iteration limit ({key}):\n{best}" in shown
        and "stopped: --max-iterations 2" in shown
    )


def test_no_synthesis_stops_at_the_limit_without_asking_again(any_board):
    board = any_board
    ctl = setup(board, posts=99, items=1)

    run = solve(board, ctl, "--max-iterations", "2", "--no-synthesis", code=5)

    assert [a["at_limit"] for a in asked(ctl)] == [False, False]
    assert (run["state"], run["answer"], run["synthesis"], run["synthesized"]) == (
        "stopped",
        None,
        False,
        False,
    )
    assert run["reason"] == "--max-iterations 2 reached without an answer"
    assert f"solve/{run['run_id']}/answer" not in board.entries()
    assert "SolveSynthesized" not in {e["event_type"] for e in log(board)}
    refused = board.cli(
        "solve", "--resume", run["run_id"], "--blackboard", RUN_BOARD, "--no-synthesis"
    ).expect(2)
    assert refused.stderr.startswith("blackboard: --no-synthesis: goes with a new run")


def test_the_python_api_gives_the_best_answer_in_the_errors_run_and_takes_synthesis_false(
    tmp_path, monkeypatch
):
    from blackboard import Blackboard, IterationsSpent, models

    board = Board(
        RunnerCli(f"sqlite:///{tmp_path / 'board.db'}", tmp_path / "agents", tmp_path),
        tmp_path / "agents",
        tmp_path,
    )
    board.agents.mkdir()
    ctl = setup(board, posts=99, items=1)
    monkeypatch.chdir(tmp_path)
    with Blackboard(board.cli.db_url, agents_dir=board.agents) as bb:
        with pytest.raises(
            IterationsSpent, match="best answer from what is known is the entry solve/"
        ) as spent:
            bb.solve(
                PROBLEM, blackboard_id=RUN_BOARD, controller=str(ctl), max_iterations=1, start_workers=True
            )
        run = spent.value.run
        assert isinstance(run, models.SolveRun) and run.synthesized and run.answer == "best so far: FOUND 1.1"
        assert bb.solve_status(run.run_id, blackboard_id=RUN_BOARD) == run

        with pytest.raises(IterationsSpent) as plain:
            bb.solve(
                PROBLEM,
                blackboard_id=RUN_BOARD,
                controller=str(ctl),
                max_iterations=1,
                start_workers=True,
                synthesis=False,
            )
        assert (plain.value.run.answer, plain.value.run.synthesis) == (None, False)
    assert [a["at_limit"] for a in asked(ctl)] == [False, True, False]
