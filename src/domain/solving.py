"""A solve run (seed 004's controller): the decisions a controller answers with, read strictly, and a run's
state folded from its own events (`SolveStarted` ... `SolveSolved` / `SolveStopped`)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from blackboard.domain.errors import InvalidInput
from blackboard.domain.events import (
    SolveDecisionFailed,
    SolveEvent,
    SolveSolved,
    SolveStarted,
    SolveStepEnded,
    SolveStepPosted,
    SolveStopped,
)
from blackboard.domain.signals import SignalType, Topic

Text = Annotated[str, Field(min_length=1)]
FENCED = re.compile(r"```(?:json)?\s*(\{.*?\})\s*```", re.DOTALL)


class _Decision(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class PostStep(_Decision):
    """Post the next signal for this specialist: its topic (a line), what to do (`prompt`), and why."""

    action: Literal["post"]
    agent: Text
    capability: str | None = None  # one of the agent's capabilities; none: its best
    topic: Topic
    prompt: str = ""
    signal_type: SignalType | None = None  # none: the capability's, when it names a type; else INVESTIGATION
    reason: Text


class Solved(_Decision):
    """The problem is solved: the final answer, and why it is one."""

    action: Literal["solved"]
    answer: Text
    reason: Text


Decision = PostStep | Solved
_DECISION: TypeAdapter[Decision] = TypeAdapter(
    Annotated[PostStep | Solved, Field(discriminator="action")]  # type: ignore[arg-type]
)


class BadDecision(InvalidInput):
    """The controller's answer is no decision: what is wrong with it, for the run's record and its next turn."""

    def __init__(self, rule: str) -> None:
        super().__init__("decision", rule)
        self.rule = rule


def read_decision(text: str) -> Decision:
    """The one JSON object the controller answered with (alone, in a ```json fence, or the outermost
    `{...}` of its text), as a decision; BadDecision saying what is wrong otherwise."""
    found = _json_object(text)
    try:
        return _DECISION.validate_python(found)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'decision'}: {e['msg']}" for e in exc.errors()[:5]
        )
        raise BadDecision(
            'must be {"action": "post", "agent", "topic", "reason", ...} or '
            f'{{"action": "solved", "answer", "reason"}}: {problems}'
        ) from None


def _json_object(text: str) -> object:
    candidates = [text.strip()]
    candidates += FENCED.findall(text)
    if "{" in text and "}" in text:
        candidates.append(text[text.index("{") : text.rindex("}") + 1])
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    said = " ".join(text.split())[:200] or "(nothing)"
    raise BadDecision(f"must be one JSON object, got {said!r}")


@dataclass(frozen=True, slots=True)
class Step:
    """One iteration of a run: a posted signal and how it ended, or a failed decision."""

    iteration: int
    reason: str = ""
    agent: str | None = None
    capability: str | None = None
    topic: str | None = None
    signal_id: str | None = None
    status: str | None = None  # the signal's, once it ended
    error: str | None = None  # the failed decision's, or the signal's


@dataclass(frozen=True, slots=True)
class SolveRun:
    """A run as its events tell it: `running`, `solved` or `stopped`."""

    run_id: str
    blackboard_id: str
    problem: str = ""
    problem_key: str = ""
    controller: str = ""
    runner: str = ""
    model: str | None = None
    started_by: str = ""
    max_iterations: int = 0
    specialists: tuple[str, ...] = ()
    without_workers: tuple[str, ...] = ()
    started_workers: tuple[str, ...] = ()
    steps: tuple[Step, ...] = ()
    state: str = "running"
    answer: str | None = None
    answer_key: str | None = None
    reason: str | None = None  # of the answer, or of the stop
    version: int = 0
    cost_usd: float = 0.0  # what the controller's runs cost (where the runner prices them)
    events: tuple[SolveEvent, ...] = field(default=(), repr=False)

    @property
    def iterations(self) -> int:
        """Decisions taken: every step, and the final answer."""
        return len(self.steps) + (1 if self.state == "solved" else 0)


def fold(run_id: str, blackboard_id: str, events: Iterable[SolveEvent]) -> SolveRun:
    run = SolveRun(run_id, blackboard_id)
    for event in events:
        run = _evolve(run, event)
    return run


def _evolve(run: SolveRun, event: SolveEvent) -> SolveRun:
    run = replace(run, version=event.version, events=(*run.events, event))
    usage = getattr(event, "usage", None)
    if usage is not None and usage.cost_usd:
        run = replace(run, cost_usd=run.cost_usd + usage.cost_usd)
    if isinstance(event, SolveStarted):
        return replace(
            run,
            problem=event.problem,
            problem_key=event.problem_key,
            controller=event.controller,
            runner=event.runner,
            model=event.model,
            started_by=event.actor,
            max_iterations=event.max_iterations,
            specialists=event.specialists,
            without_workers=event.without_workers,
            started_workers=event.started_workers,
        )
    if isinstance(event, SolveStepPosted):
        step = Step(
            event.iteration, event.reason, event.agent, event.capability, event.topic, event.signal_id
        )
        return replace(run, steps=(*run.steps, step))
    if isinstance(event, SolveStepEnded):
        steps = tuple(
            replace(s, status=event.status, error=event.error) if s.signal_id == event.signal_id else s
            for s in run.steps
        )
        return replace(run, steps=steps)
    if isinstance(event, SolveDecisionFailed):
        return replace(run, steps=(*run.steps, Step(event.iteration, error=event.error)))
    if isinstance(event, SolveSolved):
        return replace(
            run, state="solved", answer=event.answer, answer_key=event.answer_key, reason=event.reason
        )
    if isinstance(event, SolveStopped):
        return replace(run, state="stopped", reason=event.reason)
    raise TypeError(f"no evolution of a solve run for {type(event).__name__}")
