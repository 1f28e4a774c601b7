"""Projector.catch_up with nothing to fold reads the log's end before the rows' position, so a commit
landing between the two reads is no page to fold (folding one takes the projection's lock exclusive,
which every command waits for)."""

from __future__ import annotations

from blackboard.application.projection import Projector


class Log:
    def __init__(self, ends: list[int]) -> None:
        self.ends, self.reads = ends, []

    def last_position(self) -> int:
        self.reads.append("end")
        return self.ends.pop(0)

    def read_all(self, after: int = 0, limit: int | None = None):
        self.reads.append(f"after {after}")
        return []


class Rows:
    def __init__(self, log: Log, positions: list[int]) -> None:
        self.log, self.positions, self.applied = log, positions, []

    def position(self) -> int:
        self.log.reads.append("position")
        return self.positions.pop(0)

    def apply(self, records, flat: bool = False) -> None:
        self.applied.append(records)


def test_a_commit_between_the_two_reads_is_no_page_to_fold():
    log = Log([5])
    rows = Rows(log, [6])  # a command committed position 6 (with its rows) after the end was read
    assert Projector(log, rows).catch_up() == 0
    assert log.reads == ["end", "position"] and rows.applied == []


def test_events_without_rows_are_folded():
    log = Log([7, 7])
    rows = Rows(log, [5, 5, 7])
    log.read_all = lambda after=0, limit=None: [] if after >= 7 else ["r6", "r7"]  # type: ignore[method-assign]
    assert Projector(log, rows).catch_up() == 2
    assert rows.applied == [["r6", "r7"]]
