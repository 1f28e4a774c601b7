"""A command handler's three pipes, served while it runs: the signal document written to its standard input,
its standard output kept whole (its result), its standard error read a line at a time and each line handed on
as it comes (the worker logs it then, with its own time), the end of it kept for a failure's error.

Each pipe has a thread of its own, so a handler that fills one pipe while the worker reads another never
blocks, and a line of standard error is logged when it is written, not when the handler ends: a long run's
progress shows as it goes, and so do the lines of a run that is stopped (cancelled, timed out) before its end.
A line is read up to MAX_LOGGED_LINE bytes (runners/lines.py): a handler that writes megabytes without an end
of line costs that bound and no more.
"""

from __future__ import annotations

import io
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator

from blackboard.infrastructure.runners.lines import lines

MAX_LOGGED_LINE = (
    16 * 1024
)  # bytes of one stderr line handed on; the rest of a longer one is counted, not kept
STDERR_TAIL = 2000  # characters of stderr (or of an exception's message) kept as a failure's error


class Streams:
    """The pipes of `process` (started with stdin, stdout and stderr as binary pipes), served by threads from
    construction on. `on_stderr` gets each stderr line (its end of line taken off) as it arrives."""

    def __init__(
        self,
        process: subprocess.Popen[bytes],
        document: str,
        on_stderr: Callable[[str], None] | None,
        on_stdout: Callable[[str], None] | None = None,
    ) -> None:
        """`on_stdout` gets each line of standard output as it arrives too (kept whole all the same)."""
        self._process = process
        self._on_stderr = on_stderr
        self._on_stdout = on_stdout
        self._out = ""
        self._err: deque[str] = deque()
        self._err_size = 0
        self._err_lock = threading.Lock()  # the reader appends while a stopped run's tail is taken
        self._threads = [
            threading.Thread(target=self._write, args=(document.encode("utf-8"),), daemon=True),
            threading.Thread(target=self._read_out, daemon=True),
            threading.Thread(target=self._read_err, daemon=True),
        ]
        for thread in self._threads:
            thread.start()

    def wait(self, seconds: float) -> bool:
        """True once both outputs reached their end and the process ended; waits up to `seconds` for it."""
        deadline = time.monotonic() + seconds
        for thread in self._threads[1:]:
            thread.join(max(0.0, deadline - time.monotonic()))
            if thread.is_alive():
                return False
        return True

    @property
    def stdout(self) -> str:
        """Everything the handler wrote to standard output (once `wait` said it ended)."""
        return self._out

    def tail(self) -> str:
        """The end of standard error, at most STDERR_TAIL characters, stripped."""
        with self._err_lock:
            return "\n".join(self._err).strip()[-STDERR_TAIL:]

    def _write(self, data: bytes) -> None:
        stdin = self._process.stdin
        assert stdin is not None
        try:
            stdin.write(data)
        except (BrokenPipeError, OSError, ValueError):  # a handler that ended (or closed it) before reading
            pass
        finally:
            try:
                stdin.close()
            except (BrokenPipeError, OSError):
                pass

    def _read_out(self) -> None:
        stdout = self._process.stdout
        assert stdout is not None
        # as text=True read it: UTF-8, anything else U+FFFD (never a dead thread), universal newlines
        with io.TextIOWrapper(stdout, encoding="utf-8", errors="replace") as text:
            try:
                if self._on_stdout is None:
                    self._out = text.read()
                else:
                    self._out = "".join(self._handed(text))
            except (OSError, ValueError):  # closed under the reader
                pass
        self._process.wait()  # its end, as this thread's (a blocking wait returns at once; a timed one polls)

    def _handed(self, text: io.TextIOWrapper) -> Iterator[str]:
        """Standard output a line at a time, each handed on (within MAX_LOGGED_LINE) as it comes."""
        assert self._on_stdout is not None
        for line in text:
            yield line
            try:
                self._on_stdout(line.rstrip("\n").removesuffix("\r")[:MAX_LOGGED_LINE])
            except Exception:  # noqa: BLE001 - a follower's copy must not stop the pipe being drained
                pass

    def _read_err(self) -> None:
        stderr = self._process.stderr
        assert stderr is not None
        for line in lines(stderr, MAX_LOGGED_LINE):
            said = line.kept().removesuffix("\r")
            self._keep(said)
            if self._on_stderr is not None:
                try:
                    self._on_stderr(said)
                except Exception:  # noqa: BLE001 - a log that fails must not stop the pipe being drained
                    pass

    def _keep(self, said: str) -> None:
        """The last lines, as many as make up STDERR_TAIL characters (one line past it, cut by `tail`)."""
        with self._err_lock:
            self._err.append(said)
            self._err_size += len(said) + 1
            while len(self._err) > 1 and self._err_size - len(self._err[0]) - 1 >= STDERR_TAIL:
                self._err_size -= len(self._err.popleft()) + 1
