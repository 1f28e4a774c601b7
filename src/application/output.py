"""A run's output as it comes: the lines a worker keeps in the board's database while it runs a signal (a
runner's transcript records, a command handler's stdout and stderr), so `show --follow` and the other
followers read them from any host (docs/persistence.md, "Run output").

Not events: events are facts about the board, and this is bulky output, bounded per run and dropped after
a while (`OUTPUT_KEPT`). Each run's lines are numbered by its worker (`sequence`, from 1) under the
signal's `attempt`, and a follower reads them in that order after a `Cursor`.
"""

from __future__ import annotations

import abc
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum

from blackboard.domain.errors import InvalidInput

MAX_LINE = 16 * 1024  # characters of one line kept; a longer one is cut, and says so
MAX_RUN_LINES = (
    10_000  # lines of one run (an attempt) kept; past it one NOTICE says so, the rest are not kept
)
MAX_RUN_CHARACTERS = 4 * 1024 * 1024  # characters of one run's lines kept, the same way
OUTPUT_KEPT = timedelta(days=7)  # lines older than this are dropped when a worker starts
PAGE = 500  # lines a follower reads at a time


class Stream(StrEnum):
    TRANSCRIPT = "transcript"  # a runner's transcript record (JSON), as its transcript file holds it
    STDOUT = "stdout"  # a command handler's standard output, a line at a time
    STDERR = "stderr"  # its standard error
    NOTICE = "notice"  # the worker's own word about the output: a bound reached


@dataclass(frozen=True, slots=True)
class OutputLine:
    signal_id: str
    attempt: int
    sequence: int  # from 1 in its attempt, in the order the worker got them
    at: datetime
    stream: Stream
    text: str

    @property
    def cursor(self) -> Cursor:
        return Cursor(self.attempt, self.sequence)


CURSOR = re.compile(r"(\d{1,9}):(\d{1,9})")


@dataclass(frozen=True, slots=True, order=True)
class Cursor:
    """Where a follower is: after this attempt's line `sequence` (`0:0`, the start: before every line).
    Written `ATTEMPT:SEQUENCE`, as the documents give it back."""

    attempt: int = 0
    sequence: int = 0

    def __str__(self) -> str:
        return f"{self.attempt}:{self.sequence}"

    @classmethod
    def parse(cls, text: str | None, field: str = "after") -> Cursor:
        """A cursor as a follower gives it back (None or empty: the start); InvalidInput naming `field`."""
        if not text:
            return cls()
        found = CURSOR.fullmatch(text.strip())
        if found is None:
            raise InvalidInput(
                field, f"must be ATTEMPT:SEQUENCE as a follow gave it (e.g. 1:42), got {text!r}"
            )
        return cls(int(found[1]), int(found[2]))


class RunOutputStore(abc.ABC):
    """Where runs' output lines are kept. Writes are batches of lines of runs this worker runs, in a
    transaction of their own, never a board's."""

    @abc.abstractmethod
    def append(self, lines: Sequence[OutputLine]) -> None:
        """Keep the lines (each (signal, attempt, sequence) once). Raises StoreUnavailable when the store
        cannot be reached."""

    @abc.abstractmethod
    def after(self, signal_id: str, cursor: Cursor, limit: int = PAGE) -> list[OutputLine]:
        """The signal's lines after `cursor`, in (attempt, sequence) order, at most `limit`."""

    @abc.abstractmethod
    def last(self, signal_id: str, attempt: int) -> int:
        """The highest sequence kept of that attempt (0: none): where a run of it numbers on from."""

    @abc.abstractmethod
    def forget(self, before: datetime) -> int:
        """Drop the lines written before `before`; how many."""


def bounded(text: str) -> str:
    """A line within MAX_LINE characters (a longer one cut, saying how long it was)."""
    if len(text) <= MAX_LINE:
        return text
    return f"{text[:MAX_LINE]} ... ({len(text)} characters, cut at {MAX_LINE})"
