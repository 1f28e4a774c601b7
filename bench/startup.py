"""CLI start-up: what one `blackboard` call costs, beside `python -c "import sqlalchemy"` in the same run.

Every CLI call pays Python's start-up and SQLAlchemy's import; this measures what the rest costs, for
the commands a script or a test calls most: `show SIG` (text and --json), `post`, `status`, `--help`,
and a worker's start (the time until it logs "started"). The commands run in rounds, each command once
a round beside the anchor, so a change in the machine's load touches all of them alike. Figures: the
median wall time and the median CPU time (user + sys of the process, from wait4) of each, and each
one's ratio to the anchor's median. The target (issue 35): `show` at most 1.2x the anchor's CPU time, on the
one path every command reads a signal by (pydantic, the models, dependency-injector loaded whole); or, if
dependency-injector's import alone exceeds that, its profile. So the anchor plus dependency-injector's import
(and plus pydantic's) run in the same rounds: what the two packages the project keeps cost by themselves.

BENCH_STARTUP_BEFORE=DIR (a copy of an older tree's `src` and `migrations`, e.g. from `git archive`,
its bytecode compiled) adds each command as that tree runs it, in the same rounds: through this
interpreter and its packages, the editable install pointed at DIR, so only our code differs.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import table, temp_dir, verdict

TARGET = 1.2  # show's CPU time over the anchor's
ANCHOR = "python -c 'import sqlalchemy'"
WITH_INJECTOR = "import sqlalchemy + dependency-injector"
WITH_PYDANTIC = "import sqlalchemy + pydantic"
AGENT = """---
name: bench-idle
capabilities:
  - type: REVIEW
    score: 0.9
