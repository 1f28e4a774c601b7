"""What the controller of a solve run reads each iteration: the problem, the run so far, the board's summary and
entries, the specialists it may pick (with which have a live worker), and how to answer; and, once its
iterations are spent without an answer, the same board with the one question left: its best answer."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from blackboard.domain.solve.run import SolveRun

ENTRIES_SHOWN = 60  # the most recently written entries; older ones are counted, not shown
VALUE_SHOWN = 1500  # characters of an entry's value

HOW_TO_ANSWER = "\n".join(
    (
        "Answer with exactly one JSON object and nothing else, one of:",
        '{"action": "post", "agent": "<a specialist\'s name>", "capability": "<one of its capabilities>", '
        '"topic": "<one line, at most 200 characters>", "prompt": "<what it should do, in full>", '
        '"reason": "<why this specialist, now>"}',
        '{"action": "solved", "answer": "<the final answer to the problem, complete>", '
        '"reason": "<why the board\'s entries support it>"}',
        'Pick "post" while work is missing; the run waits for that specialist\'s signal to end, then asks you '
        'again. Pick "solved" once the entries answer the problem. Iterations are bounded: do not repeat a '
        "step that already gave its result.",
    )
)


AT_THE_LIMIT = "\n".join(
    (
        "No step can be posted any more. Answer with exactly one JSON object and nothing else:",
        '{"action": "solved", "answer": "<the best answer to the problem that the board\'s entries support, '
        'complete>", "reason": "<what supports it, and what remains uncertain>"}',
        "It is recorded as the run's answer, marked as given at the iteration limit.",
    )
)


def controller_prompt(
    run: SolveRun,
    summary: Any,  # BoardSummary
    entries: Sequence[Any],  # Entry
    specialists: Sequence[Any],  # Specialist
    last_error: str | None,
    signals: Mapping[str, Any] | None = None,  # the steps' signals as they stand (AgentSignal)
    at_limit: bool = False,  # the iterations are spent: the one question left is the best answer
) -> str:
    if at_limit:
        head = (
            f"You are the controller of solve run {run.run_id} on blackboard {run.blackboard_id}: its "
            f"{run.max_iterations} iterations are spent without an answer. This is your last turn: give the "
            "best answer to the problem from what is known."
        )
    else:
        head = (
            f"You are the controller of solve run {run.run_id} on blackboard {run.blackboard_id}: "
            f"iteration {run.iterations + 1} of at most {run.max_iterations}."
        )
    parts = [head, f"The problem:\n{run.problem}"]
    if not at_limit:
        parts.append("The specialists you may pick:\n" + "\n".join(_specialist(s) for s in specialists))
    parts += [
        "The run so far:\n"
        + ("\n".join(_step(s, (signals or {}).get(s.signal_id)) for s in run.steps) or "(nothing yet)"),
        "The board's summary:\n" + _summary(summary),
        _entries(entries),
    ]
    if last_error:
        parts.append(f"Your previous answer was refused: {last_error}\nAnswer again, as below.")
    parts.append(AT_THE_LIMIT if at_limit else HOW_TO_ANSWER)
    return "\n\n".join(parts)


def _specialist(s: Any) -> str:
    capabilities = ", ".join(f"{c} ({score:.2f})" for c, score in s.capabilities)
    worker = "a worker is live" if s.live else "no live worker"
    runnable = "" if s.runnable else ", not runnable here"
    return f"- {s.name}: {s.description or '(no description)'} [capabilities: {capabilities}; {worker}{runnable}]"


def _step(step: Any, signal: Any) -> str:
    if step.signal_id is None:
        return f"{step.iteration}. refused decision: {step.error}"
    ended = step.status or "still open"
    error = f" ({step.error})" if step.error else ""
    line = (
        f"{step.iteration}. posted {step.signal_id} for {step.agent} ({step.capability}): {step.topic!r}, "
        f"because {step.reason}; {ended}{error}"
    )
    result = signal.result if signal is not None else None
    if signal is not None and signal.claimed_by:
        line += f", by {signal.claimed_by}"
    if result is not None and result.artifact_path:
        line += f"\n   artifact: {result.artifact_path}"
    for item in (result.knowledge_items if result is not None else ())[:10]:
        line += f"\n   result: {_cut(item)}"
    return line


def _cut(text: str) -> str:
    if len(text) <= VALUE_SHOWN:
        return text
    return text[:VALUE_SHOWN] + f" ... ({len(text) - VALUE_SHOWN} more characters)"


def _summary(summary: Any) -> str:
    counts = summary.entries
    lines = [
        "signals by status: " + (json.dumps(summary.signals_by_status, sort_keys=True) or "{}"),
        "entries by type: " + json.dumps(counts.by_type, sort_keys=True),
        "entries by author: " + json.dumps(counts.by_author, sort_keys=True),
    ]
    if counts.in_conflict:
        lines.append("keys in conflict: " + ", ".join(counts.in_conflict))
    return "\n".join(lines)


def _entries(entries: Sequence[Any]) -> str:
    latest = sorted(entries, key=lambda e: e.current.position, reverse=True)[:ENTRIES_SHOWN]
    if not latest:
        return "The board's entries: none yet."
    lines = [f"The board's entries, latest first ({len(latest)} of {len(entries)}):"]
    for e in latest:
        v = e.current
        value = v.value if isinstance(v.value, str) else json.dumps(v.value, ensure_ascii=False)
        if len(value) > VALUE_SHOWN:
            value = value[:VALUE_SHOWN] + f" ... ({len(value) - VALUE_SHOWN} more characters)"
        by = f"{v.author}" + (f", signal {v.signal_id}" if v.signal_id else "")
        lines.append(f"- {e.key} ({v.entry_type}, by {by}): {value}")
    return "\n".join(lines)
