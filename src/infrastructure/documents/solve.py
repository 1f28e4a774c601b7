"""A solve run's documents: the run and its steps."""

from typing import TYPE_CHECKING, Any, Literal

from blackboard.infrastructure.documents.base import Document

if TYPE_CHECKING:
    pass

# ---------------------------------------------------------------- solve runs


class SolveStep(Document):
    """One iteration: the signal posted for a specialist and how it ended, or a decision refused."""

    iteration: int
    signal_id: str | None
    agent: str | None
    capability: str | None
    topic: str | None
    reason: str
    status: str | None  # the signal's once it ended; None while it runs or for a refused decision
    error: str | None


class SolveRun(Document):
    """A solve run as its events tell it (`blackboard solve`, `solve --status RUN`); `orphaned`: running by
    its events, but the process that drove it is gone (`solve --resume` takes it up)."""

    run_id: str
    blackboard_id: str
    state: Literal["running", "solved", "stopped", "orphaned"]
    problem: str
    problem_key: str
    controller: str
    runner: str
    model: str | None
    started_by: str
    max_iterations: int
    iterations: int
    specialists: list[str]
    without_workers: list[str]
    started_workers: list[str]
    steps: list[SolveStep]
    answer: str | None
    answer_key: str | None
    reason: str | None
    synthesis: bool  # at the iteration limit, the controller is asked once for its best answer
    synthesized: bool  # the answer is that best answer: the run stopped at its limit
    controller_cost_usd: float
    step_timeout: float | None  # seconds a step may have no live worker that fits it (None: started before)
    resumes: int  # how many times a process took the run up again
    process: str | None  # `host:pid` of the process that drives it, or drove it last
    version: int


def solve_run(run: Any) -> SolveRun:
    """From the domain's `SolveRun` (domain/solve/run.py)."""
    return SolveRun(
        run_id=run.run_id,
        blackboard_id=run.blackboard_id,
        state=run.state,
        problem=run.problem,
        problem_key=run.problem_key,
        controller=run.controller,
        runner=run.runner,
        model=run.model,
        started_by=run.started_by,
        max_iterations=run.max_iterations,
        iterations=run.iterations,
        specialists=list(run.specialists),
        without_workers=list(run.without_workers),
        started_workers=list(run.started_workers),
        steps=[
            SolveStep(
                iteration=s.iteration,
                signal_id=s.signal_id,
                agent=s.agent,
                capability=s.capability,
                topic=s.topic,
                reason=s.reason,
                status=s.status,
                error=s.error,
            )
            for s in run.steps
        ],
        answer=run.answer,
        answer_key=run.answer_key,
        reason=run.reason,
        synthesis=run.synthesis,
        synthesized=run.synthesized,
        controller_cost_usd=round(run.cost_usd, 6),
        step_timeout=run.step_timeout,
        resumes=run.resumes,
        process=run.process,
        version=run.version,
    )