command: "true"
---
An agent for the worker's start: nothing is posted for it.
"""


def _timed(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + sys) of one run of `argv`, which must exit 0."""
    started = time.perf_counter()
    child = subprocess.Popen(
        argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    _, status, usage = os.wait4(child.pid, 0)
    took = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    errors = child.stderr.read() if child.stderr else ""
    if child.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed: {errors.strip()}")
    return took, usage.ru_utime + usage.ru_stime


def _worker_start(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Wall seconds until the worker logs "started", and its CPU seconds until it is stopped right then
    (SIGTERM: a clean stop, which adds a little)."""
    started = time.perf_counter()
    child = subprocess.Popen(
        argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    assert child.stderr is not None
    took = None
    for line in child.stderr:
        if " started " in line:
            took = time.perf_counter() - started
            break
    child.terminate()
    child.stderr.read()
    _, _, usage = os.wait4(child.pid, 0)
    child.returncode = 0
    if took is None:
        raise RuntimeError(f"{' '.join(argv)} never said it started")
    return took, usage.ru_utime + usage.ru_stime


# `blackboard` as an older tree runs it: the editable install's finder pointed at that tree
BEFORE = (
    "import sys\n"
    "finder = next(m for n, m in list(sys.modules.items()) if n.startswith('__editable___agent_blackboard'))\n"
    "finder.MAPPING.update({k: v.replace(sys.argv[1], sys.argv[2]) for k, v in finder.MAPPING.items()})\n"
    "del sys.argv[1:3]\n"
    "from blackboard.infrastructure.cli import main\n"
    "sys.exit(main())\n"
)


def run(repetitions: int, before: str | None = None) -> dict[str, Any]:
    blackboard = str(Path(sys.executable).parent / "blackboard")
    with temp_dir("startup") as where:
        (where / "agents").mkdir()
        (where / "agents" / "bench-idle.md").write_text(AGENT)
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("BLACKBOARD_")},
            "BLACKBOARD_DB": f"sqlite:///{where / 'b.db'}",
            "BLACKBOARD_AGENTS_DIR": str(where / "agents"),
        }
        post = [blackboard, "post", "--type", "RESEARCH", "--ps-id", "ps-bench", "--entry-id", "e-1"]
        posted = subprocess.run(
            [*post, "--topic", "t", "--json"],
            env=env,
            cwd=where,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        signal_id = json.loads(posted.stdout)["signal_id"]
        commands: dict[str, Any] = {
            ANCHOR: [sys.executable, "-c", "import sqlalchemy"],
            WITH_INJECTOR: [
                sys.executable,
                "-c",
                "import sqlalchemy, dependency_injector.containers, dependency_injector.wiring",
            ],
            WITH_PYDANTIC: [sys.executable, "-c", "import sqlalchemy; from pydantic import BaseModel"],
            "blackboard show SIG": [blackboard, "show", signal_id],
            "blackboard show SIG --json": [blackboard, "show", signal_id, "--json"],
            "blackboard post": [*post, "--topic", "bench", "-q"],
            "blackboard status": [blackboard, "status"],
            "blackboard --help": [blackboard, "--help"],
            "blackboard worker (to started)": [blackboard, "worker", "--agent", "bench-idle"],
        }
        if before:  # each command beside itself as the older tree runs it
            root = str(Path(__file__).resolve().parent.parent)
            older = [sys.executable, "-c", BEFORE, root, str(Path(before).resolve())]
            commands = {
                label: argv
                for name, argv in commands.items()
                for label, argv in (
                    [(name, argv)]
                    if not name.startswith("blackboard")
                    else [(name, argv), (f"{name} (before)", [*older, *argv[1:]])]
                )
            }
        for name, argv in commands.items():  # warm the file cache once each
            (_worker_start if "worker" in name else _timed)(argv, env, where)
        walls: dict[str, list[float]] = {name: [] for name in commands}
        cpus: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(repetitions):
            for name, argv in commands.items():
                wall, cpu = (_worker_start if "worker" in name else _timed)(argv, env, where)
                walls[name].append(wall)
                cpus[name].append(cpu)
    wall_ms = {name: statistics.median(v) * 1000 for name, v in walls.items()}
    cpu_ms = {name: statistics.median(v) * 1000 for name, v in cpus.items()}
    rows = [
        [
            name,
            round(wall_ms[name], 1),
            round(wall_ms[name] / wall_ms[ANCHOR], 2),
            round(cpu_ms[name], 1),
            round(cpu_ms[name] / cpu_ms[ANCHOR], 2),
            round(min(walls[name]) * 1000, 1),
        ]
        for name in commands
    ]
    ratio = wall_ms["blackboard show SIG"] / wall_ms[ANCHOR]
    cpu_ratio = cpu_ms["blackboard show SIG"] / cpu_ms[ANCHOR]
    injector_ratio = cpu_ms[WITH_INJECTOR] / cpu_ms[ANCHOR]
    print(
        table(
            f"CLI start-up (medians of {repetitions} rounds, each command once a round)",
            ["command", "wall ms", "x anchor", "CPU ms", "x anchor", "min wall ms"],
            rows
            + [
                [
                    f"show / anchor (target <= {TARGET} CPU)",
                    round(ratio, 2),
                    "",
                    round(cpu_ratio, 2),
                    "",
                    verdict(cpu_ratio <= TARGET),
                ],
                [
                    "dependency-injector's import alone, CPU x anchor",
                    "",
                    "",
                    round(injector_ratio, 2),
                    "",
                    "over the target" if injector_ratio > TARGET else "within",
                ],
            ],
        )
    )
    return {
        "show_ms": wall_ms["blackboard show SIG"],
        "import_sqlalchemy_ms": wall_ms[ANCHOR],
        "ratio": ratio,
        "cpu_ratio": cpu_ratio,
        "injector_cpu_ratio": injector_ratio,
        "ratio_of_minimums": min(walls["blackboard show SIG"]) / min(walls[ANCHOR]),
        "commands": {
            name: {
                "wall_ms": wall_ms[name],
                "cpu_ms": cpu_ms[name],
                "wall_ratio": wall_ms[name] / wall_ms[ANCHOR],
                "cpu_ratio": cpu_ms[name] / cpu_ms[ANCHOR],
            }
            for name in commands
        },
        "target": TARGET,
        "pass": cpu_ratio <= TARGET,
        "repetitions": repetitions,
    }


if __name__ == "__main__":
    run(int(os.environ.get("BENCH_STARTUP_RUNS", "15")), os.environ.get("BENCH_STARTUP_BEFORE"))
