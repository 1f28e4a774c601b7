"""A run's transcript, kept with its signal: one JSON object a line, written as the run goes.

It is bounded, as the run's memory is: past MAX_BYTES only the records that say how the run ended (`result`,
`warning`) are kept, and past MAX_WARNINGS warnings the rest are only counted, each bound said once in it."""

from __future__ import annotations

import itertools
import json
import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from blackboard.infrastructure.interfaces.transcript_lines import NOT_STEPS

logger = logging.getLogger("blackboard.worker")

MAX_BYTES = 256 * 1024 * 1024  # of one run's transcript
MAX_WARNINGS = 100  # warning records of one run; a flood of odd lines is said, not kept line by line
ENDINGS = frozenset({"result", "warning"})  # kept past MAX_BYTES


class Transcript:
    """Appends records to the run's transcript file (its folder made first); a record that cannot be
    written is dropped with the rest, never the run's end: losing a transcript must not lose the work."""

    def __init__(self, path: str, sink: Callable[[str], None] | None = None) -> None:
        """`sink` gets each line too, as it is written (a worker keeps them for followers: worker/output.py)."""
        self.path = path
        self._sink = sink
        self.warnings = 0  # said so far, kept or not
        self._counted = itertools.count(1)  # the readers' threads and the run's say warnings at once
        self._written = 0
        self._full = False
        self._lock = threading.Lock()
        try:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            self._file: Any = open(path, "w", encoding="utf-8", errors="replace")  # noqa: SIM115 - closed by close()
        except OSError:
            self._file = None

    def line(self, text: str, ending: bool = False, step: bool = True) -> None:
        """A line as a runner gave it (Claude Code's stream-json); past MAX_BYTES, only an `ending` one. The
        sink gets it when it is a `step` of the run."""
        text = text.rstrip("\n") + "\n"
        if self._sink is not None and step:
            try:
                self._sink(text)
            except Exception:  # noqa: BLE001 - a follower's copy must never cost the run
                pass
        size = len(text.encode("utf-8", errors="replace"))
        with self._lock:
            if self._file is None:
                return
            if not ending and self._written + size > MAX_BYTES:
                if not self._full:
                    self._full = True
                    said = f"the transcript reached {MAX_BYTES} bytes: later lines of the run are not kept"
                    self._write(_stamped("warning", warning=said) + "\n", 0)
                return
            self._write(text, size)

    def record(self, kind: str, **fields: Any) -> None:
        """A record of the model API runners: a request, a response, a tool call, the end; a record that is no
        step (NOT_STEPS: a message of the conversation, kept for a later attempt) is not given to the sink."""
        self.line(_stamped(kind, **fields), ending=kind in ENDINGS, step=kind not in NOT_STEPS)

    def warning(self, text: str) -> None:
        """Something of the run that was not as it should be and was passed over: a line that could not be
        read, a figure that made no sense. Logged too, as the first MAX_WARNINGS are kept."""
        self.warnings = n = next(self._counted)
        if n <= MAX_WARNINGS:
            logger.warning("%s: %s", Path(self.path).stem, text)
            self.record("warning", warning=text)
        elif n == MAX_WARNINGS + 1:
            self.record("warning", warning=f"more than {MAX_WARNINGS} warnings: the rest are not kept")

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None

    def _write(self, text: str, size: int) -> None:
        try:
            self._file.write(text)
            self._file.flush()
            self._written += size
        except (OSError, ValueError):
            self._file = None


def _stamped(kind: str, **fields: Any) -> str:
    stamp = datetime.now(UTC).isoformat()
    return json.dumps({"type": kind, "at": stamp, **fields}, ensure_ascii=False, default=str)
