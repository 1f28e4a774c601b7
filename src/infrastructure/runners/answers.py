"""A model API's answer as the API runners use it, read by the runner itself from what the API sent (the
Messages API's stream of events, a Chat Completion's body) rather than trusted to the SDK's typed models: an
odd field, an unknown block, a missing usage is a warning in the run's transcript, never an exception of the
SDK's; an answer with nothing the run can use is `Unreadable`, a failure said in the board's words."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from blackboard.infrastructure.runners.reported import shown

SOURCE = "the model API's answer"


class Unreadable(Exception):
    """The answer holds nothing the run can go on with: its message is the run's failure."""


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call: its arguments as the model gave them, or None with why they could not be read."""

    id: str
    name: str
    arguments: dict[str, Any] | None
    unreadable: str | None = None


@dataclass
class Answer:
    """One answer: its text, its tool calls, why it stopped, its usage (uncached input, output, cache write,
    cache read), `sent` as the API sent it (for the transcript) and `kept` as the next request gives it back."""

    text: str = ""
    calls: list[ToolCall] = field(default_factory=list)
    stop: Any = None
    usage: tuple[int, int, int, int] = (0, 0, 0, 0)
    sent: Any = None
    kept: Any = None
    refusal: str | None = None  # the model's own words refusing, where the API has a field for them


@dataclass(frozen=True, slots=True)
class StopReasons:
    """An API's words for why an answer ended: as it should, cut short, or refused."""

    name: str  # the field: stop_reason, finish_reason
    ended: frozenset[str]
    cut: frozenset[str]
    refused: frozenset[str]


def judged(
    answer: Answer, reasons: StopReasons, warn: Callable[[str], None], limit: int | None = None
) -> str | None:
    """Why the run must fail for how the answer ended (the model refused), or None; a cut or unknown end is a
    warning, and the answer is taken as it is."""
    stop = answer.stop if isinstance(answer.stop, str) or answer.stop is None else shown(answer.stop)
    if answer.refusal is not None or stop in reasons.refused:
        why = " ".join((answer.refusal or answer.text).split())[:500]
        return f"the model refused to answer ({reasons.name} {stop})" + (f": {why}" if why else "")
    if stop in reasons.cut:
        bound = f" ({limit} tokens at most)" if limit else ""
        warn(f"{SOURCE} ended at {reasons.name} {stop}{bound}: it may be cut short")
    elif stop not in reasons.ended:
        warn(f"{SOURCE} ended with {reasons.name} {stop}, which the runner does not know: taken as it is")
    return None


def plain(item: Any) -> Any:
    """An SDK object as the JSON it was made from (its fields as sent, odd ones included); anything else as
    it is."""
    to_dict = getattr(item, "to_dict", None)
    if callable(to_dict):
        return to_dict(warnings=False)
    return item
