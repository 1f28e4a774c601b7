"""The web view's dependency graph on boards of BENCH_GRAPH_SIGNALS signals (default 10,000), measured in the
browser: `python -m bench.graph`. Two SQLite boards are seeded (bench/seeding.py): `groups`, in groups of ten (a
chain of six, a signal after two of the chain, one after the group's first, two with no edge; every fiftieth
group's first signal failed and retried), and `one`, a single group (each signal after one or two of the fifty
before it), whose 300 newest signals the panel draws. `blackboard ui` serves them, headless Chromium (the tests')
opens each, and the page's own figures (`GRAPH.timing`: performance.now() around the layout and around building
the drawing's elements) are read through Selenium: the first draw, then the layout again (its kept copy dropped)
and a redraw that keeps it."""

from __future__ import annotations

import os
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from bench.common import say, sqlite_engine, table, temp_dir
from bench.seeding import Seeder, fold
from tests.e2e.conftest import Cli
from tests.e2e.web import UiServer, chromium, settled

SIGNALS = int(os.environ.get("BENCH_GRAPH_SIGNALS", "10000"))
AGAIN = 5  # layouts timed again once the page is up
DRAWN = """return [document.querySelectorAll('#graph g.node').length,
  document.querySelectorAll('#graph path.edge').length,
  (document.querySelector('#graph .graph-left-out') || {}).textContent || '',
  (document.querySelector('#graph .graph-lone-count') || {}).textContent || ''];"""


def groups(seeder: Seeder, n: int) -> None:
    while seeder.posted < n:
        group = [seeder.post()]
        for _ in range(5):
            group.append(seeder.post(after=(group[-1],)))
        group.append(seeder.post(after=(group[2], group[4])))
        group.append(seeder.post(after=(group[0],)))
        seeder.post()
        seeder.post()
        if len(group) and (seeder.posted // 10) % 50 == 0:
            seeder.claim(group[0])
            seeder.fail(group[0])
            seeder.retry(group[0])


def one(seeder: Seeder, n: int) -> None:
    pick, posted = random.Random(7), [seeder.post()]
    while seeder.posted < n:
        before = posted[-50:]
        posted.append(seeder.post(after=tuple({pick.choice(before) for _ in range(pick.choice((1, 2)))})))


def seed(path: Path, boards: dict[str, Callable[[Seeder, int], None]], n: int) -> None:
    engine = sqlite_engine(path)
    for prefix, (board, shape) in enumerate(boards.items(), start=3):
        seeder = Seeder(engine, board, prefix=prefix)
        shape(seeder, n)
        seeder.flush()
    fold(engine)
    engine.dispose()


def measure(driver, url: str) -> list[list[object]]:
    opened = time.perf_counter()
    driver.get(url)
    first = settled(
        driver,
        lambda d: d.execute_script("return GRAPH.timing && GRAPH.timing.signals > 0 && GRAPH.timing;"),
        300,
    )
    shown = time.perf_counter() - opened
    drawn = driver.execute_script(DRAWN)
    again = [
        driver.execute_script("GRAPH.kept.key = null; render(); return GRAPH.timing;") for _ in range(AGAIN)
    ]
    kept = [driver.execute_script("render(); return GRAPH.timing;") for _ in range(AGAIN)]
    median = lambda runs, key: f"{statistics.median(t[key] for t in runs):.1f}"  # noqa: E731
    say(
        f"{url}: page open to graph drawn {shown:.1f} s; {drawn[0]} boxes, {drawn[1]} edges; {drawn[2]}; {drawn[3]}"
    )
    return [
        [
            "layout on opening",
            first["signals"],
            first["boxes"],
            f"{first['kept_ms']:.1f}",
            f"{first['draw_ms']:.1f}",
        ],
        [
            f"layout again (median of {AGAIN})",
            again[0]["signals"],
            again[0]["boxes"],
            median(again, "layout_ms"),
            median(again, "draw_ms"),
        ],
        [
            f"redraw, layout kept (median of {AGAIN})",
            kept[0]["signals"],
            kept[0]["boxes"],
            "0",
            median(kept, "draw_ms"),
        ],
    ]


def main() -> None:
    boards = {"groups": groups, "one": one}
    with temp_dir("graph") as folder:
        started = time.perf_counter()
        seed(folder / "board.db", boards, SIGNALS)
        say(f"seeded {len(boards)} boards of {SIGNALS:,} signals in {time.perf_counter() - started:.1f} s")
        server = UiServer(Cli(f"sqlite:///{folder / 'board.db'}", folder, folder)).wait_ready()
        driver = chromium()
        try:
            rows = [
                [board, *row] for board in boards for row in measure(driver, f"{server.url}/?board={board}")
            ]
        finally:
            driver.quit()
            server.stop()
    headers = ["board", "", "signals", "boxes", "layout ms", "draw ms"]
    say(table("the dependency graph in Chromium", headers, rows))


if __name__ == "__main__":
    main()
