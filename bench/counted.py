"""`python -m bench.counted OUT blackboard-args...`: the `blackboard` CLI with every SQL statement counted.

Section (x) runs an idle worker through it to count what the worker asks the database while it waits.
A listener on SQLAlchemy's Engine class (so every engine the process opens) counts statements by kind;
a daemon thread writes the counts to OUT (JSON, replaced atomically) every COUNT_EVERY seconds, so the
benchmark reads them at the start and the end of a window without stopping the worker. PostgreSQL's
LISTEN connection is raw psycopg and waits without a statement: it is not counted, as it costs none.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections import Counter
from pathlib import Path

COUNT_EVERY = 0.05  # seconds between two writes of the counts

# what a statement is, by a piece of its text (first match wins); anything else is "other"
KINDS = (
    ("min(blackboard_signals.not_before)", "next due (not-before)"),
    ("max(events.position)", "log end"),
    ("blackboard_projection", "log end"),
    ("from blackboard_signals", "candidates or rows"),
)


def kind(statement: str) -> str:
    low = " ".join(statement.lower().split())
    for piece, name in KINDS:
        if piece in low:
            return name
    return "other: " + " ".join(low.split()[:3])[:40]


def main() -> None:
    out, args = Path(sys.argv[1]), sys.argv[2:]
    from sqlalchemy import Engine, event

    counts: Counter[str] = Counter()
    lock = threading.Lock()

    @event.listens_for(Engine, "before_cursor_execute")
    def _count(_conn, _cursor, statement, _params, _context, _many):  # type: ignore[no-untyped-def]
        with lock:
            counts[kind(statement)] += 1

    def dump() -> None:
        while True:
            with lock:
                snapshot = {"at": time.monotonic(), "counts": dict(counts)}
            tmp = out.with_suffix(".tmp")
            tmp.write_text(json.dumps(snapshot))
            os.replace(tmp, out)
            time.sleep(COUNT_EVERY)

    threading.Thread(target=dump, name="bench-counts", daemon=True).start()
    from blackboard.infrastructure.cli import main as cli

    sys.exit(cli(args))


if __name__ == "__main__":
    main()
