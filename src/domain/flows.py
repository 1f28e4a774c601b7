"""Flows: steps of work posted together, each step a signal that waits for the steps it comes after (seed
002's phases: research, plan, write, interact, each ending when its agent completes its signal).

A flow is no aggregate of its own: its steps are signals of one board, posted in one command (all or none),
each carrying the flow's id and its step's id (`AgentSignalPosted.flow_id`, `step_id`). A step retried is
a new signal of the same step (`retry_of`), so a step's state is its latest signal's. Everything a flow
shows (`flow status`, `status`, `/metrics`, the web view) is folded from those signals by `progress`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from blackboard.domain.errors import BlackboardError, InvalidInput, NotFound, RuleViolation
from blackboard.domain.signals import AgentSignal, SignalPayload, SignalStatus, SignalType

if TYPE_CHECKING:
    from blackboard.domain.blackboard import BlackboardAggregate

# A flow's id and a step's: what a command line, a metric's label and a log line carry as they are
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"
FLOW_ID_MAX, STEP_ID_MAX = 100, 64
NAME_RULE = "letters, digits, '.', '_' and '-', starting with a letter or a digit"
MAX_STEPS = 100
# a step with no `type` whose target is not one of the six types (a gate's default is DECISION)
DEFAULT_TYPE = SignalType.ANALYSIS
OPEN = (SignalStatus.POSTED, SignalStatus.CLAIMED)
FLOW_STATES = ("running", "completed", "failed", "cancelled")  # flow_state's answers


@dataclass(frozen=True, slots=True)
class FlowStep:
    """One step as the board posts it: its signal's type, targets, topic and prompt, the steps it comes after
    (by step id), and whether a person decides it (a gate)."""

    step_id: str
    signal_type: SignalType
    targets: tuple[str, ...]
    topic: str
    prompt: str = ""
    after: tuple[str, ...] = ()
    gate: bool = False


def step_type(given: str | None, targets: Sequence[str], gate: bool) -> SignalType:
    """A step's signal type: the one it names, else its target's when that is one of the six types (a step
    targeting RESEARCH is a RESEARCH signal), else DECISION for a gate, else DEFAULT_TYPE."""
    if given is not None:
        return SignalType(given.upper())
    for target in targets:
        if target.upper() in SignalType.__members__:
            return SignalType(target.upper())
    return SignalType.DECISION if gate else DEFAULT_TYPE


def step_problems(ids: Sequence[str], afters: Sequence[Sequence[str]]) -> list[tuple[str, str]]:
    """The rules a flow's steps keep together, as (field, rule) for each one broken: step ids unique, and each
    `after` naming earlier steps only (so steps run in an order a file can say, and a flow has no cycle)."""
    problems: list[tuple[str, str]] = []
    first: dict[str, int] = {}
    for n, (step_id, after) in enumerate(zip(ids, afters, strict=True)):
        if step_id in first:
            problems.append(
                (f"steps[{n}].id", f"{step_id} is the id of steps[{first[step_id]}] too; step ids are unique")
            )
        for upstream in after:
            if upstream == step_id:
                problems.append((f"steps[{n}].after", f"{step_id} cannot come after itself"))
            elif upstream not in first:
                later = upstream in ids[n + 1 :]
                problems.append(
                    (
                        f"steps[{n}].after",
                        f"{upstream} is not a step above this one"
                        + (
                            " (it comes later: a step waits only for earlier steps, so a flow has no cycle)"
                            if later
                            else ""
                        ),
                    )
                )
        first.setdefault(step_id, n)
    return problems


class FlowInvalid(InvalidInput):
    """A flow (its file, or the steps given) breaks one or more rules; each is named with its field."""

    def __init__(self, problems: Sequence[tuple[str, str]], where: str = "") -> None:
        BlackboardError.__init__(
            self, (f"{where}: " if where else "") + "; ".join(f"{f}: {r}" for f, r in problems)
        )
        self.field, self.rule = problems[0]
        self.problems = list(problems)
        self.where = where


class FlowExists(RuleViolation):
    def __init__(self, flow_id: str, blackboard_id: str) -> None:
        super().__init__(
            f"flow {flow_id} is already on blackboard {blackboard_id}; run it with another --flow-id "
            "(or leave it out for a new one)"
        )
        self.flow_id = flow_id


class FlowNotFound(NotFound):
    def __init__(self, flow_id: str, blackboard_id: str) -> None:
        super().__init__(f"no flow {flow_id} on blackboard {blackboard_id}")
        self.flow_id = flow_id


class NothingToRetry(RuleViolation):
    def __init__(self, flow_id: str, states: Mapping[str, str]) -> None:
        shown = ", ".join(f"{step} {status}" for step, status in states.items())
        super().__init__(
            f"flow {flow_id} has no step to retry (a step is retried when it ended FAILED or EXPIRED): {shown}"
        )
        self.flow_id = flow_id


def post_flow(
    board: BlackboardAggregate,
    flow_id: str,
    steps: Iterable[FlowStep],
    posted_by: str,
    at: datetime,
    new_id: Callable[[], str],
    context: Mapping[str, Any],
) -> list[AgentSignal]:
    """Record every step's post, in order, each after the signals of the steps it names; `steps` is read
    one step at a time, so a step that cannot be made (an unknown agent) is refused after the steps above
    it were recorded, and the caller's transaction writes none of them. `context` goes to every step's
    signal, with `flow` (the flow's id and name, and the step's id) added."""
    if board.flow_signals(flow_id):
        raise FlowExists(flow_id, board.id)
    posted: dict[str, AgentSignal] = {}
    for n, step in enumerate(steps, 1):
        flow = {**context.get("flow", {}), "id": flow_id, "step": step.step_id}
        payload = SignalPayload(
            ps_id=board.id,
            entry_id=f"e-{n}",  # the step's place in the flow
            topic=step.topic,
            prompt=step.prompt,
            context={**context, "flow": flow},
        )
        posted[step.step_id] = board.post_signal(
            signal_id=new_id(),
            signal_type=step.signal_type,
            payload=payload,
            posted_by=posted_by,
            at=at,
            target_capabilities=step.targets,
            after=[posted[upstream].signal_id for upstream in step.after],
            gate=step.gate,
            flow_id=flow_id,
            step_id=step.step_id,
        )
    return [board.signal(s.signal_id) for s in posted.values()]


# ---------------------------------------------------------------- progress
@dataclass(frozen=True, slots=True)
class StepProgress:
    """One step as it stands: its latest signal (a retry's, if it was retried), how many signals it had
    (1 plus its retries), and the steps it still waits for."""

    step_id: str
    signal: AgentSignal
    tries: int
    waiting_for: tuple[str, ...]

    @property
    def status(self) -> SignalStatus:
        return self.signal.status


@dataclass(frozen=True, slots=True)
class FlowProgress:
    """A flow's steps in order, each as it stands, and so the flow's own state."""

    flow_id: str
    blackboard_id: str
    steps: tuple[StepProgress, ...]
    started_at: datetime | None = None

    @property
    def counts(self) -> dict[str, int]:
        return counted(s.status for s in self.steps)

    @property
    def state(self) -> str:
        return flow_state(self.counts)


@dataclass(frozen=True, slots=True)
class FlowCounts:
    """A flow's steps counted by the status each stands at (what `status` and `/metrics` read, where the
    rows are), and when its first step was posted."""

    blackboard_id: str
    flow_id: str
    counts: dict[str, int] = field(default_factory=dict)
    started_at: datetime | None = None

    @property
    def state(self) -> str:
        return flow_state(self.counts)

    @property
    def steps(self) -> int:
        return sum(self.counts.values())


def newest_first(flows: Iterable[FlowCounts]) -> list[FlowCounts]:
    """By board, then the newest flow first (the flow's id breaks a tie)."""
    by_start = sorted(flows, key=lambda f: (f.started_at is None, f.started_at, f.flow_id), reverse=True)
    return sorted(by_start, key=lambda f: f.blackboard_id)


def counted(statuses: Iterable[SignalStatus | str]) -> dict[str, int]:
    """How many of each status, in the statuses' own order."""
    return ordered(Counter(map(str, statuses)))


def ordered(counts: Mapping[str, int]) -> dict[str, int]:
    """Counts by status in the statuses' own order (POSTED first), statuses with none left out."""
    return {str(s): counts[str(s)] for s in SignalStatus if counts.get(str(s))}


def flow_state(counts: Mapping[str, int]) -> str:
    """`running` while a step is POSTED or CLAIMED; else `completed` when every step COMPLETED, `cancelled`
    when one was cancelled, `failed` otherwise (a step FAILED, EXPIRED or UNCLAIMED)."""
    if any(counts.get(str(s), 0) for s in OPEN):
        return "running"
    if set(counts) <= {str(SignalStatus.COMPLETED)}:
        return "completed"
    return "cancelled" if counts.get(str(SignalStatus.CANCELLED)) else "failed"


def latest(signals: Sequence[AgentSignal]) -> list[AgentSignal]:
    """Each step's latest signal (one no other signal retries), in step order."""
    retried = {s.retry_of for s in signals if s.retry_of is not None}
    return sorted((s for s in signals if s.signal_id not in retried), key=step_order)


def step_order(signal: AgentSignal) -> tuple[int, datetime, str]:
    """Where a flow's signal stands among its steps: its step's place in the flow, which its entry id holds
    (`e-N`, `post_flow`; a retry keeps it). Every step is posted at the same time, so no time orders them."""
    number = signal.payload.entry_id.removeprefix("e-")
    return (int(number) if number.isdigit() else 0, signal.created_at, signal.signal_id)


def progress(flow_id: str, blackboard_id: str, signals: Sequence[AgentSignal]) -> FlowProgress:
    """The flow as its signals (every one carrying its id) leave it."""
    tries = Counter(s.step_id for s in signals)
    step_of = {s.signal_id: s.step_id or s.signal_id for s in signals}
    return FlowProgress(
        flow_id,
        blackboard_id,
        tuple(
            StepProgress(
                s.step_id or s.signal_id,
                s,
                tries[s.step_id],
                tuple(step_of.get(u, u) for u in s.after if u in s.waiting_for),
            )
            for s in latest(signals)
        ),
        min((s.created_at for s in signals), default=None),
    )
