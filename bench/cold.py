"""(c) One cold command, in the process that runs this module: what a new CLI process pays for board size.

`python -m bench.cold URL SIGNAL_ID`: after the imports, build the application through its container
(engine, schema check, service), claim the signal, and print the timings as one JSON line. Section (c)
runs it on a board of 10 signals and on one of 100,000, side by side, and times the whole process too.
"""

from __future__ import annotations

import json
import sys
import time

import blackboard.infrastructure.container  # noqa: F401 - imported before the clock starts, like the rest
from bench.common import AGENT, bench_container
from blackboard.application.commands import ClaimSignal


def main(url: str, signal_id: str) -> dict[str, float]:
    started = time.perf_counter()
    container = bench_container(url)
    service = container.service()  # the engine, the schema check, the service
    built = time.perf_counter()
    service.claim_signal(ClaimSignal(signal_id=signal_id, agent_id=AGENT.agent_id))
    claimed = time.perf_counter()
    container.engine().dispose()
    return {"build_s": built - started, "claim_s": claimed - built, "command_s": claimed - started}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2])), flush=True)
