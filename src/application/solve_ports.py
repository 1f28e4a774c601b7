"""The ports and values of `solve` (application/solving.py): the command, the specialists as the controller
sees them, the controller's port and answer, the solve runs' log, and the errors a run ends with."""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import AfterValidator, Field

from blackboard.application.commands import BoardName, Command
from blackboard.application.errors import TimedOut
from blackboard.application.ports import Recorded
from blackboard.domain.errors import NotFound, RuleViolation
from blackboard.domain.events import SolveEvent
from blackboard.domain.signals import NonEmpty, SignalUsage
from blackboard.domain.solving import SolveRun


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
    step_timeout: float | None = Field(default=None, gt=0)  # seconds a step may take (None: no bound)


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
    """The controller's agent file, run by its runner; asked once per iteration."""

    name: str
    runner: str
    model: str | None

    @abc.abstractmethod
    def decide(self, run_id: str, iteration: int, prompt: str) -> ControllerAnswer:
        """One run of the controller on `prompt`; never raises (a failure is an answer that says it)."""


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


class IterationsSpent(TimedOut):
    """The run's iterations were spent and the controller gave no answer (exit 5, like a wait that timed out)."""

    def __init__(self, run: SolveRun) -> None:
        super().__init__(
            f"solve run {run.run_id} reached --max-iterations {run.max_iterations} without an answer; "
            f"its decisions: blackboard solve --status {run.run_id} --blackboard {run.blackboard_id}"
        )
        self.run = run


class BudgetStopsTheRun(RuleViolation):
    """The board's budget is reached (its runs, the controller's included, spent it): the run stopped
    before asking the controller again (exit 3)."""

    def __init__(self, run: SolveRun, reason: str) -> None:
        super().__init__(
            f"solve run {run.run_id} stopped: blackboard {run.blackboard_id} {reason}; raise it with "
            f"blackboard budget {run.blackboard_id}"
        )
        self.run = run


class UnknownRun(NotFound):
    def __init__(self, run_id: str, blackboard_id: str) -> None:
        super().__init__(f"no solve run {run_id} on blackboard {blackboard_id}")
        self.run_id = run_id
