"""(web) The web view on a large board: a board of BENCH_WEB_SIGNALS signals beside one of BENCH_WEB_SMALL
(bench/web_board.py), on SQLite and PostgreSQL, each served by a real `blackboard ui` and loaded in headless
Chromium (Debian's, as the browser tests drive it: tests/e2e/web.py), BENCH_WEB_ROUNDS times, the boards
taking turns.

Each load: from navigation to the page drawn (every column's count is the board's), /api/board's and
/api/events' answer time and size (the browser's resource timing), after a garbage collection the JS heap
(Chrome's Performance.getMetrics) and the DOM's own heap (Runtime.getHeapUsage's embedder heap), the DOM's
elements, then one live record (a post through the service) and the redraw it causes: the time of the page's
animation-frame callbacks from the record's arrival until its card is counted. With BENCH_WEB_PROFILE=1 also
the time of each panel's drawing of the whole board (one call each)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import Config, bench_container, progress, table, temp_dir
from bench.stats import percentile
from bench.web_board import build

BIN = Path(sys.executable).parent
SIZES: dict[str, tuple[Any, Any]] = {
    "BENCH_WEB_SIGNALS": (10_000, 2_000),  # signals on the large board
    "BENCH_WEB_SMALL": (100, 100),  # signals on the small board beside it
    "BENCH_WEB_ROUNDS": (5, 3),  # loads of each board, taking turns
    "BENCH_WEB_DATABASES": ("sqlite,postgresql", "sqlite,postgresql"),
}
WITHIN = 300.0  # seconds a load may take before the round fails (never reached when things work)

# Times each animation-frame callback (the page redraws in one), so a live record's redraw is measured as the
# page does it, whatever the drawing functions are called.
FRAMES = """
window.__frames = [];
const original = window.requestAnimationFrame.bind(window);
window.requestAnimationFrame = (callback) => original((t) => {
  const start = performance.now();
  try { callback(t); } finally { window.__frames.push(performance.now() - start); }
});
"""
DRAWN = """
const counts = [...document.querySelectorAll('#columns .column .count')].map((c) => Number(c.textContent));
return counts.length === 7 ? counts.reduce((a, b) => a + b, 0) : -1;
"""
RESOURCES = """
return performance.getEntriesByType('resource').filter((r) => r.name.includes('/api/'))
  .map((r) => ({name: r.name, ms: r.duration, bytes: r.encodedBodySize, wire: r.transferSize}));
