"""A run's output on the real databases (docs/persistence.md, "Run output"): the store keeps each line once, reads
them after a cursor in (attempt, sequence) order, drops old ones; the worker's writer numbers a run's lines on
from what its attempt kept, holds a run to its bounds (one notice past them) and writes in batches from threads
of its own, everything queued written before `finish` returns; on SQLite and PostgreSQL."""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from blackboard.application.output import (
    MAX_LINE,
    MAX_RUN_LINES,
    Cursor,
    OutputLine,
    Stream,
)
from blackboard.application.ports import StoreUnavailable
from blackboard.domain.errors import InvalidInput
from blackboard.domain.signals import AgentSignal, SignalPayload, SignalType
from blackboard.infrastructure.persistence.run_output import LinesTaken, SqlRunOutputStore
from blackboard.infrastructure.worker.output import BATCH, OutputWriter

NOW = datetime(2026, 12, 6, 16, 0, tzinfo=UTC)


def line(signal_id: str, attempt: int, sequence: int, text: str = "", at: datetime = NOW) -> OutputLine:
    return OutputLine(signal_id, attempt, sequence, at, Stream.STDOUT, text or f"{attempt}:{sequence}")


def claimed(signal_id: str, attempt: int = 1) -> AgentSignal:
    posted = AgentSignal(
        signal_id=signal_id,
        blackboard_id="ps-o",
        signal_type=SignalType.RESEARCH,
        payload=SignalPayload(ps_id="ps-o", entry_id="e-1", topic="t"),
        target_capabilities=("RESEARCH",),
        posted_by="test",
        created_at=NOW,
    )
    return replace(posted.claimed("talker", NOW, "tok"), attempt=attempt)


def test_lines_are_read_after_a_cursor_in_attempt_and_sequence_order_each_kept_once(sql_engine):
    store = SqlRunOutputStore(sql_engine)
    store.append([line("sig-aaaaaaaa", 2, 1), line("sig-aaaaaaaa", 1, 2), line("sig-aaaaaaaa", 1, 1)])
    store.append([line("sig-bbbbbbbb", 1, 1)])
    read = store.after("sig-aaaaaaaa", Cursor())
    assert [(r.attempt, r.sequence) for r in read] == [(1, 1), (1, 2), (2, 1)]
    assert [r.text for r in store.after("sig-aaaaaaaa", Cursor(1, 1))] == ["1:2", "2:1"]
    assert [r.text for r in store.after("sig-aaaaaaaa", Cursor(1, 2), limit=1)] == ["2:1"]
    assert store.after("sig-aaaaaaaa", Cursor(2, 1)) == []
    assert read[0].at == NOW and read[0].stream is Stream.STDOUT
    assert (store.last("sig-aaaaaaaa", 1), store.last("sig-aaaaaaaa", 3)) == (2, 0)
    with pytest.raises(LinesTaken):  # numbered twice: refused for good, not an outage to retry
        store.append([line("sig-aaaaaaaa", 1, 2)])
    assert len(store.after("sig-aaaaaaaa", Cursor())) == 3  # the refused batch wrote nothing


def test_text_either_database_refuses_is_kept_as_near_as_it_can_be(sql_engine):
    store = SqlRunOutputStore(sql_engine)
    store.append([line("sig-aaaaaaaa", 1, 1, "a\x00b"), line("sig-aaaaaaaa", 1, 2, "lone \ud800 half")])
    assert [r.text for r in store.after("sig-aaaaaaaa", Cursor())] == ["a\ufffdb", "lone ? half"]


def test_old_lines_are_dropped(sql_engine):
    store = SqlRunOutputStore(sql_engine)
    store.append([line("sig-aaaaaaaa", 1, 1, at=NOW - timedelta(days=8)), line("sig-aaaaaaaa", 1, 2)])
    assert store.forget(NOW - timedelta(days=7)) == 1
    assert [r.sequence for r in store.after("sig-aaaaaaaa", Cursor())] == [2]


def test_the_writer_numbers_a_run_on_from_its_attempt_and_writes_every_line_of_many_threads_before_finish(
    sql_engine,
):
    store = SqlRunOutputStore(sql_engine)
    store.append([line("sig-aaaaaaaa", 1, 1, "an earlier run of this attempt")])
    writer = OutputWriter(store, lambda: NOW)
    writer.start()
    try:
        run = writer.run(claimed("sig-aaaaaaaa"))
        assert run is not None

        def say(stream: Stream) -> None:
            for n in range(BATCH * 2):
                run.line(stream, f"{stream} {n}")

        threads = [threading.Thread(target=say, args=(s,)) for s in (Stream.STDOUT, Stream.STDERR)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        writer.finish()
        kept = store.after("sig-aaaaaaaa", Cursor(1, 1), limit=10_000)  # read at once: nothing waits behind
    finally:
        writer.close()
    assert [k.sequence for k in kept] == list(range(2, 2 + BATCH * 4))
    for stream in (Stream.STDOUT, Stream.STDERR):
        assert [k.text for k in kept if k.stream is stream] == [f"{stream} {n}" for n in range(BATCH * 2)]


def test_a_run_past_its_bounds_says_so_once_and_keeps_no_more(sql_engine):
    store = SqlRunOutputStore(sql_engine)
    writer = OutputWriter(store, lambda: NOW)
    writer.start()
    try:
        run = writer.run(claimed("sig-aaaaaaaa", attempt=2))
        assert run is not None
        run.stdout("x" * (MAX_LINE + 10))
        for n in range(MAX_RUN_LINES + 50):
            run.stderr(f"line {n}")
        writer.finish()
    finally:
        writer.close()
    kept = store.after("sig-aaaaaaaa", Cursor(), limit=20_000)
    assert kept[0].text == "x" * MAX_LINE + f" ... ({MAX_LINE + 10} characters, cut at {MAX_LINE})"
    assert len(kept) == MAX_RUN_LINES + 1 and {k.attempt for k in kept} == {2}
    assert kept[-2].text == f"line {MAX_RUN_LINES - 2}"
    assert kept[-1].stream is Stream.NOTICE and "reached its bound" in kept[-1].text


def test_a_cursor_is_given_back_as_a_follow_wrote_it():
    assert Cursor.parse("3:14") == Cursor(3, 14) and str(Cursor(3, 14)) == "3:14"
    assert Cursor.parse(None) == Cursor.parse("") == Cursor()
    with pytest.raises(InvalidInput, match="after: must be ATTEMPT:SEQUENCE"):
        Cursor.parse("3-14")


class Outage(SqlRunOutputStore):
    """The real store, whose first `down` writes meet the database away (as a restart or a network cut)."""

    def __init__(self, engine, down: int) -> None:
        super().__init__(engine)
        self.down = down

    def append(self, lines) -> None:
        if self.down:
            self.down -= 1
            raise StoreUnavailable("could not keep a run's output: the database is away")
        super().append(lines)


def test_lines_said_while_the_database_is_away_are_written_once_it_is_back(sql_engine):
    store = Outage(sql_engine, down=2)
    writer = OutputWriter(store, lambda: NOW)
    writer.start()
    try:
        run = writer.run(claimed("sig-aaaaaaaa"))
        assert run is not None
        for n in range(5):
            run.stdout(f"line {n}")
        writer.finish(timeout=60)
    finally:
        writer.close()
    assert store.down == 0
    assert [k.text for k in store.after("sig-aaaaaaaa", Cursor())] == [f"line {n}" for n in range(5)]
