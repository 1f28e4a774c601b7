"""A solve run's answer: the entry it is written as (`solve/<run>/answer`, type `final`; the best answer asked
for at the iteration limit labelled `synthesis`), what the controller's turn at the limit gives, and why a run
whose iterations are spent stopped."""

from __future__ import annotations

from typing import Any

from blackboard.application.knowledge.commands import WriteEntry
from blackboard.application.solve.decisions import read_answer
from blackboard.application.solve.ports import ControllerAnswer
from blackboard.domain.errors import InvalidInput
from blackboard.domain.events import SolveSynthesized
from blackboard.domain.solve.run import Solved, SolveRun

SYNTHESIS = "synthesis"  # the label of a best answer given at the iteration limit


def answer_key(run: SolveRun) -> str:
    return f"solve/{run.run_id}/answer"


def answer_entry(run: SolveRun, author: str, decision: Solved, synthesis: bool) -> WriteEntry:
    """The answer as an entry: by the controller, depending on the problem's entry, its reason in `meta`; a
    best answer at the limit labelled `synthesis`, `meta.synthesis` true. ValidationError for a value the
    board refuses (over 1 MiB)."""
    meta: dict[str, Any] = {"solve_run": run.run_id, "reason": decision.reason[:2000]}
    if synthesis:
        meta["synthesis"] = True
    return WriteEntry(
        blackboard_id=run.blackboard_id,
        key=answer_key(run),
        value=decision.answer,
        author=author,
        entry_type="final",
        label=SYNTHESIS if synthesis else "unlabelled",
        depends_on=(run.problem_key,),
        meta=meta,
    )


def best_answer(answer: ControllerAnswer) -> Solved | str:
    """What the controller's turn at the limit gave: its answer, or why it is none (its run failed, its text
    is no decision, or it is a step, which can no longer be posted)."""
    if not answer.succeeded:
        return f"the controller's run failed: {answer.error}"
    try:
        decision = read_answer(answer.text)
    except InvalidInput as exc:
        return exc.rule
    if not isinstance(decision, Solved):
        return 'must be {"action": "solved", "answer", "reason"}: at the iteration limit no step is posted'
    return decision


def asked_at_limit(run: SolveRun) -> SolveSynthesized | None:
    """The run's best answer at its limit, once asked for (answered or not): it is asked for once."""
    return next((e for e in run.events if isinstance(e, SolveSynthesized)), None)


def spent(max_iterations: int, run: SolveRun) -> str:
    """Why a run whose iterations are spent stops, and what became of its best answer."""
    why = f"--max-iterations {max_iterations} reached without an answer"
    asked = asked_at_limit(run)
    if asked is None:
        return why
    if asked.answer_key is not None:
        return f"{why}; the controller's best answer from what is known is the entry {asked.answer_key}"
    return f"{why}; asked for its best answer from what is known, the controller gave none: {asked.error}"
