"""(l) The former `blackboard --json events --all`, kept for the comparison: every event of the log read
into one list, then rendered and dumped at once. `python -m bench.events_former URL` prints it."""

from __future__ import annotations

import json
import sys

from bench.common import bench_container
from blackboard.infrastructure.cli import render


def main(url: str) -> None:
    store = bench_container(url).event_store()
    found, position = [], 0
    while page := store.read_all(after=position, limit=1000):
        found += page
        position = page[-1].position
    print(json.dumps(render.events(found).data, indent=2))


if __name__ == "__main__":
    main(sys.argv[1])
