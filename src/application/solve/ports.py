"""The ports and values of `solve` (application/solve/solver.py): the commands, the specialists as the controller
sees them, the controller's port and answer, the solve runs' log, the processes that drive runs, and the
errors a run ends with."""

from __future__ import annotations

import abc
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Annotated, Any

from pydantic import AfterValidator, Field

from blackboard.application.bounds import MAX_SECONDS
from blackboard.application.commands import BoardName, Command
from blackboard.application.errors import TimedOut
from blackboard.application.ports import Recorded
from blackboard.domain.errors import NotFound, RuleViolation
from blackboard.domain.events import SolveEvent
from blackboard.domain.presence import SolveProcess
from blackboard.domain.signals import NonEmpty, SignalUsage
from blackboard.domain.solve.run import SolveRun, Step

STEP_TIMEOUT = 300.0  # seconds a step may have no live worker that fits it before the run stops
# how long a step may wait, as a command states it: a finite number of seconds above 0
StepSeconds = Annotated[float, Field(gt=0, le=MAX_SECONDS, allow_inf_nan=False)]


def _problem(text: str) -> str:
    if not text.strip():
        raise ValueError("must not be empty or blank")
    return text


class SolveProblem(Command):
    """Start a solve run on a board."""

    blackboard_id: BoardName
    problem: Annotated[str, Field(max_length=100_000), AfterValidator(_problem)]
    max_iterations: int = Field(default=10, ge=1, le=1000)
    posted_by: NonEmpty = "solve"
    step_timeout: StepSeconds = STEP_TIMEOUT  # seconds a step may have no live worker that fits it
    synthesis: bool = True  # at the iteration limit, ask the controller once for its best answer


class ResumeSolve(Command):
    """Continue a run whose process ended, from its stream; a bound given here replaces the run's own."""

    blackboard_id: BoardName
    run_id: NonEmpty
    resumed_by: NonEmpty = "solve"
    max_iterations: int | None = Field(default=None, ge=1, le=1000)
    step_timeout: StepSeconds | None = None
    start_workers: bool | None = None


@dataclass(frozen=True, slots=True)
class SolveOptions:
    """How a run's controller runs and whether it starts workers: recorded when it starts, so a resume
    continues the run as it was started (`SolveStarted`)."""

    controller_ref: str | None = (
        None  # an agent of the folder, or an agent file's absolute path; None: packaged
    )
    start_workers: bool = False
    workdir: str | None = None
    permission_mode: str | None = None
    allowed_tools: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Specialist:
    """An agent the controller may pick: what its file says, and whether a worker of it is live now."""

    name: str
    description: str
    capabilities: tuple[tuple[str, float], ...]  # (type, score), best first
    runnable: bool
    live: bool


@dataclass(frozen=True, slots=True)
class ControllerAnswer:
    succeeded: bool
    text: str
    usage: SignalUsage
    error: str | None = None


class ControllerAgent(abc.ABC):
    """The controller's agent file, run by its runner; asked once per iteration. `unpriced`: the model its
    runner would call and has no price for (None: priced, or its runner reports the cost itself)."""

    name: str
    runner: str
    model: str | None
    unpriced: str | None = None

    @abc.abstractmethod
    def decide(self, run_id: str, iteration: int, prompt: str) -> ControllerAnswer:
        """One run of the controller on `prompt`; never raises (a failure is an answer that says it)."""

    def close(self) -> None:
        """The solve ends: nothing a decision started goes on (the processes of one still under way)."""


class SolveLog(abc.ABC):
    """The solve runs' streams (`<board>\\x1e<run>`): appended to by the run alone, read back for audits."""

    @abc.abstractmethod
    def append(self, events: Sequence[SolveEvent], metadata: Mapping[str, Any]) -> list[Recorded]:
        """Append one run's events after its current version (ConcurrencyConflict if it moved)."""

    @abc.abstractmethod
    def history(self, blackboard_id: str, run_id: str, upto: int | None = None) -> list[Recorded]:
        """The run's events in order (only those at log positions up to `upto`, if given)."""

    @abc.abstractmethod
    def runs(self, blackboard_id: str) -> list[str]:
        """The board's run ids, oldest first."""


class SolveProcesses(abc.ABC):
    """Which process drives each solve run: one row per run, kept fresh by that process's beats (as a
    worker's presence is), never an event. Writes touch only the writer's own row."""

    @abc.abstractmethod
    def take(self, process: SolveProcess) -> None:
        """Store the row as given, whoever held the run before (a start, or a resume taking it over)."""

    @abc.abstractmethod
    def beat(self, process: SolveProcess) -> bool:
        """Refresh the row if `process.holder` still holds the run; False when another process took it."""

    @abc.abstractmethod
    def stopped(self, blackboard_id: str, run_id: str, holder: str, at: datetime) -> None:
        """The holder's process ended at `at` (a row another process took over is left as it is)."""

    @abc.abstractmethod
    def of(self, blackboard_id: str, run_ids: Collection[str]) -> dict[str, SolveProcess]:
        """The rows of these runs of the board, by run id (a run without one is left out)."""


