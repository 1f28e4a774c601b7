"""Claude Code's output, read as it comes: each `stream-json` line of its standard output kept in the run's
transcript, its init's session and model, its streamed answers' usage, its result; the last lines of its
standard error. And, at the end, the run's usage from them.

Nothing Claude Code prints stops the reading, so its pipes never fill and it never blocks on them: a line
that is not JSON, not an object, or not of the shape its type should have is kept in the transcript, said
in a warning after it, and skipped; a line over `lines.MAX_LINE` bytes keeps its start. The result's
figures are read by `reported.Reading`: odd ones count as unknown, with a warning.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import threading
from collections import deque
from collections.abc import Callable
from typing import Any, BinaryIO

from blackboard.infrastructure.runners.lines import MAX_LINE, lines
from blackboard.infrastructure.runners.reported import MAX_NAME, Reading, shown
from blackboard.infrastructure.runners.transcript import Transcript
from blackboard.infrastructure.runners.usage import Tally

STDERR_LINES = 40  # of Claude Code's standard error kept for a failure's message
STDERR_LINE = 2000  # bytes of one of them kept
INPUTS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


class ClaudeOutput:
    """What one run printed, as far as it has been read. `read` and `read_stderr` run on threads of their
    own; `count` at the end, on the run's."""

    def __init__(self, transcript: Transcript, tally: Tally) -> None:
        self.transcript = transcript
        self.tally = tally
        self.result: dict[str, Any] | None = None
        # the results before the last: a nudge taken as it wrote its answer is answered in a turn more, whose
        # result counts that turn's tokens and turns alone (its cost is the session's so far)
        self.earlier: list[dict[str, Any]] = []
        self.cut_lines = 0  # lines over MAX_LINE bytes: one of them may have been the result
        self.stderr: deque[str] = deque(maxlen=STDERR_LINES)
        # assistant message id (a digest of a long one) -> its usage's counts, as streamed so far
        self._answers: dict[str | bytes, tuple[int, int, int, int]] = {}
        self._lock = threading.Lock()
        self.progressed: Callable[[], None] = lambda: None  # the run's control's: each line is progress

    def read(self, stream: BinaryIO) -> None:
        """Standard output, to its end. Never raises: the reader outlives anything a line holds."""
        for number, line in enumerate(lines(stream), start=1):
            self.progressed()
            try:
                self.transcript.line(line.kept())
                if line.cut:
                    self.cut_lines += 1
                    self._skip(number, f"is {line.size} bytes long, over the {MAX_LINE} a line may have")
                elif line.text.strip():
                    self._take(number, line.text)
            except Exception as exc:  # noqa: BLE001 - the reading goes on, whatever a line held
                self._skip(number, f"could not be read ({type(exc).__name__}: {str(exc)[:200]})")

    def read_stderr(self, stream: BinaryIO) -> None:
        """Standard error, to its end: its last lines kept, each cut to STDERR_LINE bytes."""
        for line in lines(stream, STDERR_LINE):
            self.progressed()
            self.stderr.append(line.text)

    def said_on_stderr(self) -> str:
        return " | ".join(line.strip() for line in list(self.stderr) if line.strip()) or "(no stderr)"

    def _take(self, number: int, text: str) -> None:
        try:
            message = json.loads(text)
        except (ValueError, RecursionError):  # not JSON, or nested past what the parser takes
            self._skip(number, "is not JSON")
            return
        if not isinstance(message, dict):
            self._skip(number, f"is {shown(message)}, not a JSON object")
            return
        kind = message.get("type")
        if kind == "system" and message.get("subtype") == "init":
            read = Reading(f"line {number} of Claude Code's output (its init)", self.transcript.warning)
            self.tally.session_id = (
                read.name(message.get("session_id"), "session_id") or self.tally.session_id
            )
            self.tally.model = read.name(message.get("model"), "model") or self.tally.model
        elif kind == "assistant":
            said = message.get("message")
            if not isinstance(said, dict):
                self._skip(number, f"is an assistant line whose message is {shown(said)}, not an object")
            elif isinstance(said.get("id"), str) and "usage" in said:
                counts = self._counts(number, said["usage"])
                with self._lock:
                    self._answers[_key(said["id"])] = counts
        elif kind == "result":
            if self.result is not None:
                self.earlier.append(self.result)
            self.result = _bounded(message)

    def _skip(self, number: int, why: str) -> None:
        self.transcript.warning(f"line {number} of Claude Code's output {why}: skipped")

    def count(self) -> None:
        """The run's usage into the tally: the result's when there is one (Claude Code's own count and
        cost), else what the streamed answers said so far (a stopped run), priced from the table."""
        tally, warn = self.tally, self.transcript.warning
        if self.result is not None:
            read = Reading("Claude Code's result", warn)
            for result in (*self.earlier, self.result):  # each counts its own turns' tokens
                usage = read.mapping(result.get("usage"), "usage", required=True)
                tally.input_tokens += sum(
                    read.count(usage.get(k), f"usage.{k}", required=k == "input_tokens") for k in INPUTS
                )
                tally.output_tokens += read.count(usage.get("output_tokens"), "usage.output_tokens", True)
                tally.turns += read.count(result.get("num_turns"), "num_turns", required=True)
            tally.reported_cost = read.dollars(self.result.get("total_cost_usd"), "total_cost_usd")
            tally.session_id = read.name(self.result.get("session_id"), "session_id") or tally.session_id
            models = list(read.mapping(self.result.get("modelUsage"), "modelUsage"))
            if len(models) == 1:
                tally.model = read.name(models[0], "modelUsage's model") or tally.model
            return
        tally.priced()
        with self._lock:
            answers = list(self._answers.values())
        for fresh, written, cached, output in answers:
            tally.add(fresh, output, written, cached)

    def _counts(self, number: int, given: Any) -> tuple[int, int, int, int]:
        """An answer's usage as streamed, read as it comes: its four counts (input, cache writes, cache reads,
        output), never the object itself, which may hold anything (a run's memory stays bounded)."""
        read = Reading(f"line {number} of Claude Code's output (an answer's usage)", self.transcript.warning)
        usage = read.mapping(given, "usage")
        fresh, written, cached = (read.count(usage.get(k), f"usage.{k}") for k in INPUTS)
        return fresh, written, cached, read.count(usage.get("output_tokens"), "usage.output_tokens")


def _bounded(result: dict[str, Any]) -> dict[str, Any]:
    """The result as the run keeps it: its `usage` with the counts read alone, its `modelUsage` with no more
    than the two first models' names (`count` asks whether there is exactly one), whatever else they held."""
    kept = dict(result)
    if isinstance(usage := result.get("usage"), dict):
        kept["usage"] = {k: usage[k] for k in (*INPUTS, "output_tokens") if k in usage}
    if isinstance(models := result.get("modelUsage"), dict):
        kept["modelUsage"] = dict.fromkeys(itertools.islice(models, 2))
    return kept


def _key(message_id: str) -> str | bytes:
    """An answer's id as the tally keys it: as it is, or a digest of one over MAX_NAME characters."""
    if len(message_id) <= MAX_NAME:
        return message_id
    return hashlib.sha256(message_id.encode("utf-8", "surrogatepass")).digest()
