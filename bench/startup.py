"""CLI start-up: the wall time of `blackboard show SIG` against `python -c "import sqlalchemy"`.

Every CLI call pays Python's start-up and SQLAlchemy's import; this measures what the rest costs.
The two commands run in alternation, so a change in the machine's load touches both alike.
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

TARGET = 1.5


def _wall(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=60)
    took = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed: {done.stderr.strip()}")
    return took


def run(repetitions: int) -> dict[str, Any]:
    blackboard = str(Path(sys.executable).parent / "blackboard")
    with temp_dir("startup") as where:
        env = {**os.environ, "BLACKBOARD_DB": f"sqlite:///{where / 'b.db'}", "BLACKBOARD_JSON": "1"}
        posted = subprocess.run(
            [
                blackboard,
                "post",
                "--type",
                "RESEARCH",
                "--ps-id",
                "ps-bench",
                "--entry-id",
                "e-1",
                "--topic",
                "t",
            ],
            env=env,
            cwd=where,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        signal_id = json.loads(posted.stdout)["signal_id"]
        show = [blackboard, "show", signal_id]
        baseline = [sys.executable, "-c", "import sqlalchemy"]
        for argv in (show, baseline):  # warm the file cache once each
            _wall(argv, env, where)
        shows, imports = [], []
        for _ in range(repetitions):
            shows.append(_wall(show, env, where))
            imports.append(_wall(baseline, env, where))
    show_ms, import_ms = statistics.median(shows) * 1000, statistics.median(imports) * 1000
    ratio = show_ms / import_ms
    print(
        table(
            "CLI start-up (median wall time, alternating runs)",
            ["command", "median ms", "min ms", "runs"],
            [
                ["blackboard show SIG", round(show_ms, 1), round(min(shows) * 1000, 1), repetitions],
                [
                    'python -c "import sqlalchemy"',
                    round(import_ms, 1),
                    round(min(imports) * 1000, 1),
                    repetitions,
                ],
                [
                    f"ratio (target <= {TARGET})",
                    round(ratio, 2),
                    round(min(shows) / min(imports), 2),
                    verdict(ratio <= TARGET),
                ],
            ],
        )
    )
    return {
        "show_ms": show_ms,
        "import_sqlalchemy_ms": import_ms,
        "ratio": ratio,
        "ratio_of_minimums": min(shows) / min(imports),
        "target": TARGET,
        "pass": ratio <= TARGET,
        "repetitions": repetitions,
    }


if __name__ == "__main__":
    run(int(os.environ.get("BENCH_STARTUP_RUNS", "15")))