"""
# each panel of app.js drawing the whole board once, by name (those that exist in this build)
PROFILE = """
const view = shown();
const t0 = performance.now();
view.signals.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.signal_id.localeCompare(b.signal_id));
const found = {sort: performance.now() - t0};
const calls = {
  renderGates: () => renderGates(view.signals), renderFlows: () => renderFlows(view.signals),
  renderColumns: () => renderColumns(view.signals), renderDetail: () => renderDetail(view),
  renderGraph: () => renderGraph(view.signals), renderTimeline: () => renderTimeline(view.signals, view.upto),
  renderEntries: () => renderEntries(view.entries), renderTopics: () => renderTopics(view),
  renderEvents: () => renderEvents(view.upto), render: () => render(),
};
for (const [name, call] of Object.entries(calls)) {
  if (typeof window[name] !== 'function') continue;
  const start = performance.now(); call(); found[name] = performance.now() - start;
}
return found;
"""


def sizes(config: Config) -> dict[str, Any]:
    full = config.scale == "full"
    return {name: os.environ.get(name, str(pair[0] if full else pair[1])) for name, pair in SIZES.items()}


def run(config: Config) -> dict[str, Any]:
    s = sizes(config)
    large, small, rounds = int(s["BENCH_WEB_SIGNALS"]), int(s["BENCH_WEB_SMALL"]), int(s["BENCH_WEB_ROUNDS"])
    databases = [x.strip() for x in s["BENCH_WEB_DATABASES"].split(",") if x.strip()]
    result: dict[str, Any] = {"sizes": s, "results": {}, "load_average": {"start": os.getloadavg()}}
    with temp_dir("web") as root:
        for database in databases:
            if database == "sqlite":
                url = f"sqlite:///{root / 'web.db'}"
                result["results"][database] = measure(url, root, large, small, rounds, database)
                continue
            from bench.postgres.databases import Databases
            from bench.postgres.section import sizes as pg_sizes

            dbs = Databases(pg_sizes(config)["BENCH_PG_URL"])
            try:
                url = dbs.sqlalchemy_url(dbs.create("web"))
                result["results"][database] = measure(url, root, large, small, rounds, database)
            finally:
                dbs.close()
    result["load_average"]["end"] = os.getloadavg()
    out = config.out.parent / "web.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2, default=str) + "\n")
    return result


def measure(url: str, root: Path, large: int, small: int, rounds: int, database: str) -> dict[str, Any]:
    container = bench_container(url)
    engine = container.engine()
    boards = {}
    for board, n, prefix in (("ps-large", large, 3), ("ps-small", small, 4)):
        progress(f"(web) {database}: a board of {n:,} signals")
        boards[board] = build(engine, board, n, prefix)
    server = UiServer(url, root)
    driver = chromium()
    loads: dict[str, list[dict[str, Any]]] = {board: [] for board in boards}
    try:
        for i in range(rounds):
            for board in boards:
                progress(f"(web) {database}: round {i + 1} of {rounds}, {board}")
                loads[board].append(load(driver, server.url, board, boards[board]["signals"], container))
                boards[board]["signals"] += 1  # the live post
        profile = {}
        if os.environ.get("BENCH_WEB_PROFILE") == "1":
            driver.get(f"{server.url}/?board=ps-large")
            wait(driver, lambda: driver.execute_script(DRAWN) == boards["ps-large"]["signals"])
            profile = driver.execute_script(PROFILE)
    finally:
        driver.quit()
        server.stop()
        engine.dispose()
    return {
        "boards": {
            board: {**boards[board], "loads": loads[board], **summary(loads[board])} for board in boards
        },
        "profile_ms": profile,
    }


def load(driver: Any, base: str, board: str, signals: int, container: Any) -> dict[str, Any]:
    """One load of the page on `board` (a fresh tab's state), then one live record's redraw."""
    driver.get("about:blank")
    driver.execute_cdp_cmd("HeapProfiler.collectGarbage", {})
    started = time.perf_counter()
    driver.get(f"{base}/?board={board}")
    wait(driver, lambda: driver.execute_script(DRAWN) == signals)
    drawn = time.perf_counter() - started
    resources = driver.execute_script(RESOURCES)
    api = {r["name"].split("/api/")[1].split("?")[0]: r for r in resources}
    driver.execute_cdp_cmd("HeapProfiler.collectGarbage", {})
    metrics = {m["name"]: m["value"] for m in driver.execute_cdp_cmd("Performance.getMetrics", {})["metrics"]}
    blink = driver.execute_cdp_cmd("Runtime.getHeapUsage", {})["embedderHeapUsedSize"]  # the DOM's C++ side
    # one live record: a post through the service, and the page's frames until it counts it
    driver.execute_script(FRAMES)
    from blackboard.application.commands import PostSignal

    container.service().post_signal(
        PostSignal(
            signal_type="REVIEW", ps_id=board, entry_id=f"e-{signals}", topic="a live post", prompt="p"
        )
    )
    wait(driver, lambda: driver.execute_script(DRAWN) == signals + 1)
    frames = driver.execute_script("return window.__frames;")
    return {
        "drawn_ms": round(drawn * 1000, 1),
        "board_ms": round(api["board"]["ms"], 1),
        "board_bytes": api["board"]["bytes"],
        "events_ms": round(api["events"]["ms"], 1),
        "events_bytes": api["events"]["bytes"],
        "heap_mb": round(metrics["JSHeapUsedSize"] / 2**20, 1),
        "dom_heap_mb": round(blink / 2**20, 1),
        "dom_nodes": driver.execute_script("return document.getElementsByTagName('*').length;"),
        "redraw_ms": round(sum(frames), 1),
    }


FIGURES = (
    "drawn_ms",
    "board_ms",
    "board_bytes",
    "events_ms",
    "events_bytes",
    "heap_mb",
    "dom_heap_mb",
    "dom_nodes",
    "redraw_ms",
)


def summary(loads: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        name: {
            "median": percentile([x[name] for x in loads], 50),
            "min": min(x[name] for x in loads),
            "max": max(x[name] for x in loads),
        }
        for name in FIGURES
    }


def wait(driver: Any, condition: Any, within: float = WITHIN) -> None:
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"the page did not draw within {within:g} s")
        time.sleep(0.02)


class UiServer:
    """`blackboard ui` on a free port of the loopback, until `stop`."""

    def __init__(self, url: str, root: Path) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        env = {k: v for k, v in os.environ.items() if not k.startswith("BLACKBOARD_")}
        env.update(BLACKBOARD_DB=url, BLACKBOARD_AGENTS_DIR=str(root))
        self.proc = subprocess.Popen(
            [str(BIN / "blackboard"), "ui", "--port", str(self.port)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        self.url = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    self.stop()
                    raise RuntimeError("blackboard ui did not start") from None
                time.sleep(0.1)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


def chromium() -> Any:
    """The browser tests' Chromium (tests/e2e/web.py), its performance metrics on."""
    from tests.e2e.web import chromium as browser

    driver = browser()
    driver.execute_cdp_cmd("Performance.enable", {})
    return driver


def print_report(r: dict[str, Any], say: Any) -> None:
    rows = []
    for database, found in r["results"].items():
        for b in found["boards"].values():
            rows.append(
                [f"{database} {b['signals'] - len(b['loads']):,} signals"]
                + [f"{b[f]['median']:,.1f} ({b[f]['min']:,.1f}-{b[f]['max']:,.1f})" for f in FIGURES]
            )
    la = r["load_average"]
    say(
        table(
            "(web) the page on a large board: median (min-max) of the loads",
            [
                "board",
                "drawn ms",
                "/api/board ms",
                "bytes",
                "/api/events ms",
                "bytes",
                "JS heap MB",
                "DOM heap MB",
                "DOM elements",
                "live redraw ms",
            ],
            rows,
            note=f"load average {la['start'][0]:.1f} at the start, {la['end'][0]:.1f} at the end",
        )
    )
    for database, found in r["results"].items():
        if found["profile_ms"]:
            say(
                f"   {database} large board, one drawing each (ms): "
                + ", ".join(f"{k} {v:.0f}" for k, v in found["profile_ms"].items())
            )
