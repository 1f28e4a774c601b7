"""`solve`: a controller agent drives a board until the problem is solved (seed 004).

The run posts the problem (an entry, and `SolveStarted` on the run's own stream), then loops: the controller
(an agent file, run by a runner) reads the problem, the run so far, the board's summary and entries and the
specialists, and answers with one decision: post the next signal for a specialist (targeting its capability;
the run waits for it to end) or declare the problem solved (the answer written as an entry). Every decision
is an event; an answer that is no decision is one too (`SolveDecisionFailed`), whatever it holds (its size,
depth and characters are bounded before anything reads it), and the controller is asked again, within
`max_iterations`. Each step's signal carries the run's entries so far (entries.py), and a step ends
once its knowledge has landed (steps.py), so the controller always decides on the board its last step
left. The run ends solved, or stopped (`SolveStopped`) when its iterations are spent (IterationsSpent: the
controller asked once more, unless `synthesis` is off, for its best answer from what is known, recorded as
`SolveSynthesized` and the answer's entry), a step has no live worker that fits it for the step timeout
(NoWorkerFits), its step waits for a budget that only a higher budget frees (BudgetStopsTheRun, as when the
board's budget is reached before a decision), or it is interrupted; a stop cancels its open step, so a
stopped run leaves no work behind.
A run whose process ended without a stop (killed, or interrupted with `keep_step`) is `orphaned` until
`resume` takes it up from its stream (`SolveResumed`): the iterations spent, the open step, the options it
started with.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pydantic import ValidationError

from blackboard.application.commands import CancelSignal, GetSignalById, ListSignals, PostSignal
from blackboard.application.errors import ConcurrencyConflict
from blackboard.application.knowledge.commands import ListEntries, SummarizeBoard, WriteEntry
from blackboard.application.ports import Clock
from blackboard.application.solve.answers import (
    answer_entry,
    answer_key,
    asked_at_limit,
    best_answer,
    spent,
)
from blackboard.application.solve.decisions import (
    read_answer,
    refusal,
    step_capability,
    step_signal_type,
    storable,
)
from blackboard.application.solve.entries import run_entries
from blackboard.application.solve.ports import (  # the ports and values, re-exported for the adapters
    STEP_TIMEOUT,
    BudgetStopsTheRun,
    ControllerAgent,
    ControllerAnswer,
    ControllerUnpriced,
    IterationsSpent,
    NoWorkerFits,
    ResumeSolve,
    RunEnded,
    RunHeld,
    RunTakenOver,
    SolveLog,
    SolveOptions,
    SolveProblem,
    SolveProcesses,
    Specialist,
    StepHeldByBudget,
    UnknownRun,
)
from blackboard.application.solve.runs import SolveRuns
from blackboard.application.solve.steps import StepWatch
from blackboard.domain.errors import InvalidInput, RuleViolation
from blackboard.domain.events import (
    SolveDecisionFailed,
    SolveResumed,
    SolveSolved,
    SolveStarted,
    SolveStepEnded,
    SolveStepPosted,
    SolveStopped,
    SolveSynthesized,
)
from blackboard.domain.signals import AgentSignal
from blackboard.domain.solve.run import PostStep, Solved, SolveRun

OUTPUT_KEPT = 4000  # characters of a failed decision's answer kept in its event
ERROR_KEPT = 2000  # characters of an error (a controller run's, a refusal's) kept in an event
__all__ = [
    "BudgetStopsTheRun",
    "ControllerAgent",
    "ControllerAnswer",
    "ControllerUnpriced",
    "IterationsSpent",
    "NoWorkerFits",
    "ResumeSolve",
    "RunEnded",
    "RunHeld",
    "RunTakenOver",
    "SolveLog",
    "SolveOptions",
    "SolveProblem",
    "SolveProcesses",
    "Solver",
    "Specialist",
    "UnknownRun",
]


class Solver(SolveRuns):
    """One solve run at a time, through the same use cases as every interface: the service posts and
    cancels, the knowledge service writes entries, the watcher waits, the solve log records the decisions
    (reading runs back, and whether one may be resumed: SolveRuns)."""

    def __init__(
        self,
        service: Any,  # BlackboardService
        knowledge: Any,  # KnowledgeService
        knowledge_queries: Any,  # KnowledgeQueries
        watcher: Any,  # Watcher
        queries: Any,  # BlackboardQueries
        log: SolveLog,
        clock: Clock,
        prompt: Any,  # (run, summary, entries, specialists, last_error, step signals, at_limit) -> str
        processes: SolveProcesses | None = None,
    ) -> None:
        super().__init__(log, clock, processes)
        self._service, self._knowledge, self._entries = service, knowledge, knowledge_queries
        self._prompt, self._queries = prompt, queries
        self._steps = StepWatch(watcher, queries, clock, knowledge_queries)
        self.holding: Callable[[], bool] | None = None  # False once another process took the run up
        # why the board's budget stops the run (None: it does not): asked before each decision
        self.over_budget: Callable[[str], str | None] | None = None
        # why the board's budget holds a POSTED step back until it is raised (None: it does not), as `next`
        # and `show` say it: asked while the run waits for its step
        self.step_held: Callable[[AgentSignal], str | None] | None = None
        # whether the board has a USD budget: an unpriced controller may not run under one
        self.usd_budget: Callable[[str], bool] | None = None

    def check_priced(self, blackboard_id: str, controller: ControllerAgent) -> None:
        """ControllerUnpriced when the board has a USD budget and the controller's model has no price."""
        if controller.unpriced is not None and self.usd_budget is not None and self.usd_budget(blackboard_id):
            raise ControllerUnpriced(blackboard_id, controller.name, controller.unpriced)

    def start(
        self,
        cmd: SolveProblem,
        run_id: str,
        controller: ControllerAgent,
        specialists: Sequence[Specialist],
        started_workers: Sequence[str] = (),
        options: SolveOptions | None = None,
        where: tuple[str, int] | None = None,
    ) -> SolveRun:
        """Post the problem and record the run's start, with what a resume would continue it with and where
        its process runs (`where`: host, pid)."""
        options = options or SolveOptions()
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
            host=where[0] if where else None,
            pid=where[1] if where else None,
            controller_ref=options.controller_ref,
            step_timeout=cmd.step_timeout,
            start_workers=options.start_workers,
            workdir=options.workdir,
            permission_mode=options.permission_mode,
            allowed_tools=options.allowed_tools,
            synthesis=cmd.synthesis,
        )
        return self.run(cmd.blackboard_id, run_id)

    def resume(
        self, cmd: ResumeSolve, host: str, pid: int, started_workers: Sequence[str] = ()
    ) -> tuple[SolveRun, SolveProblem]:
        """Record that this process takes the run up (`SolveResumed`: who, where, the bounds from now on,
        the open step); the run and the command `drive` continues it with. A second process resuming it
        at the same time is refused (RunTakenOver): the run's stream admits one."""
        run = self.resumable(cmd.blackboard_id, cmd.run_id)
        open_step = run.open_step
        try:
            run = self._record(
                run,
                SolveResumed,
                cmd.resumed_by,
                signal_id=open_step.signal_id if open_step is not None else None,
                host=host,
                pid=pid,
                max_iterations=cmd.max_iterations or run.max_iterations,
                step_timeout=cmd.step_timeout or run.step_timeout or STEP_TIMEOUT,
                start_workers=run.start_workers if cmd.start_workers is None else cmd.start_workers,
                started_workers=tuple(started_workers),
            )
        except ConcurrencyConflict:
            raise RunTakenOver(cmd.run_id, cmd.blackboard_id) from None
        problem = SolveProblem(
            blackboard_id=run.blackboard_id,
            problem=run.problem,
            max_iterations=run.max_iterations,
            posted_by=cmd.resumed_by,
            step_timeout=run.step_timeout or STEP_TIMEOUT,
            synthesis=run.synthesis,
        )
        return run, problem

    def drive(
        self,
        cmd: SolveProblem,
        run_id: str,
        controller: ControllerAgent,
        specialists: Sequence[Specialist],
        keep_step: bool = False,
    ) -> SolveRun:
        """Loop until the controller answers (the run, solved) or the iterations are spent (IterationsSpent,
        after the controller was asked once for its best answer when `cmd.synthesis`), taking up first a
        step the run left open (a resumed run's). A step with no live worker that fits it
        for `step_timeout` stops the run (NoWorkerFits). An interruption (KeyboardInterrupt: Ctrl-C, or the
        SIGTERM the CLI turns into one) stops it too, unless `keep_step`: then the run and its open step
        are left as they are, for a resume. Whatever else ends the loop (the store gone) is recorded as the
        run's stop when it can be. Every stop cancels the open step first (the board's cancel: a worker
        running it stops). A run another process took up meanwhile is left to it (RunTakenOver)."""
        board = cmd.blackboard_id
        run = self._folded(board, run_id)
        try:
            run = self._take_up(cmd, run, controller)
            while run.state == "running" and run.iterations < cmd.max_iterations:
                run = self._iterate(cmd, run, controller, specialists)
            if run.state == "solved":
                return run
            if cmd.synthesis and asked_at_limit(run) is None:  # asked once, a resumed run included
                run = self._synthesize(cmd, run, controller)
        except RunTakenOver:
            raise
        except ConcurrencyConflict:  # the run's stream moved: another process records it now
            raise RunTakenOver(run_id, board) from None
        except NoWorkerFits as exc:
            exc.run = self._end(
                run_id, board, controller.name, cmd.posted_by, str(exc), "no live worker fit it"
            )
            raise
        except StepHeldByBudget as held:
            stopped = self._end(
                run_id, board, controller.name, cmd.posted_by, held.reason, "its step waits for a budget"
            )
            raise BudgetStopsTheRun(stopped, held.reason, str(held)) from None
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt) and keep_step:
                raise
            short = "interrupted" if isinstance(exc, KeyboardInterrupt) else "ended by an error"
            why = short if isinstance(exc, KeyboardInterrupt) else f"{short}: {exc}"
            try:
                self._end(run_id, board, controller.name, cmd.posted_by, why, short)
            except Exception:  # noqa: BLE001 - the store may be what failed: the first error is the one to tell
                pass
            raise
        run = self._end(
            run_id,
            board,
            controller.name,
            cmd.posted_by,
            spent(cmd.max_iterations, run),
            "its iterations were spent",
        )
        raise IterationsSpent(run)

    # -- taking a run up where it was left -------------------------------------------------------------
    def _take_up(self, cmd: SolveProblem, run: SolveRun, controller: ControllerAgent) -> SolveRun:
        """A resumed run's open step: the step whose post was not recorded (the process ended between the
        post and its event: the signal is found by its dedupe key), then the wait for its end."""
        if run.resumes and run.open_step is None and run.iterations < cmd.max_iterations:
            run = self._lost_post(run, controller)
        if run.open_step is not None:
            run = self._step_ended(cmd, run)
        return run

    def _lost_post(self, run: SolveRun, controller: ControllerAgent) -> SolveRun:
        iteration = run.iterations + 1
        key = f"{run.run_id}/{iteration}"
        signals = self._queries.list_signals(ListSignals(blackboard_id=run.blackboard_id))
        lost = next((s for s in signals if s.dedupe_key == key), None)
        if lost is None:
            return run
        return self._record(
            run,
            SolveStepPosted,
            controller.name,
            signal_id=lost.signal_id,
            iteration=iteration,
            agent=str(lost.payload.context.get("picked", "")),
            capability=lost.target_capabilities[0],
            topic=lost.payload.topic,
            reason="posted before the run's process ended; recorded when the run was resumed",
        )

    def _step_ended(self, cmd: SolveProblem, run: SolveRun) -> SolveRun:
        """Wait for the open step's signal to end (or NoWorkerFits), and record how it ended."""
        ended = self._steps.until_ended(run, cmd.step_timeout, self.holding, self.step_held)
        iteration = run.open_step.iteration if run.open_step is not None else run.iterations
        return self._ended(run, iteration, ended, ended.claimed_by or run.controller)

    def _ended(self, run: SolveRun, iteration: int, signal: AgentSignal, actor: str) -> SolveRun:
        return self._record(
            run,
            SolveStepEnded,
            actor,
            signal_id=signal.signal_id,
            iteration=iteration,
            status=signal.status.value,
            error=storable(signal.result.error, ERROR_KEPT)
            if signal.result and signal.result.error
            else None,
        )

    # -- one iteration --------------------------------------------------------------------------------
    def _iterate(
        self, cmd: SolveProblem, run: SolveRun, controller: ControllerAgent, specialists: Sequence[Specialist]
    ) -> SolveRun:
        iteration = run.iterations + 1
        self._may_ask(cmd, run, controller)
        summary, entries, results = self._board(run)
        last_error = run.steps[-1].error if run.steps and run.steps[-1].signal_id is None else None
        prompt = self._prompt(run, summary, entries, specialists, last_error, results)
        answer = controller.decide(run.run_id, iteration, prompt)
        if not answer.succeeded:
            return self._failed(
                run, controller, iteration, f"the controller's run failed: {answer.error}", answer
            )
        try:
            decision = read_answer(answer.text)
            if isinstance(decision, PostStep):
                capability = step_capability(decision, specialists)
        except InvalidInput as exc:  # BadDecision, or a value the store cannot hold
            return self._failed(run, controller, iteration, exc.rule, answer)
        if not isinstance(decision, PostStep):
            try:
                self._knowledge.write(answer_entry(run, controller.name, decision, synthesis=False))
            except (InvalidInput, ValidationError) as exc:  # the board's rules for an entry's value
                why = f"answer: cannot be the entry {answer_key(run)}: {refusal(exc)}"
                return self._failed(run, controller, iteration, why, answer)
            return self._record(
                run,
                SolveSolved,
                controller.name,
                iteration=iteration,
                answer=decision.answer,
                answer_key=answer_key(run),
                reason=decision.reason,
                usage=answer.usage,
            )
        try:
            signal = self._post(cmd, run, controller, iteration, decision, capability, entries)
        except (InvalidInput, ValidationError) as exc:  # the board's rules for a signal
            return self._failed(
                run, controller, iteration, f"its step cannot be posted: {refusal(exc)}", answer
            )
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
        return self._step_ended(cmd, run)

    def _post(
        self,
        cmd: SolveProblem,
        run: SolveRun,
        controller: ControllerAgent,
        iteration: int,
        decision: PostStep,
        capability: str,
        entries: Sequence[Any],  # the board's, as the controller read them
    ) -> AgentSignal:
        """The problem goes into the prompt (a topic is a line), then what the controller asks of this step;
        the run's entries so far go into the context (`entries`, newest first, bounded: entries.py)."""
        shown, left_out = run_entries(run, entries)
        prompt = (
            f"This is step {iteration} of solve run {run.run_id}. The problem (also the entry {run.problem_key}):"
            f"\n\n{run.problem}\n\nWhat {controller.name} asks of you ({decision.agent}) now:\n\n"
            f"{decision.prompt or decision.topic}\n\nWhy you: {decision.reason}\n\nWhat the run knows so far "
            "is in this signal's context, `entries`: the problem and what the run's steps found, newest "
            "first, each with its key"
            + (f" ({left_out} older ones left out: read them by key on the board)" if left_out else "")
            + "."
        )
        context: dict[str, Any] = {
            "solve_run": run.run_id,
            "iteration": iteration,
            "picked": decision.agent,
            "entries": shown,
        }
        if left_out:
            context["entries_left_out"] = left_out
        return self._service.post_signal(
            PostSignal(
                signal_type=decision.signal_type or step_signal_type(capability),
                ps_id=cmd.blackboard_id,
                entry_id=f"e-{iteration}",
                topic=decision.topic,
                prompt=prompt,
                context=context,
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
            error=storable(error, ERROR_KEPT),
            output=storable(answer.text, OUTPUT_KEPT),
            usage=answer.usage,
        )

    def _end(self, run_id: str, board: str, actor: str, by: str, reason: str, short: str) -> SolveRun:
        """Stop the run: its open step's signal cancelled by `by` (and that end recorded; `short` says why in
        the signal's words), then `SolveStopped` with the whole `reason`."""
        run = self._folded(board, run_id)
        if run.state != "running":
            return run
        step = run.open_step
        if step is not None and step.signal_id is not None:
            try:
                signal = self._service.cancel_signal(
                    CancelSignal(
                        signal_id=step.signal_id,
                        cancelled_by=by,
                        reason=f"solve run {run_id} stopped: {short}",
                        blackboard_id=board,
                    )
                )
            except RuleViolation:  # it ended meanwhile: record how
                signal = self._queries.get_signal(GetSignalById(signal_id=step.signal_id))
            run = self._ended(run, step.iteration, signal, by)
        return self._record(
            run, SolveStopped, actor, iterations=run.iterations, reason=storable(reason, ERROR_KEPT)
        )

    # -- what the controller reads, and what it may cost -------------------------------------------------
    def _may_ask(self, cmd: SolveProblem, run: SolveRun, controller: ControllerAgent) -> None:
        """Before the controller is asked: the run is still this process's (RunTakenOver), the board's
        budget is not reached (else the run stops: BudgetStopsTheRun), and a USD budget has a controller
        whose runs it can price (else the run stops: ControllerUnpriced)."""
        board = run.blackboard_id
        if self.holding is not None and not self.holding():
            raise RunTakenOver(run.run_id, board)
        if self.over_budget is not None and (why := self.over_budget(board)) is not None:
            stopped = self._end(run.run_id, board, controller.name, cmd.posted_by, f"the board's {why}", why)
            raise BudgetStopsTheRun(stopped, why)
        try:
            self.check_priced(board, controller)
        except ControllerUnpriced as unpriced:
            stopped = self._end(
                run.run_id, board, controller.name, cmd.posted_by, unpriced.reason, "unpriced"
            )
            raise ControllerUnpriced(board, controller.name, str(controller.unpriced), stopped) from None

    def _board(self, run: SolveRun) -> tuple[Any, list[Any], dict[str, AgentSignal]]:
        """The board as the controller reads it: its summary, its entries, the run's steps' signals."""
        board = run.blackboard_id
        summary = self._entries.summary(SummarizeBoard(blackboard_id=board))
        entries = self._entries.entries(ListEntries(blackboard_id=board))
        results = {
            s.signal_id: self._queries.get_signal(GetSignalById(signal_id=s.signal_id))
            for s in run.steps
            if s.signal_id is not None
        }
        return summary, entries, results

    # -- the best answer at the limit --------------------------------------------------------------------
    def _synthesize(self, cmd: SolveProblem, run: SolveRun, controller: ControllerAgent) -> SolveRun:
        """The iterations are spent: the controller is asked once for its best answer from what is known (the
        same board it read each iteration; only an answer is taken), recorded as `SolveSynthesized` with the
        answer's entry, or with why there is none."""
        self._may_ask(cmd, run, controller)
        summary, entries, results = self._board(run)
        prompt = self._prompt(run, summary, entries, (), None, results, at_limit=True)
        answer = controller.decide(run.run_id, run.iterations + 1, prompt)
        found = best_answer(answer)
        if isinstance(found, Solved):
            try:
                self._knowledge.write(answer_entry(run, controller.name, found, synthesis=True))
            except (InvalidInput, ValidationError) as exc:  # the board's rules for an entry's value
                found = f"answer: cannot be the entry {answer_key(run)}: {refusal(exc)}"
        if isinstance(found, str):
            return self._record(
                run,
                SolveSynthesized,
                controller.name,
                error=storable(found, ERROR_KEPT),
                output=storable(answer.text, OUTPUT_KEPT),
                usage=answer.usage,
            )
        return self._record(
            run,
            SolveSynthesized,
            controller.name,
            answer=found.answer,
            answer_key=answer_key(run),
            reason=found.reason,
            usage=answer.usage,
        )
