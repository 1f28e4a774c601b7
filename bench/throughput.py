"""(a) Commands per second through BlackboardService on a SQLite file: post, claim, complete.

The workload: N signals posted on one board, then each claimed, then each completed; one phase per
command kind. When (b) runs too, our service and the eventsourcing baseline are driven side by side
in alternating chunks of commands, so both see the same machine load (this machine is shared).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any, Protocol

from bench.common import AGENT, Config, post_command, progress, temp_dir, wired
from blackboard.application.commands import ClaimSignal, CompleteSignal

KINDS = ("post", "claim", "complete")
CHUNK = 50  # commands per turn when two stores are driven side by side
BOARD = "ps-bench"
WARMUP_BOARD, WARMUP = "ps-warmup", 5


class Driver(Protocol):
    def post(self, i: int, board: str = BOARD) -> str: ...
    def claim(self, signal_id: str) -> None: ...
    def complete(self, signal_id: str) -> None: ...


class OurService:
    """Claims and completions name only the signal id (as agents and the CLI do), so each also looks
    the signal's board up in the read model."""

    def __init__(self, service: Any) -> None:
        self.service = service

    def post(self, i: int, board: str = BOARD) -> str:
        return self.service.post_signal(post_command(board, i)).signal_id

    def claim(self, signal_id: str) -> None:
        self.service.claim_signal(ClaimSignal(signal_id=signal_id, agent_id=AGENT.agent_id))

    def complete(self, signal_id: str) -> None:
        self.service.complete_signal(
            CompleteSignal(signal_id=signal_id, agent_id=AGENT.agent_id, artifact_path=f"out/{signal_id}.md")
        )


@contextmanager
def ours(synchronous: str) -> Iterator[OurService]:
    """The service as the container builds it, on a fresh SQLite file (WAL) at `synchronous`."""
    with (
        temp_dir(f"throughput-{synchronous.lower()}") as d,
        wired(f"sqlite:///{d / 'blackboard.db'}", synchronous=synchronous) as container,
    ):
        yield OurService(container.service())


def drive(n: int, drivers: dict[str, Driver]) -> dict[str, dict[str, Any]]:
    """Run the workload on every driver, alternating turns of CHUNK commands; wall and CPU time per kind."""
    for driver in drivers.values():  # untimed, on another board: first-use costs (statement compilation...)
        for i in range(WARMUP):
            signal_id = driver.post(i, board=WARMUP_BOARD)
            driver.claim(signal_id)
            driver.complete(signal_id)
    ids: dict[str, list[str]] = {name: [] for name in drivers}
    wall = {name: dict.fromkeys(KINDS, 0.0) for name in drivers}
    cpu = {name: dict.fromkeys(KINDS, 0.0) for name in drivers}
    turn = 0
    for kind in KINDS:
        for start in range(0, n, CHUNK):
            stop = min(n, start + CHUNK)
            order = list(drivers.items())
            if turn % 2:
                order.reverse()  # neither store always goes first
            turn += 1
            for name, driver in order:
                c0, t0 = time.process_time(), time.perf_counter()
                if kind == "post":
                    ids[name] += [driver.post(i) for i in range(start, stop)]
                else:
                    act = driver.claim if kind == "claim" else driver.complete
                    for signal_id in ids[name][start:stop]:
                        act(signal_id)
                wall[name][kind] += time.perf_counter() - t0
                cpu[name][kind] += time.process_time() - c0
    return {name: rates(n, wall[name], cpu[name]) for name in drivers}


def rates(n: int, seconds: dict[str, float], cpu: dict[str, float]) -> dict[str, Any]:
    total, cpu_total = sum(seconds.values()), sum(cpu.values())
    return {
        "signals": n,
        "commands": n * len(seconds),
        "seconds": {k: round(v, 4) for k, v in seconds.items()} | {"total": round(total, 4)},
        "per_second": {k: round(n / v, 1) for k, v in seconds.items()}
        | {"overall": round(n * len(seconds) / total, 1)},
        "cpu_ms_per_command": {k: round(v / n * 1000, 3) for k, v in cpu.items()}
        | {"overall": round(cpu_total / (n * len(seconds)) * 1000, 3)},
    }


def run(config: Config, with_baseline: bool) -> dict[str, Any]:
    """(a), and (b) when asked: ours at FULL and NORMAL, each beside eventsourcing in the same mode."""
    if with_baseline:
        from bench import baseline  # imports eventsourcing only when needed

    n, n_defaults = config["BENCH_N"], config["BENCH_ES_DEFAULTS_N"]
    out: dict[str, Any] = {"ours": {}, "theirs": {}}
    for mode in ("FULL", "NORMAL"):
        with ExitStack() as stack:
            drivers: dict[str, Driver] = {"ours": stack.enter_context(ours(mode))}
            if with_baseline:
                drivers["theirs"] = stack.enter_context(baseline.theirs(mode, tuned=True))
            progress(
                f"(a{'+b' if with_baseline else ''}) {n} signals x 3 commands, synchronous={mode}"
                + (
                    ", ours and eventsourcing (tuned: aggregate cache, no deep copy) side by side"
                    if with_baseline
                    else ""
                )
            )
            result = drive(n, drivers)
            out["ours"][mode] = result["ours"]
            if with_baseline:
                out["theirs"][f"tuned_{mode}"] = result["theirs"] | {"settings": drivers["theirs"].settings}  # type: ignore[attr-defined]
    if with_baseline:
        with ExitStack() as stack:
            drivers = {
                "ours": stack.enter_context(ours("FULL")),
                "theirs": stack.enter_context(baseline.theirs("FULL", tuned=False)),
            }
            progress(
                f"(b) {n_defaults} signals x 3 commands, FULL, ours and eventsourcing with its defaults "
                "(no cache: it replays the board on every command)"
            )
            result = drive(n_defaults, drivers)
            out["ours"]["FULL_defaults_size"] = result["ours"]
            out["theirs"]["defaults_FULL"] = result["theirs"] | {"settings": drivers["theirs"].settings}  # type: ignore[attr-defined]
        out["ratios_ours_over_theirs"] = {
            "tuned_FULL": _ratio(out["ours"]["FULL"], out["theirs"]["tuned_FULL"]),
            "tuned_NORMAL": _ratio(out["ours"]["NORMAL"], out["theirs"]["tuned_NORMAL"]),
            "defaults_FULL": _ratio(out["ours"]["FULL_defaults_size"], out["theirs"]["defaults_FULL"]),
        }
    return out


def _ratio(mine: dict[str, Any], theirs: dict[str, Any]) -> dict[str, float]:
    return {k: round(mine["per_second"][k] / theirs["per_second"][k], 2) for k in mine["per_second"]}
