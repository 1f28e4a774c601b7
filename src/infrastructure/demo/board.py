"""`make demo`: a PS posts work; one worker process per agent claims what it fits and runs it.

Every step is a real `blackboard` process on the embedded SQLite default, `.blackboard/blackboard.db`: the
database every command reads when nothing names another, so the README's tour, run next from the same
folder, looks at the demo's board. The demo adds a board of its own (`ps-demo`; `ps-demo-2` and on when an
earlier run holds that one) and deletes nothing: other boards in that database are left as they are, and
its workers claim only on the demo's board. The story goes on with the workers' logs and a timeline, then
the knowledge half (findings landed as entries, read by key, a conflict on one key and its resolution),
and ends with the event log, a rebuild that matches the live read model, and the board exported to a file.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[3]
WORK = Path(".blackboard")
DB = WORK / "blackboard.db"  # the default database (settings: sqlite:///.blackboard/blackboard.db)
BLACKBOARD = str(Path(sys.executable).parent / "blackboard")
AGENTS = ("ps-researcher", "ps-analyst", "ps-reviewer", "ps-architect")
ENV = {
    **os.environ,
    "BLACKBOARD_DB": f"sqlite:///{DB}",
    "BLACKBOARD_AGENTS_DIR": str(ROOT / "agents"),
    "BLACKBOARD_ARTIFACTS_DIR": str((WORK / "artifacts").resolve()),
    "BLACKBOARD_JSON": "",
    "BLACKBOARD_DEMO_PACE": "1.5",  # each example handler takes 1.5 s, as real work would take a while
}


def say(text: str = "") -> None:
    print(text, flush=True)


def cli(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([BLACKBOARD, *args], env=ENV, capture_output=True, text=True, timeout=60)
    if check and done.returncode != 0:
        raise SystemExit(
            f"demo: `blackboard {' '.join(args)}` failed ({done.returncode}): {done.stderr.strip()}"
        )
    return done


def data(*args: str) -> Any:
    return json.loads(cli("--json", *args).stdout)


def shown(text: str) -> str:
    return "\n".join("   | " + line for line in text.rstrip().splitlines())


def fresh_board() -> str:
    """`ps-demo`, or the first of `ps-demo-2`, `ps-demo-3`, ... that the database does not hold yet (a
    board the store does not hold: `signals --blackboard` exits 4)."""
    for n in range(1, 10_000):
        board = "ps-demo" if n == 1 else f"ps-demo-{n}"
        held = cli("signals", "--blackboard", board, "--limit", "1", check=False)
        if held.returncode == 4:
            return board
        if held.returncode != 0:
            raise SystemExit(f"demo: could not read {DB}: {held.stderr.strip()}")
    raise SystemExit(f"demo: {DB} holds every board from ps-demo to ps-demo-9999")


def start_workers(board: str, agents: tuple[str, ...] = AGENTS) -> dict[str, subprocess.Popen[str]]:
    """One `blackboard worker` process per agent (the example agents by default), on `board` only, each
    logging to its own file."""
    logs = WORK / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    workers = {}
    for agent in agents:
        log = (logs / f"{agent}.log").open("w")
        # ps-analyst (0.85) gives ps-researcher (0.95) a head start of (0.95 - 0.85) x 0.5 s = 50 ms
        workers[agent] = subprocess.Popen(
            [BLACKBOARD, "worker", "--agent", agent, "--head-start", "0.5", "--board", board],
            env=ENV,
            stdout=subprocess.DEVNULL,
            stderr=log,
            text=True,
        )
    deadline = time.monotonic() + 30
    while not all("started" in (logs / f"{a}.log").read_text() for a in agents):
        if time.monotonic() > deadline:
            raise SystemExit("demo: the workers did not start within 30 s")
        time.sleep(0.1)
    return workers


def stop_workers(workers: dict[str, subprocess.Popen[str]]) -> None:
    for process in workers.values():
        process.send_signal(signal.SIGTERM)
    for process in workers.values():
        process.wait(timeout=60)


def timeline(signals: list[dict[str, Any]], start: float) -> str:
    """Who claimed what, when (seconds since the first post), how long it took, and the artifact."""

    def at(stamp: str | None) -> float | None:
        return datetime.fromisoformat(stamp).timestamp() - start if stamp else None

    lines = [f"{'signal':<13} {'type':<9} {'posted':>7} {'claimed':>8} {'by':<14} {'took':>6}  artifact"]
    for s in signals:
        posted, claimed, ended = at(s["created_at"]), at(s["claimed_at"]), at(s["completed_at"])
        took = f"{ended - claimed:5.2f}s" if claimed is not None and ended is not None else "    -"
        artifact = (s.get("result") or {}).get("artifact_path") or "-"
        claimed_text = f"{claimed:7.2f}s" if claimed is not None else "      -"
        lines.append(
            f"{s['signal_id']:<13} {s['signal_type']:<9} {posted:6.2f}s {claimed_text} "
            f"{s['claimed_by'] or '-':<14} {took}  {os.path.relpath(artifact) if artifact != '-' else '-'}"
        )
    return "\n".join(lines)


def main() -> None:
    say(f"A blackboard on the embedded default: the SQLite file {DB}, created and migrated on first use.")
    say(shown(cli("db", "upgrade").stdout))
    board = fresh_board()
    export = WORK / f"{board}.json"
    say(f"   The demo's board: {board} (whatever else the file holds is left as it is).")
    say(f"\n1. The agents, declared by Markdown files in {os.path.relpath(ROOT / 'agents')}/:")
    say(shown(cli("agents").stdout))

    say("\n2. One worker process per agent starts and waits for work it fits (logs in .blackboard/logs/).")
    workers = start_workers(board)
    try:
        say("\n3. The PS skill posts RESEARCH, ANALYSIS, and a REVIEW that comes after the research.")
        start = time.time()
        research = data(
            "post",
            "--type",
            "RESEARCH",
            "--blackboard",
            board,
            "--topic",
            "event sourcing for agent coordination",
            "--key",
            f"{board}/e-1",
            "--prompt",
            "What must an append-only log guarantee? The log must keep every fact.",
        )["signal_id"]
        analysis = data(
            "post",
            "--type",
            "ANALYSIS",
            "--blackboard",
            board,
            "--topic",
            "cost of replaying a board",
            "--prompt",
            "Replay must stay fast. Why?",
        )["signal_id"]
        review = data(
            "post",
            "--type",
            "REVIEW",
            "--blackboard",
            board,
            "--topic",
            "review the research",
            "--after",
            research,
            "--context",
            json.dumps({"criteria": ["log", "facts"]}),
        )["signal_id"]
        say(f"   {research} RESEARCH, {analysis} ANALYSIS, {review} REVIEW (after {research})")
        say(f"\n4. Who fits the research? blackboard match {research}")
        say(shown(cli("match", research).stdout))

        say(f"\n5. The PS waits for the review: blackboard wait {review}")
        waited = cli("wait", review, "--timeout", "60", check=False)
        say(f"   ... and unblocks (exit {waited.returncode}):")
        say(shown(waited.stdout))
    finally:
        stop_workers(workers)

    say("\n6. The workers' own words (merged by time):")
    logged = sorted(
        line
        for agent in AGENTS
        for line in (WORK / "logs" / f"{agent}.log").read_text().splitlines()
        if " claimed " in line or " completed " in line or " went to " in line or " failed " in line
    )
    say(shown("\n".join(logged)))

    say("\n7. The timeline, from the board (seconds since the first post):")
    before = data("signals", "--blackboard", board)
    say(shown(timeline(before, start)))
    by_id = {s["signal_id"]: s for s in before}
    released = datetime.fromisoformat(by_id[review]["claimed_at"]) - datetime.fromisoformat(
        by_id[research]["completed_at"]
    )
    say(
        f"   The review waited for the research and was claimed {released.total_seconds() * 1000:.0f} ms after it "
        "completed, with the research's result in its input."
    )

    say("\n8. What the agents found landed on the board as entries, one key per knowledge item:")
    entries = data("entries", "--blackboard", board)
    say(shown(cli("entries", "--blackboard", board).stdout))
    finding = next(e["key"] for e in entries if e["signal_id"] == research)
    say(f"   The reviewer reads the research's first finding by its key: blackboard read {finding}")
    say(shown(cli("read", finding, "--blackboard", board).stdout))

    resolved = disagree(board)

    say("\n10. The event log: every change is a fact, in order, with its global position.")
    say(shown(cli("events", "--blackboard", board).stdout))
    entries_before = data("entries", "--blackboard", board)
    say(shown(cli("projection", "rebuild").stdout))
    same = (
        data("signals", "--blackboard", board) == before
        and data("entries", "--blackboard", board) == entries_before
    )
    say(
        "   The rebuilt read model (signals and entries) is "
        f"{'identical to' if same else 'DIFFERENT from'} the live one."
    )

    say(
        f"\n11. The whole board, signals and entries, to one file: blackboard export {board} --output {export}"
    )
    exported = cli("export", board, "--output", str(export))
    say(shown(exported.stdout))
    say(f"   `blackboard --db sqlite:///other.db import {export}` recreates it in another store.")
    from blackboard.infrastructure.demo.flow import BOARD as DOCS
    from blackboard.infrastructure.demo.flow import docbot

    phased = docbot(cli, data, say, shown, lambda agents: start_workers(DOCS, agents), stop_workers, 12)
    say(
        f"\nThe boards stay in {DB}, the database every command reads from this folder: the README's tour goes"
        f" on from here (`blackboard entries --blackboard {board}`, `blackboard ui`)."
    )
    if not same or waited.returncode != 0 or not resolved or not phased:
        raise SystemExit(1)


def disagree(board: str) -> bool:
    """Two agents write one key with different values: the second is kept as a candidate (exit 3)
    until someone resolves the conflict."""
    key = "review/verdict"
    say(f"\n9. Two agents disagree on one key, {key}:")
    first = cli(
        "write",
        key,
        "--blackboard",
        board,
        "--author",
        "ps-reviewer",
        "--type",
        "decision",
        "--value",
        '"accept: the log keeps every fact"',
    )
    say(f"   ps-reviewer writes it (exit {first.returncode}); ps-analyst writes another value:")
    second = cli(
        "write",
        key,
        "--blackboard",
        board,
        "--author",
        "ps-analyst",
        "--type",
        "decision",
        "--value",
        '"revise: replay cost is unmeasured"',
        check=False,
    )
    say(f"   ... exit {second.returncode}: {second.stderr.strip().removeprefix('blackboard: ')}")
    say(shown(second.stdout))
    say(f"   ps-architect resolves it: blackboard resolve {key} --pick 2 --rationale ...")
    done = cli(
        "resolve",
        key,
        "--blackboard",
        board,
        "--author",
        "ps-architect",
        "--pick",
        "2",
        "--rationale",
        "measure replay before accepting",
    )
    say(shown(done.stdout))
    say("   Its history keeps both values, and the resolution:")
    say(shown(cli("read", key, "--blackboard", board, "--history").stdout))
    return second.returncode == 3 and data("read", key, "--blackboard", board)["conflict"] is None


if __name__ == "__main__":
    main()
