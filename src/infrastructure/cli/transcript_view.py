"""`show SIG --transcript`: the transcript a runner kept of its run of the signal, one line per step.

The file is the one the signal's usage links (`usage.transcript_path`): Claude Code's stream-json lines for
claude-code, the blackboard's own records for the model API runners. `--json` prints its records as they are.
"""

from __future__ import annotations

from pathlib import Path

from blackboard.domain.errors import NotFound
from blackboard.domain.signals import AgentSignal
from blackboard.infrastructure.cli import terminal_safe
from blackboard.infrastructure.cli.signal_text import Output
from blackboard.infrastructure.interfaces.transcript_lines import is_step, readable, record


class NoTranscript(NotFound):
    def __init__(self, signal_id: str, why: str) -> None:
        super().__init__(f"{signal_id} has no transcript: {why}")


def transcript(signal: AgentSignal) -> Output:
    path = signal.usage.transcript_path if signal.usage else None
    if path is None:
        raise NoTranscript(signal.signal_id, "no runner's run of it kept one")
    try:
        lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as exc:
        raise NoTranscript(signal.signal_id, f"{path} cannot be read ({exc.strerror or exc})") from None
    records = [record(line) for line in lines if line.strip()]
    text = [f"transcript of {signal.signal_id} ({signal.usage.runner if signal.usage else ''}): {path}"]
    text += [terminal_safe(f"  {readable(line)}") for line in lines if line.strip() and is_step(line)]
    return Output(records, "\n".join(text))
