"""(h) A run's processes after its worker's SIGKILL: the time until the last of them is gone.

Two kinds of run, each starting processes that stay until they are stopped, one of which leaves the run's process
group and its parent (setsid and a double fork): a command handler, and a claude-code run (the pinned Claude Code
against the local stand-in, its Bash tool starting them; Claude Code and its board server count too). The worker
is a real `blackboard worker` process on a SQLite board; once every process of the run is up it gets SIGKILL, and
/proc is read every few milliseconds until none of them is left (a zombie counts as gone), up to LIMIT seconds:
"still running after LIMIT s". The goal (issue 32): under 5 s on Linux.

BENCH_HELD_BEFORE=DIR (a `git archive` of an older tree's `src` and `migrations`, as for section s) runs the same
with that tree's worker in the same run, side by side (the build before kept no run: still running).
"""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.common import table, temp_dir
from bench.startup import BEFORE
from blackboard.infrastructure.keeper.trees import processes
from tests.runners.standins import call, say, slow, stand_in

TARGET_S = 5.0
LIMIT_S = 15.0  # seconds after the SIGKILL: what is left then is "still running"
ROOT = Path(__file__).resolve().parent.parent
CLAUDE = ROOT / ".tools" / "claude-code" / "node_modules" / ".bin" / "claude"
SPAWN = """\
sleep 3600 >/dev/null 2>&1 &
echo $! >> "$1"
( setsid sh -c 'echo $$ >> "$0"; sleep 3600 >/dev/null 2>&1 & echo $! >> "$0"; wait' "$1" >/dev/null 2>&1 & )
while [ "$(wc -l < "$1")" -lt 3 ]; do sleep 0.05; done
"""


def run(repetitions: int, claude_repetitions: int, before: str | None = None) -> dict[str, Any]:
    builds = {"now": None} if not before else {"now": None, "before": str(Path(before).resolve())}
    results: dict[str, Any] = {"limit_s": LIMIT_S, "target_s": TARGET_S}
    for build, tree in builds.items():
        results[build] = {"command handler": [_once(_handler, tree) for _ in range(repetitions)]}
        if os.access(CLAUDE, os.X_OK):
            results[build]["claude-code run"] = [_once(_claude, tree) for _ in range(claude_repetitions)]
        else:
            results[build]["claude-code run"] = f"skipped: no Claude Code at {CLAUDE} (make tools)"
    results["pass"] = all(
        isinstance(figures, list) and all(s is not None and s < TARGET_S for s in figures)
        for figures in results["now"].values()
    )
    return results


Kind = Callable[[Path, list[str], dict[str, str], list[int]], float | None]


def _once(kind: Kind, tree: str | None) -> float | None:
    """One run of that kind: seconds from the worker's SIGKILL to its run's last process gone; None: still
    running after LIMIT_S."""
    with temp_dir("held") as where:
        agents = where / "agents"
        agents.mkdir()
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("BLACKBOARD_")},
            "BLACKBOARD_DB": f"sqlite:///{where / 'b.db'}",
            "BLACKBOARD_AGENTS_DIR": str(agents),
            "BLACKBOARD_POST_TIMEOUT": "3600",
        }
        blackboard = [str(Path(sys.executable).parent / "blackboard")]
        if tree is not None:  # the older tree's code through this interpreter and its packages
            blackboard = [sys.executable, "-c", BEFORE, str(ROOT), tree]
        run_pids: list[int] = []
        try:
            return kind(where, blackboard, env, run_pids)
        finally:
            for pid in run_pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass


def _handler(where: Path, blackboard: list[str], env: dict[str, str], run_pids: list[int]) -> float | None:
    (where / "spawn.sh").write_text(SPAWN + 'echo $$ >> "$1"\nwait\n')
    (where / "agents" / "held.md").write_text(
        f"---\nname: held\ncommand: sh {where / 'spawn.sh'} {where / 'pids'}\n---\nRun.\n"
    )
    _post(blackboard, env, where, "held")
    with open(where / "worker.log", "wb") as log:
        worker = subprocess.Popen([*blackboard, "worker", "--agent", "held"], env=env, cwd=where, stderr=log)
        try:
            pids = _until(lambda: _all_up(where / "pids", 4), 60)
            run_pids.extend(pids)
            return _kill_and_time(worker, pids)
        finally:
            worker.kill()
            worker.wait()


