"""Gates that call a person (docs/webhooks.md): what the webhooks cost the processes that send them.

`python -m bench.webhooks` (BENCH_WEBHOOK_GATES, 1,000 by default; BENCH_WEBHOOK_POSTS, 10), on SQLite and,
when BENCH_PG_URL's server answers, PostgreSQL (a database of its own, dropped after), against a receiver on
127.0.0.1 (http.server in a thread, answering 200):

- *an idle round*: what every poke and every 10 s of a worker or `ui` cost once nothing is owed or due (the
  open gates read, the ended ones looked for, nothing taken), with 10 and with BENCH_WEBHOOK_GATES open gates
  already announced; median of 20;
- *announcing*: one round finding BENCH_WEBHOOK_GATES open gates no URL was told of: making the deliveries,
  taking them and POSTing each (ms a gate);
- *a `post --gate` process*: wall time of `blackboard post --gate` with webhooks off and on (on: the command
  waits for its round after printing), median of BENCH_WEBHOOK_POSTS each.

Writes bench-results/webhooks.json.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from bench.common import machine, say, table, temp_dir, wired

SECRET = "bench-secret"
BLACKBOARD = str(Path(sys.executable).parent / "blackboard")


class _Answer(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", "0")))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def receiver() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Answer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/gates"
    finally:
        server.shutdown()
        server.server_close()


def _gates(container: Any, board: str, count: int) -> None:
    from blackboard.application.commands import PostSignal

    service = container.service()
    for i in range(count):
        service.post_signal(
            PostSignal(
                signal_type="DECISION", ps_id=board, entry_id=f"e-{i + 1}", topic=f"decide {i}", gate=True
            )
        )


def _rounds(url: str, hook: str, gates: int) -> dict[str, Any]:
    from blackboard.infrastructure.persistence.webhooks import SqlWebhookOutbox
    from blackboard.infrastructure.webhooks.courier import Courier, Setup

    found: dict[str, Any] = {}
    with wired(url, synchronous="NORMAL") as container:
        setup = Setup((hook,), SECRET, "http://127.0.0.1:8765", 2.0, 10.0, 3600.0)
        courier = Courier(SqlWebhookOutbox(container.engine()), setup, container.clock())
        for label, count in (("10 gates", 10), (f"{gates:,} gates", gates - 10)):
            _gates(container, "bench-hooks", count)
            started = time.perf_counter()
            done = courier.deliver()
            spent = time.perf_counter() - started
            found[f"announcing {count:,} gates"] = {
                "ms": round(spent * 1000, 1),
                "ms_a_gate": round(spent * 1000 / max(done.made, 1), 2),
                "made": done.made,
                "received": done.received,
            }
            idle = []
            for _ in range(20):
                started = time.perf_counter()
                courier.deliver()
                idle.append(time.perf_counter() - started)
            found[f"an idle round, {label} open"] = {"ms": round(statistics.median(idle) * 1000, 2)}
    return found


def _posts(url: str, hook: str, cwd: Path, posts: int) -> dict[str, Any]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("BLACKBOARD_")}
    base.update(BLACKBOARD_DB=url, BLACKBOARD_SQLITE_SYNCHRONOUS="NORMAL")
    on = {**base, "BLACKBOARD_WEBHOOKS": hook, "BLACKBOARD_WEBHOOK_SECRET": SECRET}
    argv = [BLACKBOARD, "post", "-q", "--gate", "--type", "DECISION", "--ps-id", "bench-post", "--topic", "t"]
    subprocess.run(argv, env=base, cwd=cwd, check=True, capture_output=True)  # the schema, made once
    times: dict[str, list[float]] = {"off": [], "on": []}
    for _ in range(posts):
        for mode, env in (("off", base), ("on", on)):
            started = time.perf_counter()
            subprocess.run(argv, env=env, cwd=cwd, check=True, capture_output=True)
            times[mode].append(time.perf_counter() - started)
    off, on_ = statistics.median(times["off"]), statistics.median(times["on"])
    return {
        "post_off_ms": round(off * 1000),
        "post_on_ms": round(on_ * 1000),
        "on_over_off": round(on_ / off, 2),
    }


def run(gates: int, posts: int, pg_url: str | None) -> dict[str, Any]:
    report: dict[str, Any] = {"gates": gates, "posts": posts, "backends": {}}
    with temp_dir("webhooks") as where, receiver() as hook:
        backends = {"sqlite": lambda label: f"sqlite:///{where / label}.db"}
        dbs = None
        if pg_url:
            try:
                from bench.postgres.databases import Databases

                dbs = Databases(pg_url)
                backends["postgresql"] = lambda label: dbs.sqlalchemy_url(dbs.create(f"hooks_{label}"))
            except Exception as exc:  # noqa: BLE001 - no server: say so, keep SQLite's figures
                report["backends"]["postgresql"] = {"skipped": f"{type(exc).__name__}: {exc}"}
        try:
            for name, url_for in backends.items():
                try:
                    found = _rounds(url_for("rounds"), hook, gates)
                    found.update(_posts(url_for("posts"), hook, where, posts))
                    report["backends"][name] = found
                except Exception as exc:  # noqa: BLE001 - one backend failing keeps the other's figures
                    report["backends"][name] = {"skipped": f"{type(exc).__name__}: {exc}"}
        finally:
            if dbs is not None:
                dbs.close()
    return report


def main() -> None:
    gates = int(os.environ.get("BENCH_WEBHOOK_GATES", "1000"))
    posts = int(os.environ.get("BENCH_WEBHOOK_POSTS", "10"))
    pg_url = os.environ.get("BENCH_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
    result = run(gates, posts, pg_url)
    result["machine"] = machine()
    result["load_average"] = os.getloadavg()
    rows = []
    for backend, found in result["backends"].items():
        if "skipped" in found:
            rows.append([backend, "skipped", found["skipped"][:60], "", ""])
            continue
        for what, figures in found.items():
            if isinstance(figures, dict):
                rows.append([backend, what, figures["ms"], figures.get("ms_a_gate", ""), ""])
        rows.append([backend, "`post --gate` process, off / on (ms)", found["post_off_ms"], found["post_on_ms"],
                     found["on_over_off"]])  # fmt: skip
    say(
        table(
            f"webhooks: rounds of a courier and a `post --gate` process (receiver on 127.0.0.1, {gates:,} gates)",
            ["backend", "what", "ms", "ms a gate / on", "on / off"],
            rows,
            f"    load average {' '.join(f'{x:.1f}' for x in result['load_average'])}",
        )
    )
    out = Path(os.environ.get("BENCH_OUT_DIR", "bench-results")) / "webhooks.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2))
    say(f"    written: {out}")


if __name__ == "__main__":
    main()
