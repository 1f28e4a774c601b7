"""The web view's dependency graph on a board of BENCH_GRAPH_SIGNALS signals (default 10,000), measured in the
browser: `python -m bench.graph`. A SQLite board is seeded (bench/seeding.py) in groups of ten: a chain of six,
a signal after two of the chain, one after the group's first, two with no edge; every fiftieth group's first
signal failed and retried. `blackboard ui` serves it, headless Chromium (tests/e2e/web.py's) opens it, and the
page's own figures (`GRAPH.timing`, performance.now() around the layout and around the drawing) are read through
Selenium: the first draw, then the layout again (its kept copy dropped) and a redraw that keeps it."""

from __future__ import annotations

import os
import statistics
import time
from pathlib import Path

from bench.common import say, sqlite_engine, table, temp_dir
from bench.seeding import Seeder, fold
from tests.e2e.conftest import Cli
from tests.e2e.web import UiServer, chromium, settled

SIGNALS = int(os.environ.get("BENCH_GRAPH_SIGNALS", "10000"))
BOARD = "ps-graph"
AGAIN = 5  # layouts timed again once the page is up


def seed(path: Path, n: int) -> None:
    engine = sqlite_engine(path)
    seeder = Seeder(engine, BOARD, prefix=3)
    while seeder.posted < n:
        group = [seeder.post()]
        for _ in range(5):
            group.append(seeder.post(after=(group[-1],)))
        group.append(seeder.post(after=(group[2], group[4])))
        group.append(seeder.post(after=(group[0],)))
        seeder.post()
        seeder.post()
        if (seeder.posted // 10) % 50 == 0:
            seeder.claim(group[0])
            seeder.fail(group[0])
            seeder.retry(group[0])
    seeder.flush()
    fold(engine)
    engine.dispose()


DRAWN = """return [document.querySelectorAll('#graph g.node').length,
  document.querySelectorAll('#graph path.edge').length,
  (document.querySelector('#graph .graph-left-out') || {}).textContent || '',
  (document.querySelector('#graph .graph-lone-count') || {}).textContent || ''];"""


def main() -> None:
    with temp_dir("graph") as folder:
        started = time.perf_counter()
        seed(folder / "board.db", SIGNALS)
        say(f"seeded {SIGNALS:,} signals in {time.perf_counter() - started:.1f} s")
        server = UiServer(Cli(f"sqlite:///{folder / 'board.db'}", folder, folder)).wait_ready()
        driver = chromium()
        try:
            opened = time.perf_counter()
            driver.get(f"{server.url}/?board={BOARD}")
            first = settled(
                driver,
                lambda d: d.execute_script(
                    "return GRAPH.timing && GRAPH.timing.signals > 0 && GRAPH.timing;"
                ),
                within=300,
            )
            shown = time.perf_counter() - opened
            drawn = driver.execute_script(DRAWN)
            again = [
                driver.execute_script("GRAPH.kept.key = null; renderGraph(shown()); return GRAPH.timing;")
                for _ in range(AGAIN)
            ]
            kept = [driver.execute_script("renderGraph(shown()); return GRAPH.timing;") for _ in range(AGAIN)]
        finally:
            driver.quit()
            server.stop()
    rows = [
        [
            "first draw",
            first["signals"],
            first["boxes"],
            f"{first['layout_ms']:.1f}",
            f"{first['draw_ms']:.1f}",
        ],
        [
            f"layout again (median of {AGAIN})",
            again[0]["signals"],
            again[0]["boxes"],
            f"{statistics.median(t['layout_ms'] for t in again):.1f}",
            f"{statistics.median(t['draw_ms'] for t in again):.1f}",
        ],
        [
            f"redraw, layout kept (median of {AGAIN})",
            kept[0]["signals"],
            kept[0]["boxes"],
            "0",
            f"{statistics.median(t['draw_ms'] for t in kept):.1f}",
        ],
    ]
    say(
        table(
            "the dependency graph in Chromium",
            ["", "signals", "boxes", "layout ms", "draw ms"],
            rows,
            f"page open to graph drawn: {shown:.1f} s; {drawn[0]} boxes, {drawn[1]} edges; {drawn[2]}; {drawn[3]}",
        )
    )


if __name__ == "__main__":
    main()
