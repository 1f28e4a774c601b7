"""The processes driving solve runs, on SQLite and PostgreSQL: a row per run, refreshed only by the process that
holds it; a resume takes it over, after which the process it replaced finds its beats refused."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

from blackboard.domain.presence import SolveProcess
from blackboard.infrastructure.persistence.solve.processes import SqlSolveProcesses

T0 = datetime(2026, 1, 5, tzinfo=UTC)


def process(holder: str, pid: int) -> SolveProcess:
    return SolveProcess("bb-1", "solve-0000000a", holder, "host", pid, T0, T0, timedelta(seconds=2))


def test_only_the_process_holding_a_run_beats_for_it_and_a_resume_takes_it_over(sql_engine):
    processes = SqlSolveProcesses(sql_engine)
    first, second = process("h1", 1), process("h2", 2)
    processes.take(first)

    assert processes.beat(replace(first, last_beat=T0 + timedelta(seconds=2)))
    assert processes.of("bb-1", ["solve-0000000a"])["solve-0000000a"].last_beat == T0 + timedelta(seconds=2)

    processes.take(replace(second, last_beat=T0 + timedelta(seconds=9)))  # `solve --resume` elsewhere
    assert not processes.beat(replace(first, last_beat=T0 + timedelta(seconds=10)))  # the stalled one
    processes.stopped("bb-1", "solve-0000000a", "h1", T0 + timedelta(seconds=11))  # changes nothing now
    row = processes.of("bb-1", ["solve-0000000a", "solve-0000000b"])
    assert list(row) == ["solve-0000000a"]
    assert (row["solve-0000000a"].pid, row["solve-0000000a"].stopped_at) == (2, None)
    assert row["solve-0000000a"].is_live(T0 + timedelta(seconds=14))

    processes.stopped("bb-1", "solve-0000000a", "h2", T0 + timedelta(seconds=12))
    ended = processes.of("bb-1", ["solve-0000000a"])["solve-0000000a"]
    assert ended.stopped_at == T0 + timedelta(seconds=12) and not ended.is_live(T0 + timedelta(seconds=12))
    assert processes.of("bb-2", ["solve-0000000a"]) == {} and processes.of("bb-1", []) == {}
