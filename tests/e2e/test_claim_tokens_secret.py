"""A claim's token is its claim's proof, a secret of that claim alone (docs/permissions.md, "A run is its
agent"): a real `blackboard worker` shows everyone who it is (`status --json`: its worker id), and nothing
`status` shows lets another process complete its claim or write under it; one run of a worker holds its own
claim's token and no other, so it cannot act as a sibling run of the same worker; and neither the worker's
log nor its keeper's ever holds a run's token. On SQLite and on PostgreSQL.
"""

from __future__ import annotations

import json
import signal as signals
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cli_server import blackboard_command
from tests.e2e.conftest import Cli, database_url
from tests.waiting import wait_until

AGENT = "ps-slow"
# A run that says who it is (its signal id and claim token, in a file named by its signal) and waits for the
# test's word (a file `go`) before it answers.
WAITS = """
import json, os, sys, time
folder = sys.argv[1]
me = os.environ["BLACKBOARD_SIGNAL_ID"]
with open(os.path.join(folder, me + ".run"), "w") as out:
    json.dump({"signal": me, "token": os.environ["BLACKBOARD_CLAIM_TOKEN"]}, out)
while not os.path.exists(os.path.join(folder, "go")):
    time.sleep(0.05)
print("done")
"""
# A run of a worker with two slots: once its sibling runs too, it tries to complete and to write for the
# sibling's signal with its own claim's token, as its own signal and passing itself off as the sibling's run
# (BLACKBOARD_SIGNAL_ID set to it), and writes what each try said; once the sibling has tried too (so neither
# claim ends before the other's tries), it answers for its own signal.
SIBLING = """
import glob, json, os, subprocess, sys, time
folder, blackboard = sys.argv[1], sys.argv[2]
me, token = os.environ["BLACKBOARD_SIGNAL_ID"], os.environ["BLACKBOARD_CLAIM_TOKEN"]
with open(os.path.join(folder, me + ".run"), "w") as out:
    json.dump({"signal": me, "token": token}, out)
while len(glob.glob(os.path.join(folder, "*.run"))) < 2:
    time.sleep(0.05)
(sibling,) = [os.path.basename(p)[: -len(".run")] for p in glob.glob(os.path.join(folder, "*.run"))
              if not p.endswith(me + ".run")]
agent, board = os.environ["BLACKBOARD_AGENT"], os.environ["BLACKBOARD_BOARD"]
write = ["write", "ok/" + me, "--blackboard", board, "--author", agent, "--value", "1"]
tries = {
    "complete": (["complete", sibling, "--agent", agent, "--token", token], {}),
    "complete as the sibling": (
        ["complete", sibling, "--agent", agent, "--token", token], {"BLACKBOARD_SIGNAL_ID": sibling}
    ),
    "fail as the sibling": (
        ["fail", sibling, "--agent", agent, "--token", token, "--error", "x"], {"BLACKBOARD_SIGNAL_ID": sibling}
    ),
    "write as the sibling": (
        [*write, "--signal", sibling, "--token", token], {"BLACKBOARD_SIGNAL_ID": sibling}
    ),
}
said = {}
for name, (args, env) in tries.items():
    done = subprocess.run([blackboard, *args], capture_output=True, text=True, env={**os.environ, **env})
    said[name] = [done.returncode, done.stderr.strip()]
with open(os.path.join(folder, me + ".said.tmp"), "w") as out:
    json.dump(said, out)
os.replace(os.path.join(folder, me + ".said.tmp"), os.path.join(folder, me + ".said"))
while len(glob.glob(os.path.join(folder, "*.said"))) < 2:  # the sibling's claim holds until it has tried too
    time.sleep(0.05)
print("done")
"""


def agent_file(script: Path, *args: str) -> str:
    command = " ".join([sys.executable, str(script), *args])
    return f"---\nname: {AGENT}\ncapabilities: {{RESEARCH: 0.95}}\ncommand: {command}\ntimeout: 120\n---\nSlow.\n"


@pytest.fixture(params=["sqlite", "postgresql"])
def board(request, make_cli, tmp_path_factory, tmp_path) -> tuple[Cli, Path]:
    """The CLI on its database, an agents folder of its own, and the folder its runs talk through."""
    url = database_url(request, tmp_path_factory, "tokens")
    runs = tmp_path / "runs"
    runs.mkdir()
    (tmp_path / "agents").mkdir()
    cli = make_cli(url, tmp_path, tmp_path / "agents")
    return cli, runs


def strings(document: Any) -> set[str]:
    """Every string in a JSON document, keys too."""
    if isinstance(document, str):
        return {document}
    if isinstance(document, dict):
        return {s for k, v in document.items() for s in strings(k) | strings(v)}
    if isinstance(document, list):
        return {s for item in document for s in strings(item)}
    return set()


def ran(runs: Path, signal_id: str) -> dict[str, str] | None:
    path = runs / f"{signal_id}.run"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # not written yet, or half written
        return None


