"""A solve run (seed 004's controller): the decisions a controller answers with, read strictly, and a run's
state folded from its own events (`SolveStarted` ... `SolveSolved` / `SolveStopped`, after a `SolveSynthesized`
at the iteration limit), `orphaned` when it is still running by its events but the process that drove it is
gone."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from blackboard.domain.errors import InvalidInput
from blackboard.domain.events import (
    SolveDecisionFailed,
    SolveEvent,
    SolveResumed,
    SolveSolved,
    SolveStarted,
    SolveStepEnded,
    SolveStepPosted,
    SolveStopped,
    SolveSynthesized,
)
from blackboard.domain.presence import SolveProcess
from blackboard.domain.signals import SignalType, Topic

Text = Annotated[str, Field(min_length=1)]
# characters of a controller's answer that are read as a decision (its final answer becomes an entry: 1 MiB)
MAX_ANSWER = 1 << 20
SAID = 200  # characters of a refused answer repeated in the refusal


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
    return decision_of(answer_object(text))


def decision_of(found: object) -> Decision:
    """The decision a JSON object (as `answer_object` found it) makes; BadDecision saying what is wrong."""
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


def answer_object(text: str) -> dict[str, object]:
    """The one JSON object of the answer, whatever the answer is: an answer longer than MAX_ANSWER, nested
    deeper than a JSON reader follows, or holding no object is a BadDecision (never the reader's error).
    Linear in the answer's length: fences are found by splitting, never by a backtracking pattern."""
    if len(text) > MAX_ANSWER:
        raise BadDecision(
            f"must be at most {MAX_ANSWER} characters, got {len(text)}: {_said(text)} ... (cut)"
        )
    candidates = [text.strip(), *_fenced(text)]
    if "{" in text and "}" in text:
        candidates.append(text[text.index("{") : text.rindex("}") + 1])
    too_deep = False
    for candidate in candidates:
        try:
            value = json.loads(candidate)
        except RecursionError:  # the reader's own bound on nesting: no decision nests that deep
            too_deep = True
            continue
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    if too_deep:
        raise BadDecision(
            f"must be one JSON object of a few fields, got one nested too deep to read: {_said(text)}"
        )
    raise BadDecision(f"must be one JSON object, got {_said(text)}")


def _fenced(text: str) -> list[str]:
    """What each ``` fence of the text holds that starts like an object (```json fences too)."""
    blocks = text.split("```")[1::2]  # between an opening fence and its closing one
    found = []
    for block in blocks:
        inner = block[4:] if block[:4].lower() == "json" else block
        if (inner := inner.strip()).startswith("{"):
            found.append(inner)
    return found


def _said(text: str) -> str:
    """The start of what was answered, on one line, as a repr: NUL and a lone surrogate come out escaped."""
    return repr(" ".join(text[: SAID * 4].split())[:SAID] or "(nothing)")


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
    """A run as its events tell it: `running`, `solved` or `stopped` (and, as `with_process` tells it now,
    `orphaned`: running, its process gone)."""

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
    synthesis: bool = True  # at the iteration limit, the controller is asked once for its best answer
    synthesized: bool = False  # the answer is that best answer (the run stopped at its limit)
    version: int = 0
    cost_usd: float = 0.0  # what the controller's runs cost (where the runner prices them)
    # what a resume continues with (SolveStarted, then each SolveResumed)
    controller_ref: str | None = None
    step_timeout: float | None = None
    start_workers: bool = False
    workdir: str | None = None
    permission_mode: str | None = None
    allowed_tools: tuple[str, ...] = ()
    resumes: int = 0
    process: str | None = None  # `host:pid` of the process that started it or took it up last, when known
    events: tuple[SolveEvent, ...] = field(default=(), repr=False)

    @property
    def iterations(self) -> int:
        """Decisions taken: every step, and the final answer."""
        return len(self.steps) + (1 if self.state == "solved" else 0)

    @property
    def open_step(self) -> Step | None:
        """The step whose signal was posted and has not ended, if the run has one (its last)."""
        last = self.steps[-1] if self.steps else None
        return last if last is not None and last.signal_id is not None and last.status is None else None


def with_process(run: SolveRun, process: SolveProcess | None, now: datetime) -> SolveRun:
    """The run as `solve --status` tells it: `orphaned` when its events say running but no live process
    drives it (its row stopped, stale, or never written: a run started before runs kept one)."""
    if run.state != "running" or (process is not None and process.is_live(now)):
        return run
    gone = process.gone if process is not None else "no process has said it drives it"
    return replace(
        run,
        state="orphaned",
        reason=f"{gone}: blackboard solve --resume {run.run_id} --blackboard {run.blackboard_id} continues it",
    )


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
            controller_ref=event.controller_ref,
            step_timeout=event.step_timeout,
            start_workers=event.start_workers,
            workdir=event.workdir,
            permission_mode=event.permission_mode,
            allowed_tools=event.allowed_tools,
            synthesis=event.synthesis,
            process=f"{event.host}:{event.pid}" if event.host is not None else None,
        )
    if isinstance(event, SolveResumed):
        return replace(
            run,
            max_iterations=event.max_iterations,
            step_timeout=event.step_timeout,
            start_workers=event.start_workers,
            started_workers=(*run.started_workers, *event.started_workers),
            resumes=run.resumes + 1,
            process=f"{event.host}:{event.pid}",
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
    if isinstance(event, SolveSynthesized):
        if event.answer is None:
            return run
        return replace(
            run, answer=event.answer, answer_key=event.answer_key, reason=event.reason, synthesized=True
        )
    if isinstance(event, SolveStopped):
        return replace(run, state="stopped", reason=event.reason)
    raise TypeError(f"no evolution of a solve run for {type(event).__name__}")
