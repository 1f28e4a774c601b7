"""(savers) The board's checkpointer (`BlackboardSaver`) beside LangGraph's own `SqliteSaver`
(langgraph-checkpoint-sqlite) and `PostgresSaver` (langgraph-checkpoint-postgres), each on a fresh database
of its own, doing the same work:

- graph steps/s: a StateGraph of three nodes in a row invoked on one thread, again and again (each invoke:
  a get_tuple, four puts and their writes, as LangGraph's loop makes them); steps are nodes run; the state
  is a count and the last five notes, so a checkpoint keeps its size (about 0.5 KB) however long the run,
- get_tuple of the thread's newest checkpoint (what every invoke reads first),
- list(limit=10) (get_state_history's first page),
- put of one more checkpoint (PostgreSQL: one round trip or several).

Rounds alternate: each round times every operation on the board's saver, then on the peer's (then the
other way round in the next round, so a drift of the shared machine falls on both), BENCH_SAVER_CALLS calls
each; a round's figure is the median call. The ratio is the board's speed over the peer's (peer's time /
the board's: 1.0 is as fast), per round; the report gives its median over BENCH_SAVER_ROUNDS rounds with
min-max, and the load average. Both SQLite stores run with their defaults (WAL, synchronous FULL).
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any, TypedDict

from bench.common import progress, temp_dir

OPS = ("graph step", "get_tuple", "list limit 10", "put")
TARGETS = {"graph step": 1.0, "get_tuple": 0.5, "list limit 10": 0.5, "put": None}
BOARD = "bench-savers"
NODES = 3  # nodes per invoke
PRIME = 20  # invokes on the thread before the rounds: get_tuple and list read a thread with a history
PG_URL = os.environ.get("BENCH_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")


class State(TypedDict):
    count: int
    notes: list[str]  # the last NOTES notes: a checkpoint keeps its size however many invokes ran


NOTES = 5


def _node(name: str) -> Callable[[State], dict[str, Any]]:
    def step(state: State) -> dict[str, Any]:
        notes = [*state["notes"], f"{name} saw {state['count']}, a sentence or two of what it found"]
        return {"count": state["count"] + 1, "notes": notes[-NOTES:]}

    return step


def graph(saver: Any) -> Any:
    from langgraph.graph import END, START, StateGraph

    builder = StateGraph(State)
    names = [f"n{i}" for i in range(NODES)]
    for name in names:
        builder.add_node(name, _node(name))
    builder.add_edge(START, names[0])
    for a, b in zip(names, names[1:], strict=False):
        builder.add_edge(a, b)
    builder.add_edge(names[-1], END)
    return builder.compile(checkpointer=saver)


class Subject:
    """One saver, its graph, and the operations on its own thread."""

    def __init__(self, name: str, saver: Any) -> None:
        self.name, self.saver, self.graph = name, saver, graph(saver)
        self.thread = {"configurable": {"thread_id": "t-bench"}}
        for _ in range(PRIME):
            self.invoke()

    def invoke(self) -> None:
        self.graph.invoke({"count": 0, "notes": []}, self.thread)

    def call(self, op: str) -> Callable[[], Any]:
        saver, thread = self.saver, self.thread
        if op == "graph step":
            return self.invoke
        if op == "get_tuple":
            return lambda: saver.get_tuple(thread)
        return lambda: list(saver.list(thread, limit=10))


def _time(call: Callable[[], Any], calls: int, op: str) -> float:
    """The median of `calls` calls, in seconds per graph step (a graph call runs NODES steps) or per call."""
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    median = statistics.median(times)
    return median / NODES if op == "graph step" else median


def _put_time(subject: Subject, calls: int) -> float:
    """The median put, timed alone (the get_tuple that finds its parent is outside the clock)."""
    from langgraph.checkpoint.base import empty_checkpoint

    times = []
    for i in range(calls):
        latest = subject.saver.get_tuple(subject.thread)
        checkpoint = {**empty_checkpoint(), "channel_values": {"count": i, "notes": ["a", "b"]}}
        started = time.perf_counter()
        subject.saver.put(latest.config, checkpoint, {"source": "update", "step": i, "parents": {}}, {})
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def compare(ours: Subject, peer: Subject, rounds: int, calls: int) -> dict[str, Any]:
    """Rounds taking turns (ours first, then the peer first); per op: each side's median ms per round and
    the ratio peer / ours (ours' speed as a share of the peer's), median and min-max over the rounds."""
    samples: dict[str, dict[str, list[float]]] = {op: {"ours": [], "peer": []} for op in OPS}
    for r in range(rounds):
        order = [("ours", ours), ("peer", peer)] if r % 2 == 0 else [("peer", peer), ("ours", ours)]
        for op in OPS:
            for side, subject in order:
                seconds = _put_time(subject, calls) if op == "put" else _time(subject.call(op), calls, op)
                samples[op][side].append(seconds)
    out: dict[str, Any] = {}
    for op, by in samples.items():
        ratios = [p / o for o, p in zip(by["ours"], by["peer"], strict=True)]
        out[op] = {
            "ours_ms": round(statistics.median(by["ours"]) * 1000, 3),
            "peer_ms": round(statistics.median(by["peer"]) * 1000, 3),
            "ratio": round(statistics.median(ratios), 3),
            "ratio_min": round(min(ratios), 3),
            "ratio_max": round(max(ratios), 3),
        }
    return out


@contextmanager
def board_saver(url: str) -> Iterator[Any]:
    from blackboard import Blackboard
    from blackboard.langgraph import BlackboardSaver

    with Blackboard(url) as bb:
        yield BlackboardSaver(bb, board=BOARD)


@contextmanager
def peer_saver(database: str, where: str) -> Iterator[Any]:
    """LangGraph's own saver for `database` ("sqlite": SqliteSaver on a file; else PostgresSaver on a libpq
    URL), its tables set up."""
    if database == "sqlite":
        from langgraph.checkpoint.sqlite import SqliteSaver as Saver
    else:
        from langgraph.checkpoint.postgres import PostgresSaver as Saver  # type: ignore[assignment]
    with Saver.from_conn_string(where) as saver:
        saver.setup()
        yield saver


def run(rounds: int, calls: int) -> dict[str, Any]:
    result: dict[str, Any] = {
        "rounds": rounds,
        "calls": calls,
        "load_average_before": [round(x, 2) for x in os.getloadavg()],
        "backends": {},
    }
    with temp_dir("savers") as where, ExitStack() as opened:
        progress("(savers) SQLite: BlackboardSaver and SqliteSaver")
        ours = Subject(
            "BlackboardSaver", opened.enter_context(board_saver(f"sqlite:///{where / 'board.db'}"))
        )
        peer = Subject("SqliteSaver", opened.enter_context(peer_saver("sqlite", str(where / "peer.db"))))
        result["backends"]["sqlite"] = {"peer": "SqliteSaver", **compare(ours, peer, rounds, calls)}
    result["backends"]["postgresql"] = _postgresql(rounds, calls)
    result["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    return result


def _postgresql(rounds: int, calls: int) -> dict[str, Any]:
    from bench.postgres.databases import Databases

    dbs = Databases(PG_URL)
    try:
        version = dbs.server_version()
    except Exception as exc:  # noqa: BLE001 - no server: SQLite's figures still stand
        dbs.close()
        return {"skipped": f"no PostgreSQL ({type(exc).__name__}); set BENCH_PG_URL"}
    try:
        with ExitStack() as opened:
            progress("(savers) PostgreSQL: BlackboardSaver and PostgresSaver")
            board_url = dbs.sqlalchemy_url(dbs.create("savers_board"))
            ours = Subject("BlackboardSaver", opened.enter_context(board_saver(board_url)))
            peer_url = dbs.libpq_url(dbs.create("savers_peer"))
            peer = Subject("PostgresSaver", opened.enter_context(peer_saver("postgresql", peer_url)))
            return {"peer": "PostgresSaver", "server": version, **compare(ours, peer, rounds, calls)}
    finally:
        dbs.close()


HEADERS = ["store", "peer", "operation", "board ms", "peer ms", "board / peer speed", "min-max", "target"]


def rows(result: dict[str, Any]) -> list[list[Any]]:
    table = []
    for backend, b in result["backends"].items():
        if "skipped" in b:
            table.append([backend, "", b["skipped"], "", "", "", "", ""])
            continue
        for op in OPS:
            c = b[op]
            target = TARGETS[op]
            table.append(
                [
                    backend,
                    b["peer"],
                    op + (" (ms per node)" if op == "graph step" else ""),
                    c["ours_ms"],
                    c["peer_ms"],
                    f"{c['ratio']:.3f}x",
                    f"{c['ratio_min']:.2f}-{c['ratio_max']:.2f}",
                    f">= {target}x" if target else "",
                ]
            )
    return table


def targets(result: dict[str, Any]) -> list[tuple[str, float, str, bool]]:
    found = []
    for backend, b in result["backends"].items():
        if "skipped" in b:
            continue
        for op, target in TARGETS.items():
            if target is not None:
                found.append(
                    (
                        f"(savers) {op} on {backend}, BlackboardSaver's speed / {b['peer']}'s, median of "
                        f"{result['rounds']} rounds",
                        b[op]["ratio"],
                        f">= {target}",
                        b[op]["ratio"] >= target,
                    )
                )
    return found
