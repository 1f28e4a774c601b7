"""The output of the worker's runs, kept in the board's database as it comes, for followers on any host.

Each run gets a `RunOutput` (`OutputWriter.run`): its lines (a runner's transcript records, a command
handler's stdout and stderr) are numbered and held to the run's bounds there (application/output.py), then
queued; one thread of the worker writes what is queued in batches, every FLUSH_EVERY seconds or BATCH lines,
so a run that prints a token a line costs a transaction per batch, not per line. Before a run's outcome is
recorded, `finish` writes what it still has queued, so a follower that sees the outcome has seen every
line before it. A database outage keeps the lines queued (up to MAX_QUEUED, then the oldest are let go, said
in the log): losing output must never lose the work.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from datetime import datetime

from blackboard.application.output import (
    MAX_RUN_CHARACTERS,
    MAX_RUN_LINES,
    OUTPUT_KEPT,
    OutputLine,
    RunOutputStore,
    Stream,
    bounded,
)
from blackboard.application.ports import StoreUnavailable
from blackboard.domain.signals import AgentSignal

logger = logging.getLogger("blackboard.worker")

FLUSH_EVERY = 0.2  # seconds a line waits at most before it is written
BATCH = 200  # lines that are written at once without waiting for FLUSH_EVERY
MAX_QUEUED = 50_000  # lines held while the database is down; past it the oldest are let go
FINISH_WAIT = 10.0  # seconds a run's end waits for its lines to be written before its outcome goes on
RETRY = 1.0  # seconds between writes while the database is down


class RunOutput:
    """One run's lines: numbered from where its attempt's kept lines end, within the run's bounds."""

    def __init__(self, writer: OutputWriter, claimed: AgentSignal, first: int) -> None:
        self._writer = writer
        self._signal_id, self._attempt = claimed.signal_id, claimed.attempt
        self._sequence = first
        self._lines = 0
        self._characters = 0
        self._full = False
        self._lock = threading.Lock()  # a handler's stdout and stderr readers say lines at once

    def line(self, stream: Stream, text: str) -> None:
        """A line of the run's output as it comes; past the run's bounds, one notice and then nothing."""
        text = bounded(text.rstrip("\n"))
        with self._lock:
            if self._full:
                return
            if self._lines >= MAX_RUN_LINES or self._characters + len(text) > MAX_RUN_CHARACTERS:
                self._full = True
                stream = Stream.NOTICE
                text = (
                    f"the run's output reached its bound ({MAX_RUN_LINES} lines or {MAX_RUN_CHARACTERS} "
                    "characters): the rest is not kept here (a runner's transcript file keeps it)"
                )
            self._lines += 1
            self._characters += len(text)
            self._sequence += 1
            line = OutputLine(
                self._signal_id, self._attempt, self._sequence, self._writer.now(), stream, text
            )
        self._writer.queue(line)

    def transcript(self, text: str) -> None:
        self.line(Stream.TRANSCRIPT, text)

    def stdout(self, text: str) -> None:
        self.line(Stream.STDOUT, text)

    def stderr(self, text: str) -> None:
        self.line(Stream.STDERR, text)


class OutputWriter:
    """The worker's one writer of run output (no store: runs keep no output, and nothing is started)."""

    def __init__(self, store: RunOutputStore | None, now: Callable[[], datetime]) -> None:
        self._store = store
        self.now = now
        self._queued: deque[OutputLine] = deque()
        self._taken = 0  # lines ever queued
        self._done = 0  # lines written or let go
        self._dropped = 0  # lines let go while the database was away
        self._changed = threading.Condition()
        self._closing = False
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._store is None:
            return
        try:
            self._store.forget(self.now() - OUTPUT_KEPT)
        except StoreUnavailable as down:
            logger.warning("could not drop old run output (%s)", down)
        self._thread = threading.Thread(target=self._write, name="output", daemon=True)
        self._thread.start()

    def run(self, claimed: AgentSignal) -> RunOutput | None:
        """The output of a run of `claimed` (its attempt), or None when this worker keeps none."""
        if self._store is None:
            return None
        try:
            first = self._store.last(claimed.signal_id, claimed.attempt)
        except StoreUnavailable as down:
            logger.warning("%s: its output is not kept (%s)", claimed.signal_id, down)
            return None
        return RunOutput(self, claimed, first)

    def queue(self, line: OutputLine) -> None:
        with self._changed:
            if self._thread is None:  # not started (or closed): nothing writes it
                return
            self._queued.append(line)
            self._taken += 1
            if len(self._queued) > MAX_QUEUED:
                self._queued.popleft()
                self._done += 1
                self._dropped += 1
                if self._dropped % 10_000 == 1:  # said once, and again every 10,000 lines let go
                    logger.warning(
                        "run output queued past %d lines (the database is away): %d oldest let go",
                        MAX_QUEUED,
                        self._dropped,
                    )
            if len(self._queued) in (1, BATCH):  # the writer starts its wait, or writes now
                self._changed.notify_all()

    def finish(self, timeout: float = FINISH_WAIT) -> None:
        """Until every line queued so far is written (or `timeout` seconds pass): a run's end, before its
        outcome is recorded."""
        with self._changed:
            if self._thread is None:
                return
            target = self._taken
            self._changed.notify_all()
            self._changed.wait_for(lambda: self._done >= target, timeout)

    def close(self) -> None:
        with self._changed:
            self._closing = True
            self._changed.notify_all()
        if self._thread is not None:
            self._thread.join(FINISH_WAIT)
            self._thread = None

    def _write(self) -> None:
        assert self._store is not None
        while True:
            with self._changed:
                while not self._queued and not self._closing:
                    self._changed.wait()
                if not self._queued:
                    return  # closing, and everything written
                if len(self._queued) < BATCH and not self._closing:
                    # more may come: one batch for them (BATCH lines, or a run's end, wake it sooner)
                    self._changed.wait(FLUSH_EVERY)
                batch = [self._queued.popleft() for _ in range(min(len(self._queued), BATCH * 10))]
            if not self._kept(batch):
                with self._changed:
                    self._queued.extendleft(reversed(batch))
                    if self._closing:
                        return
                threading.Event().wait(RETRY)
                continue
            with self._changed:
                self._done += len(batch)
                self._changed.notify_all()

    def _kept(self, batch: list[OutputLine]) -> bool:
        """Whether the batch is done with: written, or refused for good (said in the log). False: the
        database is away, try again."""
        assert self._store is not None
        try:
            self._store.append(batch)
        except StoreUnavailable as down:
            logger.warning("could not keep run output (%s); will try again", down)
            return False
        except Exception as exc:  # noqa: BLE001 - output lost must never stop the worker
            logger.warning("could not keep %d line(s) of run output (%s): dropped", len(batch), exc)
        return True
