"""A run's transcript, kept with its signal: one JSON object a line, written as the run goes."""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any


class Transcript:
    """Appends records to the run's transcript file (its folder made first); a record that cannot be
    written is dropped with the rest, never the run's end: losing a transcript must not lose the work."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._lock = threading.Lock()
        try:
            Path(path).parent.mkdir(parents=True, exist_ok=True)
            self._file: Any = open(path, "w", encoding="utf-8")  # noqa: SIM115 - closed by close()
        except OSError:
            self._file = None

    def line(self, text: str) -> None:
        """A line as a runner gave it (Claude Code's stream-json)."""
        with self._lock:
            if self._file is not None:
                try:
                    self._file.write(text.rstrip("\n") + "\n")
                    self._file.flush()
                except OSError:
                    self._file = None

    def record(self, kind: str, **fields: Any) -> None:
        """A record of the model API runners: a request, a response, a tool call, the end."""
        stamp = datetime.now(UTC).isoformat()
        self.line(json.dumps({"type": kind, "at": stamp, **fields}, ensure_ascii=False, default=str))

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None
