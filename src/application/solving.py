"""`solve`: a controller agent drives a board until the problem is solved (seed 004).

The run posts the problem (an entry, and `SolveStarted` on the run's own stream), then loops: the controller
(an agent file, run by a runner) reads the problem, the run so far, the board's summary and entries and the
specialists, and answers with one decision: post the next signal for a specialist (targeting its capability;
the run waits for it to end) or declare the problem solved (the answer written as an entry). Every decision
is an event; an answer that is no decision is one too (`SolveDecisionFailed`), and the controller is asked
again, within `max_iterations`. The run ends solved, or stopped (`SolveStopped`) when its iterations are
spent (IterationsSpent), a step does not end in time, or it is interrupted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from blackboard.application.commands import GetSignalById, PostSignal
from blackboard.application.errors import WaitTimedOut
from blackboard.application.knowledge.commands import ListEntries, SummarizeBoard, WriteEntry
from blackboard.application.ports import Clock
from blackboard.application.solve_ports import (  # the ports and values, re-exported for the adapters
    BudgetStopsTheRun,
    ControllerAgent,
    ControllerAnswer,
    IterationsSpent,
    SolveLog,
    SolveProblem,
    Specialist,
    UnknownRun,
)
from blackboard.domain.events import (
    SolveDecisionFailed,
    SolveEvent,
    SolveSolved,
    SolveStarted,
    SolveStepEnded,
    SolveStepPosted,
    SolveStopped,
)
from blackboard.domain.signals import AgentSignal, SignalType
from blackboard.domain.solving import BadDecision, PostStep, SolveRun, fold, read_decision

OUTPUT_KEPT = 4000  # characters of a failed decision's answer kept in its event
__all__ = [
    "BudgetStopsTheRun",
    "ControllerAgent",
    "ControllerAnswer",
    "IterationsSpent",
    "SolveLog",
    "SolveProblem",
    "Solver",
    "Specialist",
    "UnknownRun",
]


class Solver:
    """One solve run at a time, through the same use cases as every interface: the service posts, the
    knowledge service writes entries, the watcher waits, the solve log records the decisions."""

    def __init__(
        self,
        service: Any,  # BlackboardService
        knowledge: Any,  # KnowledgeService
        knowledge_queries: Any,  # KnowledgeQueries
        watcher: Any,  # Watcher
        queries: Any,  # BlackboardQueries
        log: SolveLog,
        clock: Clock,
        prompt: Any,  # (run, summary, entries, specialists, last_error, step signals) -> str
    ) -> None:
        self._service, self._knowledge, self._entries = service, knowledge, knowledge_queries
        self._watcher, self._log, self._clock, self._prompt = watcher, log, clock, prompt
        self._queries = queries
        self.report: Callable[[SolveEvent], None] | None = None  # told of each event once it is recorded
        # why the board's budget stops the run (None: it does not): asked before each decision
        self.over_budget: Callable[[str], str | None] | None = None

    def start(
        self,
        cmd: SolveProblem,
        run_id: str,
        controller: ControllerAgent,
        specialists: Sequence[Specialist],
        started_workers: Sequence[str] = (),
    ) -> SolveRun:
        """Post the problem and record the run's start."""
        problem_key = f"solve/{run_id}/problem"
        self._knowledge.write(
            WriteEntry(
                blackboard_id=cmd.blackboard_id,
                key=problem_key,
                value=cmd.problem,
                author=cmd.posted_by,
                entry_type="query",
                replaces=0,
            )
        )
        self._record(
            SolveRun(run_id, cmd.blackboard_id),
            SolveStarted,
            cmd.posted_by,
            problem=cmd.problem,
            problem_key=problem_key,
            controller=controller.name,
            runner=controller.runner,
            model=controller.model,
            max_iterations=cmd.max_iterations,
            specialists=tuple(s.name for s in specialists),
            without_workers=tuple(s.name for s in specialists if not s.live),
            started_workers=tuple(started_workers),
        )
        return self.run(cmd.blackboard_id, run_id)

    def drive(
        self, cmd: SolveProblem, run_id: str, controller: ControllerAgent, specialists: Sequence[Specialist]
    ) -> SolveRun:
        """Loop until the controller answers (the run, solved) or the iterations are spent (IterationsSpent);
        a step that does not end within `step_timeout` stops the run (WaitTimedOut). Whatever ends the loop
        otherwise (an interruption, the store gone) is recorded as the run's stop when it can be."""
        board = cmd.blackboard_id
        run = self.run(board, run_id)
        try:
            while run.iterations < cmd.max_iterations:
                run = self._iterate(cmd, run, controller, specialists)
                if run.state == "solved":
                    return run
        except WaitTimedOut as exc:
            self._stop(run_id, board, controller.name, f"a step did not end in time: {exc}")
            raise
        except BaseException as exc:
            why = "interrupted" if isinstance(exc, KeyboardInterrupt) else f"ended by an error: {exc}"
            try:
                self._stop(run_id, board, controller.name, why)
            except Exception:  # noqa: BLE001 - the store may be what failed: the first error is the one to tell
                pass
            raise
        run = self._stop(
            run_id, board, controller.name, f"--max-iterations {cmd.max_iterations} reached without an answer"
        )
        raise IterationsSpent(run)

    def runs(self, blackboard_id: str, upto: int | None = None) -> list[SolveRun]:
        """The board's runs, oldest first (those started by `upto`, as they were then)."""
        found = []
        for run_id in self._log.runs(blackboard_id):
            if records := self._log.history(blackboard_id, run_id, upto):
                found.append(fold(run_id, blackboard_id, [r.event for r in records]))  # type: ignore[misc]
        return found

    def run(self, blackboard_id: str, run_id: str, upto: int | None = None) -> SolveRun:
        records = self._log.history(blackboard_id, run_id, upto)
        if not records:
            raise UnknownRun(run_id, blackboard_id)
        return fold(run_id, blackboard_id, [r.event for r in records])  # type: ignore[misc]

    # -- one iteration --------------------------------------------------------------------------------
    def _iterate(
        self, cmd: SolveProblem, run: SolveRun, controller: ControllerAgent, specialists: Sequence[Specialist]
    ) -> SolveRun:
        iteration = run.iterations + 1
        board = cmd.blackboard_id
        if self.over_budget is not None and (why := self.over_budget(board)) is not None:
            raise BudgetStopsTheRun(self._stop(run.run_id, board, controller.name, f"the board's {why}"), why)
        summary = self._summary(board)
        entries = self._entries.entries(ListEntries(blackboard_id=board))
        last_error = run.steps[-1].error if run.steps and run.steps[-1].signal_id is None else None
        results = {
            s.signal_id: self._queries.get_signal(GetSignalById(signal_id=s.signal_id))
            for s in run.steps
            if s.signal_id is not None
        }
        prompt = self._prompt(run, summary, entries, specialists, last_error, results)
        answer = controller.decide(run.run_id, iteration, prompt)
        if not answer.succeeded:
            return self._failed(
                run, controller, iteration, f"the controller's run failed: {answer.error}", answer
            )
        try:
            decision = read_decision(answer.text)
            if isinstance(decision, PostStep):
                capability = _capability(decision, specialists)
        except BadDecision as exc:
            return self._failed(run, controller, iteration, exc.rule, answer)
        if not isinstance(decision, PostStep):
            key = f"solve/{run.run_id}/answer"
            self._knowledge.write(
                WriteEntry(
                    blackboard_id=board,
                    key=key,
                    value=decision.answer,
                    author=controller.name,
                    entry_type="final",
                    depends_on=(run.problem_key,),
                    meta={"solve_run": run.run_id, "reason": decision.reason[:2000]},
                )
            )
            return self._record(
                run,
                SolveSolved,
                controller.name,
                iteration=iteration,
                answer=decision.answer,
                answer_key=key,
                reason=decision.reason,
                usage=answer.usage,
            )
        signal = self._post(cmd, run, controller, iteration, decision, capability)
        run = self._record(
            run,
            SolveStepPosted,
            controller.name,
            signal_id=signal.signal_id,
            iteration=iteration,
            agent=decision.agent,
            capability=capability,
            topic=decision.topic,
            reason=decision.reason,
            usage=answer.usage,
        )
        ended = self._watcher.wait_for_signal(signal.signal_id, cmd.step_timeout)
        return self._record(
            run,
            SolveStepEnded,
            ended.claimed_by or controller.name,
            signal_id=signal.signal_id,
            iteration=iteration,
            status=ended.status.value,
            error=ended.result.error if ended.result else None,
        )

    def _post(
        self,
        cmd: SolveProblem,
        run: SolveRun,
        controller: ControllerAgent,
        iteration: int,
        decision: PostStep,
        capability: str,
    ) -> AgentSignal:
        """The problem goes into the prompt (a topic is a line), then what the controller asks of this step."""
        prompt = (
            f"This is step {iteration} of solve run {run.run_id}. The problem (also the entry {run.problem_key}):"
            f"\n\n{run.problem}\n\nWhat {controller.name} asks of you ({decision.agent}) now:\n\n"
            f"{decision.prompt or decision.topic}\n\nWhy you: {decision.reason}"
        )
        return self._service.post_signal(
            PostSignal(
                signal_type=decision.signal_type or _signal_type(capability),
                ps_id=cmd.blackboard_id,
                entry_id=f"e-{iteration}",
                topic=decision.topic,
                prompt=prompt,
                context={"solve_run": run.run_id, "iteration": iteration, "picked": decision.agent},
                target_capabilities=(capability,),
                posted_by=controller.name,
                blackboard_id=cmd.blackboard_id,
                dedupe_key=f"{run.run_id}/{iteration}",  # a retried post never doubles a step
            )
        )

    def _failed(
        self, run: SolveRun, controller: ControllerAgent, iteration: int, error: str, answer: ControllerAnswer
    ) -> SolveRun:
        return self._record(
            run,
            SolveDecisionFailed,
            controller.name,
            iteration=iteration,
            error=error,
            output=answer.text[:OUTPUT_KEPT],
            usage=answer.usage,
        )

    def _stop(self, run_id: str, board: str, actor: str, reason: str) -> SolveRun:
        run = self.run(board, run_id)
        if run.state != "running":
            return run
        return self._record(run, SolveStopped, actor, iterations=run.iterations, reason=reason)

    def _summary(self, board: str) -> Any:
        return self._entries.summary(SummarizeBoard(blackboard_id=board))

    def _record(self, run: SolveRun, kind: type[SolveEvent], actor: str, **fields: Any) -> SolveRun:
        event = kind(
            blackboard_id=run.blackboard_id,
            run_id=run.run_id,
            version=run.version + 1,
            occurred_at=self._clock.now(),
            actor=actor,
            **fields,
        )
        self._log.append([event], {"actor": actor, "solve_run": run.run_id})
        if self.report is not None:
            self.report(event)
        return fold(run.run_id, run.blackboard_id, [*run.events, event])


def _signal_type(capability: str) -> SignalType:
    """A capability that names a signal type (RESEARCH, REVIEW ...) gives it; any other, INVESTIGATION."""
    return SignalType.__members__.get(capability.strip().upper(), SignalType.INVESTIGATION)


def _capability(decision: PostStep, specialists: Sequence[Specialist]) -> str:
    """The capability the step's signal targets: the one named, which must be the agent's, else its best."""
    by_name = {s.name: s for s in specialists}
    agent = by_name.get(decision.agent)
    if agent is None:
        raise BadDecision(
            f"agent must be one of the specialists ({', '.join(by_name) or 'none'}), got {decision.agent!r}"
        )
    own = [c for c, _ in agent.capabilities]
    if decision.capability is None:
        if not own:
            raise BadDecision(f"{agent.name} has no capability a signal could target")
        return own[0]
    wanted = decision.capability.strip().upper()
    if wanted not in {c.upper() for c in own}:
        raise BadDecision(
            f"capability must be one of {agent.name}'s ({', '.join(own)}), got {decision.capability!r}"
        )
    return next(c for c in own if c.upper() == wanted)
