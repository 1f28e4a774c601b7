"""The web view's cards' reasons (docs/web.md, "Cards") on a large board: what wording the limits that hold its
POSTED signals back adds to a board answer, and to a live record's one signal.

A SQLite board of BENCH_CARDS_SIGNALS POSTED signals (seeded: bench/seeding.py), one runnable agent fitting them
under a concurrency key of max 1. Timed, each the median of BENCH_CARDS_REPEAT: listing the board's signals (what
every board answer reads), the reasons for all of them when nothing can hold any (no budget, nothing claimed
under a key, no window without room: nothing planned), the same once one claim fills the key (every other
signal held, planned as `next` plans them), and one signal's reasons (a live record's).

    python -m bench.card_reasons
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable
from typing import Any

from bench.common import bench_container, say, table, temp_dir
from bench.seeding import seed_posts
from blackboard.application.commands import ClaimSignal, ListSignals

BOARD = "ps-big"
AGENT = (
    "---\nname: bench-keyed\ncapabilities: {RESEARCH: 0.9}\ncommand: echo done\n"
    "concurrency: {key: bench-api, max: 1}\n---\nOne at a time.\n"
)


def median_ms(what: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        what()
        times.append(time.perf_counter() - start)
    return round(statistics.median(times) * 1000, 1)


def run(signals: int, repeat: int) -> dict[str, Any]:
    with temp_dir("cards") as root:
        agents = root / "agents"
        agents.mkdir()
        (agents / "bench-keyed.md").write_text(AGENT)
        container = bench_container(f"sqlite:///{root / 'b.db'}", agents_dir=agents)
        try:
            seed_posts(container.engine(), BOARD, 1, signals)
            queries, held = container.queries(), container.held_back()
            board = queries.list_signals(ListSignals(blackboard_id=BOARD))
            listing = median_ms(lambda: queries.list_signals(ListSignals(blackboard_id=BOARD)), repeat)
            free = median_ms(lambda: held(board), repeat)
            container.service().claim_signal(
                ClaimSignal(signal_id=board[0].signal_id, agent_id="bench-keyed")
            )
            board = queries.list_signals(ListSignals(blackboard_id=BOARD))
            holding = median_ms(lambda: held(board), repeat)
            counted = len(held(board))
            one = median_ms(lambda: held(board[1:2]), repeat * 4)
        finally:
            container.engine().dispose()
    return {
        "signals": signals,
        "listing_ms": listing,
        "nothing_holds_ms": free,
        "key_holds_ms": holding,
        "held": counted,
        "one_signal_ms": one,
    }


def print_report(found: dict[str, Any]) -> str:
    return table(
        f"the cards' reasons, a SQLite board of {found['signals']:,} POSTED signals (median ms)",
        ["listing the board", "reasons, nothing holds", "reasons, a key holds", "held", "one signal's"],
        [
            [
                found["listing_ms"],
                found["nothing_holds_ms"],
                found["key_holds_ms"],
                found["held"],
                found["one_signal_ms"],
            ]
        ],
    )


if __name__ == "__main__":
    say(
        print_report(
            run(
                int(os.environ.get("BENCH_CARDS_SIGNALS", "10000")),
                int(os.environ.get("BENCH_CARDS_REPEAT", "5")),
            )
        )
    )