def test_nothing_status_shows_of_a_worker_lets_anyone_complete_or_write_under_its_claim(board, tmp_path):
    cli, runs = board
    script = tmp_path / "waits.py"
    script.write_text(WAITS, encoding="utf-8")
    (cli.agents_dir / f"{AGENT}.md").write_text(agent_file(script, str(runs)), encoding="utf-8")
    work = cli.post("--write-key", "ok/*", ps="ps-1", entry="e-1", topic="slow work")["signal_id"]
    worker = cli.start("worker", "--agent", AGENT, "--once")
    run = wait_until(lambda: ran(runs, work), 60, "the run to start")

    def shown() -> dict[str, Any] | None:
        (overview,) = cli.ok("status", "--blackboard", "ps-1")
        workers = overview["workers"]
        return overview if workers and workers[0]["running"] == [work] else None

    overview = wait_until(shown, 60, "status to show the worker running the signal")
    (live,) = overview["workers"]
    assert live["worker_id"].startswith(f"{AGENT}/")  # who it is, for everyone to see
    seen = sorted(s for s in strings(overview) if s)
    assert live["worker_id"] in seen
    identity = {
        "BLACKBOARD_AGENT": AGENT,
        "BLACKBOARD_SIGNAL_ID": work,
        "BLACKBOARD_BOARD": "ps-1",
    }
    calls = {}
    for n, text in enumerate(seen):
        calls[f"complete {n}"] = (["complete", work, "--agent", AGENT, "--token", text], None)
        calls[f"write {n}"] = (
            ["write", f"ok/{n}", "--blackboard", "ps-1", "--author", AGENT, "--value", "1"],
            {**identity, "BLACKBOARD_CLAIM_TOKEN": text},
        )
    tried = {name: future.result() for name, future in cli.many(calls).items()}

    for n, text in enumerate(seen):
        refused = tried[f"complete {n}"]
        assert refused.returncode == 3, (text, refused)
        assert "under another claim token" in refused.stderr, refused.stderr
        refused = tried[f"write {n}"]
        assert refused.returncode == 3, (text, refused)
        assert f"agent {AGENT}'s run of {work} may not write" in refused.stderr, refused.stderr
    assert run["token"] not in json.dumps(overview)  # never the proof of its claim
    assert cli.ok("show", work)["status"] == "CLAIMED"  # still the run's
    assert cli.ok("entries", "--blackboard", "ps-1") == []  # nothing written

    (runs / "go").touch()
    stopped = cli.finish(worker).expect(0)

    done = cli.ok("show", work)
    assert (done["status"], done["claimed_by"]) == ("COMPLETED", AGENT)  # the run's own completion landed
    assert live["worker_id"] in stopped.stderr  # the worker says who it is
    assert run["token"] not in stopped.stderr  # never its runs' tokens (its keeper's lines included)


def test_a_run_cannot_complete_or_write_for_its_sibling_run_with_its_own_token(board, tmp_path):
    cli, runs = board
    script = tmp_path / "sibling.py"
    script.write_text(SIBLING, encoding="utf-8")
    (cli.agents_dir / f"{AGENT}.md").write_text(
        agent_file(script, str(runs), blackboard_command()), encoding="utf-8"
    )
    works = [
        cli.post("--write-key", "ok/*", ps="ps-1", entry=f"e-{n}", topic=f"work {n}")["signal_id"]
        for n in (1, 2)
    ]
    worker = cli.start("worker", "--agent", AGENT, "--concurrency", "2")

    def both_said() -> dict[str, dict[str, list[Any]]] | None:
        said = {}
        for work in works:
            try:
                said[work] = json.loads((runs / f"{work}.said").read_text(encoding="utf-8"))
            except (OSError, ValueError):
                return None
        return said

    said = wait_until(both_said, 90, "both runs to try their sibling's claim")
    wait_until(lambda: all(cli.ok("show", w)["status"] == "COMPLETED" for w in works), 60, "both completions")
    worker.send_signal(signals.SIGTERM)
    stopped = cli.finish(worker).expect(0)

    for work, tries in said.items():
        sibling = next(w for w in works if w != work)
        assert {name: code for name, (code, _) in tries.items()} == dict.fromkeys(tries, 3), tries
        assert "may not complete" in tries["complete"][1], tries  # a run ends only its own signal
        for name in ("complete as the sibling", "fail as the sibling", "write as the sibling"):
            assert f"run of {sibling}" in tries[name][1] and "held by another claim" in tries[name][1], tries
    tokens = {work: ran(runs, work)["token"] for work in works}
    assert len(set(tokens.values())) == 2  # a token of its own for each claim
    for work in works:
        done = cli.ok("show", work)
        assert (done["status"], done["claimed_by"]) == ("COMPLETED", AGENT)  # each by its own run
    assert not [
        e for e in cli.ok("entries", "--blackboard", "ps-1") if e["key"].startswith("ok/")
    ]  # none written
    for token in tokens.values():
        assert token not in stopped.stderr