def _claude(where: Path, blackboard: list[str], env: dict[str, str], run_pids: list[int]) -> float | None:
    (where / "spawn.sh").write_text(SPAWN)
    (where / "home").mkdir()
    (where / "agents" / "coder.md").write_text(
        "---\nname: coder\ndescription: Codes.\ntools: Bash\n---\nCode.\n"
    )
    signal_id = _post(blackboard, env, where, "coder")
    command = f"sh {where / 'spawn.sh'} {where / 'pids'}"
    script = [call("Bash", {"command": command, "description": "start servers"}), slow(60, say("never"))]
    with stand_in(script) as api, open(where / "worker.log", "wb") as log:
        env = {
            **env,
            "BLACKBOARD_CLAUDE": str(CLAUDE),
            "ANTHROPIC_BASE_URL": api.url,
            "ANTHROPIC_API_KEY": "sk-ant-dummy",
            "HOME": str(where / "home"),
            "DISABLE_TELEMETRY": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
        }
        worker = subprocess.Popen([*blackboard, "worker", "--agent", "coder"], env=env, cwd=where, stderr=log)
        try:
            _until(
                lambda: len(api.model_calls) >= 2, 120
            )  # the tool call done: Claude Code awaits its answer
            tools = _until(lambda: _all_up(where / "pids", 3), 60)
            run_pids.extend(tools)
            claude = _until(lambda: _claude_run(worker.pid, signal_id), 60)
            run_pids.extend(claude)
            return _kill_and_time(worker, [*claude, *tools])
        finally:
            worker.kill()
            worker.wait()


def _kill_and_time(worker: subprocess.Popen[bytes], pids: list[int]) -> float | None:
    os.kill(worker.pid, signal.SIGKILL)
    killed = time.perf_counter()
    while time.perf_counter() - killed < LIMIT_S:
        if not _alive(pids):
            return time.perf_counter() - killed
        time.sleep(0.005)
    return None


def _post(blackboard: list[str], env: dict[str, str], where: Path, capability: str) -> str:
    argv = [*blackboard, "post", "--capability", capability, "--type", "RESEARCH", "--ps-id", "ps-h"]
    done = subprocess.run(
        [*argv, "--entry-id", "e-1", "--topic", "t", "-q"],
        env=env,
        cwd=where,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.strip()


def _alive(pids: list[int]) -> list[int]:
    table = processes()
    return [pid for pid in pids if pid in table and not table[pid].zombie]


def _all_up(path: Path, count: int) -> list[int] | None:
    pids = [int(p) for p in path.read_text().split()] if path.exists() else []
    return pids if len(pids) == count and len(_alive(pids)) == count else None


def _claude_run(worker: int, signal_id: str) -> list[int] | None:
    """Claude Code (the worker's child) and the board server it started, once both are up."""
    table = processes()
    claude = [p.pid for p in table.values() if p.parent == worker and p.group == p.pid and not p.zombie]
    server = [pid for pid in table if f"--signal {signal_id}" in _cmdline(pid) and pid not in claude]
    return [claude[0], server[0]] if claude and server else None


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _until(condition: Callable[[], Any], seconds: float) -> Any:
    deadline = time.monotonic() + seconds
    while not (found := condition()):
        if time.monotonic() > deadline:
            raise RuntimeError(f"(h): the run did not start within {seconds:g}s")
        time.sleep(0.02)
    return found


def shown(seconds: float | None) -> str:
    return f"still running after {LIMIT_S:g} s" if seconds is None else f"{seconds:.3f} s"


def print_report(held: dict[str, Any], say_: Callable[[str], None]) -> dict[str, Any]:
    builds = [b for b in ("now", "before") if b in held]
    rows = []
    for kind in ("command handler", "claude-code run"):
        row: list[Any] = [kind]
        for build in builds:
            figures = held[build][kind]
            if isinstance(figures, str):
                row.append(figures)
                continue
            done = [s for s in figures if s is not None]
            median = shown(statistics.median(done)) if len(done) == len(figures) else shown(None)
            row.append(f"{median} (max {shown(max(done)) if done else '-'}, {len(figures)} runs)")
        rows.append(row)
    say_(
        table(
            "(h) a worker's SIGKILL to its run's last process gone (an escaped descendant among them)",
            ["run", *[f"{b}: median" for b in builds]],
            rows,
        )
    )
    figures = [s for f in held["now"].values() if isinstance(f, list) for s in f]
    worst = max((s for s in figures if s is not None), default=None) if None not in figures else None
    return {
        "name": "(h) worker SIGKILL to its run's last process gone, worst of the runs, s",
        "measured": round(worst, 3) if worst is not None else shown(None),
        "target": f"< {TARGET_S:g}",
        "verdict": "PASS" if held["pass"] else "MISS",
    }