class IterationsSpent(TimedOut):
    """The run's iterations were spent and the controller decided no answer (exit 5, like a wait that timed
    out); its best answer from what is known, when it was asked for one and gave it, is the run's `answer`."""

    def __init__(self, run: SolveRun) -> None:
        best = (
            f"; the controller's best answer from what is known is the entry {run.answer_key}"
            if run.synthesized
            else ""
        )
        super().__init__(
            f"solve run {run.run_id} reached --max-iterations {run.max_iterations} without an answer{best}; "
            f"its decisions: blackboard solve --status {run.run_id} --blackboard {run.blackboard_id}"
        )
        self.run = run


class BudgetStopsTheRun(RuleViolation):
    """The board's budget is reached (its runs, the controller's included, spent it): the run stopped
    before asking the controller again, or its open step waits for a budget no run's end frees (exit 3)."""

    def __init__(self, run: SolveRun, reason: str, message: str | None = None) -> None:
        super().__init__(
            message
            or f"solve run {run.run_id} stopped: blackboard {run.blackboard_id} {reason}; raise it with "
            f"blackboard budget {run.blackboard_id}"
        )
        self.run = run


class ControllerUnpriced(RuleViolation):
    """The board has a USD budget and the controller's runner has no price for its model: its runs could not
    keep to the budget, so solve does not start (exit 3, nothing written), or a running run stops before
    asking it again (a budget set meanwhile), as a runner's claim under a USD budget waits."""

    def __init__(self, blackboard_id: str, controller: str, model: str, run: SolveRun | None = None) -> None:
        self.reason = (
            f"blackboard {blackboard_id} has a USD budget, and the controller {controller}'s runner has no "
            f"price for its model {model}, so its runs could not keep to it"
        )
        super().__init__(
            f"{self.reason}; configure its price (US dollars per million tokens, input and output): "
            f"BLACKBOARD_PRICES='{{\"{model}\": [3, 15]}}', or run the controller with a priced --model"
        )
        self.run = run


class StepHeldByBudget(RuleViolation):
    """The run's open step waits for a budget, and only a higher budget frees it (the budget reached, or its
    reservation cannot fit while nothing else is reserved): the run stops (BudgetStopsTheRun, exit 3)."""

    def __init__(self, run: SolveRun, step: Step, why: str) -> None:
        self.reason = (
            f"its step {step.iteration} ({step.signal_id}, for {step.agent}'s {step.capability}) waits for a "
            f"budget that no run under way frees (a higher budget, or a price for an unpriced model, does): {why}"
        )
        super().__init__(f"solve run {run.run_id} stopped: {self.reason}")
        self.run = run


class UnknownRun(NotFound):
    def __init__(self, run_id: str, blackboard_id: str) -> None:
        super().__init__(f"no solve run {run_id} on blackboard {blackboard_id}")
        self.run_id = run_id


class NoWorkerFits(TimedOut):
    """A step had no live worker that fits it for the step timeout: the run stops, saying which step, which
    specialist and capability, and how to give it a worker (exit 5, as a wait that timed out)."""

    def __init__(self, run: SolveRun, step: Step, seconds: float) -> None:
        super().__init__(
            f"step {step.iteration} of solve run {run.run_id} ({step.signal_id}, for {step.agent}'s "
            f"{step.capability}) had no live worker that fits it for {seconds:g}s: start one (blackboard "
            f"worker --agent {step.agent} --board {run.blackboard_id}) or run solve with --start-workers"
        )
        self.run = run


class RunEnded(RuleViolation):
    """Only a running run can be resumed: a solved or stopped one is refused (exit 3), saying how it ended."""

    def __init__(self, run: SolveRun) -> None:
        how = f"solved ({run.answer_key})" if run.state == "solved" else f"stopped: {run.reason}"
        super().__init__(f"solve run {run.run_id} on {run.blackboard_id} is {how}; nothing to resume")
        self.run = run


class RunHeld(RuleViolation):
    """A running run whose process is live is driven already: a resume is refused (exit 3)."""

    def __init__(self, run: SolveRun, process: SolveProcess) -> None:
        super().__init__(
            f"solve run {run.run_id} on {run.blackboard_id} is driven by its process on {process.label} "
            f"(last beat {process.last_beat.isoformat()}): resume it once that process has ended"
        )
        self.run = run


class RunTakenOver(RuleViolation):
    """Another process resumed the run while this one was stalled: this one stops and records nothing."""

    def __init__(self, run_id: str, blackboard_id: str) -> None:
        super().__init__(
            f"solve run {run_id} on {blackboard_id} was taken up by another process (solve --resume) "
            "while this one was stalled; this one stops and leaves the run to it"
        )
        self.run_id = run_id
