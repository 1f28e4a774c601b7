"""Real processes putting one item at once through `BlackboardStore`, on SQLite and PostgreSQL: a plain put is never
refused (contention is retried inside the store, as LangGraph's own stores never refuse one), and a compare-and-set
put still is, so that counters kept with it lose no update."""

from __future__ import annotations

import traceback
import uuid
from collections.abc import Callable

import pytest

from blackboard import Blackboard
from blackboard.langgraph import BlackboardStore, VersionConflict
from tests.e2e.conftest import empty_database
from tests.processes import warm_context

PROCESSES = 4
PUTS = 20
ITEM = (("shared",), "counter")


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def url(request, tmp_path_factory) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path_factory.mktemp('lg-contention') / 'blackboard.db'}"
    url = request.getfixturevalue("pg_database_url")
    empty_database(url)
    return url


def _plain_puts(url: str, board: str, worker: int, start, results) -> None:
    try:
        with Blackboard(url) as bb:
            store = BlackboardStore(bb, blackboard_id=board, author=f"ps-writer-{worker}")
            store.get(*ITEM)  # connected before the race starts
            start.wait(timeout=60)
            refused = []
            for n in range(PUTS):
                try:
                    store.put(*ITEM, {"worker": worker, "n": n})
                except Exception as exc:  # noqa: BLE001 - what a put raised is the finding
                    refused.append(f"{type(exc).__name__}: {exc}")
        results.put(("ok", refused))
    except BaseException:  # noqa: BLE001 - the parent reports the child's traceback
        results.put(("error", traceback.format_exc()))


def _counted_increments(url: str, board: str, worker: int, start, results) -> None:
    """Each increment a compare-and-set over the version it read, read again when another writer came first."""
    try:
        with Blackboard(url) as bb:
            store = BlackboardStore(bb, blackboard_id=board, author=f"ps-writer-{worker}")
            store.get(*ITEM)
            start.wait(timeout=60)
            for _ in range(PUTS):
                while True:
                    version = store.version(*ITEM)
                    item = store.get(*ITEM)
                    count = item.value["count"] if item else 0
                    try:
                        store.put(*ITEM, {"count": count + 1}, expected_version=version)
                        break
                    except VersionConflict:
                        continue  # refused, nothing written: read again
        results.put(("ok", None))
    except BaseException:  # noqa: BLE001
        results.put(("error", traceback.format_exc()))


def _race(target: Callable[..., None], url: str, board: str) -> list:
    ctx = warm_context()  # real processes, forked from a server that imported the package once
    start, results = ctx.Barrier(PROCESSES), ctx.Queue()
    procs = [ctx.Process(target=target, args=(url, board, w, start, results)) for w in range(PROCESSES)]
    for p in procs:
        p.start()
    outcomes = [results.get(timeout=240) for _ in procs]
    for p in procs:
        p.join(timeout=30)
    errors = [detail for kind, detail in outcomes if kind == "error"]
    assert errors == [], "\n".join(errors)
    return [detail for _, detail in outcomes]


def test_four_processes_putting_one_item_twenty_times_each_are_never_refused(url):
    board = f"lg-race-{uuid.uuid4().hex[:8]}"
    refused = [r for found in _race(_plain_puts, url, board) for r in found]

    assert refused == [], f"{len(refused)} of {PROCESSES * PUTS} plain puts refused: {refused[:3]}"
    with Blackboard(url) as bb:
        history = BlackboardStore(bb, blackboard_id=board).history(*ITEM)
    assert len(history) == PROCESSES * PUTS  # each put one version, none lost, none a conflict candidate
    assert {v.status for v in history} == {"accepted"}
    for worker in range(PROCESSES):  # each writer's puts in the order it made them
        mine = [v.value["n"] for v in history if v.author == f"ps-writer-{worker}"]
        assert mine == list(range(PUTS))


def test_compare_and_set_stays_a_compare_and_set_under_the_same_race(url):
    board = f"lg-cas-{uuid.uuid4().hex[:8]}"
    _race(_counted_increments, url, board)

    with Blackboard(url) as bb:
        store = BlackboardStore(bb, blackboard_id=board)
        assert store.get(*ITEM).value == {"count": PROCESSES * PUTS}  # no increment lost
        assert store.version(*ITEM) == PROCESSES * PUTS  # and every version an increment
