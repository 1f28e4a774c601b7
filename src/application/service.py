"""BlackboardService: the use cases UC-001..004 over the ports."""

from __future__ import annotations

import copy
import logging
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import TypeVar

from blackboard.application.authority import Authority
from blackboard.application.callers import Act, Caller
from blackboard.application.commands import (
    ApproveGate,
    CancelSignal,
    CancelSignals,
    ClaimSignal,
    ClaimSignals,
    Command,
    CompleteSignal,
    EnforceDeadline,
    ExpireSignals,
    FailSignal,
    NudgeSignal,
    PostSignal,
    RecordOutcomes,
    RejectGate,
    RenewClaim,
    RetrySignal,
    SetBudget,
    command_metadata,
)
from blackboard.application.errors import ConcurrencyConflict
from blackboard.application.flows.commands import CancelFlow, RetryFlow, RunFlow, StepSpec
from blackboard.application.json_values import check_json
from blackboard.application.ports import (
    AgentRegistry,
    BoardHoldNeeded,
    BoardTransaction,
    Clock,
    EventPublisher,
    EventStore,
    Hold,
    IdGenerator,
    Overdue,
    Scope,
    SignalFilter,
    SignalReadModel,
    Tracer,
    UnitOfWork,
)
from blackboard.application.presence import PresenceStore, fitting
from blackboard.application.projection import Projector
from blackboard.application.scoring import Scorer
from blackboard.domain.blackboard import RETRIABLE, BlackboardAggregate, overdue
from blackboard.domain.capabilities import AgentProfile, Claimant, rank
from blackboard.domain.errors import AgentNotFound, BlackboardError, InvalidInput, SignalNotFound
from blackboard.domain.flows import (
    FlowNotFound,
    FlowStep,
    NothingToRetry,
    latest,
    post_flow,
    step_order,
    step_type,
)
from blackboard.domain.limits import Budget, ClaimLimits, Spent, new_budget
from blackboard.domain.presence import WorkerPresence
from blackboard.domain.reservations import Reservation
from blackboard.domain.retries import AttemptRules, RetryPolicy
from blackboard.domain.signals import AgentSignal, SignalPayload, SignalResult, SignalStatus

logger = logging.getLogger(__name__)
T = TypeVar("T")
CONFLICT_RETRIES = 8  # a command holding only its signals, chosen as a deadlock's victim: decided again


CLAIM_SPARE = (
    2  # candidates a batch claim reads beyond its limit, for those the rules refuse at the last moment
)


class _WorkersNeeded(Exception):
    """A named signal is past its earliest deadline: whether a live worker fits it decides, so the
    command rolls back, reads the live workers outside the board's hold and decides again."""


@dataclass(frozen=True, slots=True)
class Settings:
    """The policy values a service decides with; the defaults live in the one settings model
    (`blackboard.infrastructure.composition.settings`), which builds these."""

    claim_threshold: float
    post_timeout: timedelta | None  # the default for signals posted without a timeout of their own; None: off
    claim_timeout: timedelta


@dataclass(slots=True)
class Claims:
    """What a batch claim took, and why each signal it passed over could not be taken."""

    claimed: list[AgentSignal] = field(default_factory=list)
    skipped: dict[str, BlackboardError] = field(default_factory=dict)


class BlackboardService:
    """Write side: each command holds its board in one unit of work, loads what it decides on,
    decides, commits once, then lets side effects follow."""

    def __init__(
        self,
        uow: UnitOfWork,
        read_model: SignalReadModel,
        registry: AgentRegistry,
        publisher: EventPublisher,
        clock: Clock,
        ids: IdGenerator,
        settings: Settings,
        projector: Projector | None = None,
        presence: PresenceStore | None = None,
        store: EventStore | None = None,
        draw: Callable[[], float] = random.random,
        tracer: Tracer | None = None,
        authority: Authority | None = None,
    ) -> None:
        self.settings = settings
        self._authority = authority or Authority()  # who may do what (application/callers.py)
        self.tracer = tracer or Tracer()  # traces nothing unless tracing is on (docs/operate.md, "Traces")
        # a failed attempt is retried by the policy of the agent that claimed it (its file's `retries`)
        self._attempts = AttemptRules(policy_of=self._retry_policy, draw=draw)
        self._store = store  # the log: which signals were posted with a correlation id (a bulk cancel)
        self._presence = presence  # live workers: a POSTED signal waits while one that fits it is live
        self._uow = uow
        self._projector = projector
        self._read_model = read_model
        self._registry = registry
        self._scorer = Scorer(registry)
        self._publisher = publisher
        self._clock = clock
        self._ids = ids
        self._boards_of: dict[str, str] = {}  # signal -> board: a signal never changes board

    def acting(self, caller: Caller) -> BlackboardService:
        """This service for one caller, whoever the process is: an MCP session's, the web view's."""
        clone = copy.copy(self)
        clone._authority = self._authority.acting(caller)
        return clone

    # UC-001
    def post_signal(self, cmd: PostSignal) -> AgentSignal:
        caller = self._authority.check(Act.POST)
        cmd = self._authority.named(caller, cmd, "posted_by", "post a signal")

        def decide(board: BlackboardAggregate, tx: BoardTransaction, now: datetime) -> AgentSignal:
            # the entry left out: the board's next e-N, read under the board's hold (a post holds the whole
            # board: Hold.BOARD), so two posts never take one number
            entry_id = cmd.entry_id or f"e-{tx.highest_entry() + 1}"
            payload = SignalPayload(
                ps_id=cmd.ps_id,
                entry_id=entry_id,
                topic=cmd.topic,
                prompt=cmd.prompt,
                context=cmd.context,
                labels=cmd.labels,
            )
            signal = board.post_signal(
                signal_id=self._unused_signal_id(tx),
                signal_type=cmd.signal_type,
                payload=payload,
                posted_by=cmd.posted_by,
                at=now,
                target_capabilities=cmd.target_capabilities,
                after=cmd.after,
                dedupe_key=cmd.dedupe_key,
                read_keys=cmd.read_keys,
                write_keys=cmd.write_keys,
                budget_usd=cmd.budget_usd,
                priority=cmd.priority,
                not_before=cmd.not_before,
                max_attempts=cmd.max_attempts,
                gate=cmd.gate,
                timeout_s=cmd.timeout_s,
            )
            if (
                board.has_pending_events
                and signal.status is SignalStatus.POSTED
                and not signal.gate  # a person decides a gate: no agent needs to fit it
                and (reason := self._nobody_can_take(signal))
            ):
                signal = board.mark_unclaimed(signal.signal_id, reason, now)
            return signal

        scope = Scope(upstreams=cmd.after, key=cmd.dedupe_key)
        posted = self._execute(cmd.board, scope, decide, cmd, actor=cmd.posted_by)
        self._remember(posted.signal_id, posted.blackboard_id)  # its claim need not look it up
        return posted

    # UC-002
    def claim_signal(self, cmd: ClaimSignal) -> AgentSignal:
        caller = self._authority.check(Act.CLAIM)
        cmd = self._authority.named(caller, cmd, "agent_id", "claim a signal")
        agent = self._agent(cmd.agent_id)

        def decide(board: BlackboardAggregate, tx: BoardTransaction, now: datetime) -> AgentSignal:
            limits = _claim_limits(agent, tx, now)
            limits.check(cmd.signal_id, board.id, 0)
            claimant, threshold = self._scored(agent, board, cmd.signal_id), self.settings.claim_threshold
            reserved = self._reservation(limits, board, cmd.signal_id, claimant, now)
            claimed = board.claim_signal(
                cmd.signal_id, claimant, now, threshold, cmd.token, limits.key, reserved
            )
            _take_rate(limits, tx, 1)
            return claimed

        return self._execute(
            self._locate(cmd.signal_id, cmd.blackboard_id),
            # the budget is read after the signal's row is locked, not with the log's state: this claim may
            # wait on that lock (a late outcome of the signal), and on PostgreSQL a statement sees only what
            # was committed before it began, so a budget read before the wait could be one the outcome
            # reached meanwhile. A worker's batch claim (SKIP LOCKED) never waits: it reads it with the state
            Scope(
                signals=(cmd.signal_id,),
                lapse=self.settings.claim_timeout,
                reserves=agent.spending is not None,
            ),
            decide,
            cmd,
            actor=cmd.agent_id,
            deadlines=(cmd.signal_id,),
            hold=Hold.SIGNALS,
        )

    # UC-003
    def complete_signal(self, cmd: CompleteSignal) -> AgentSignal:
        self._own_claim(cmd.signal_id, cmd.agent_id, "complete")
        result = SignalResult(artifact_path=cmd.artifact_path, knowledge_items=cmd.knowledge_items)
        return self._execute(
            self._locate(cmd.signal_id, cmd.blackboard_id),
            Scope(signals=(cmd.signal_id,), ends=True),
            lambda board, _, now: board.complete_signal(
                cmd.signal_id, cmd.agent_id, result, now, cmd.token, cmd.usage
            ),
            cmd,
            actor=cmd.agent_id,
            deadlines=(cmd.signal_id,),
            hold=Hold.SIGNALS,
        )

    def fail_signal(self, cmd: FailSignal) -> AgentSignal:
        self._own_claim(cmd.signal_id, cmd.agent_id, "fail")
        return self._execute(
            self._locate(cmd.signal_id, cmd.blackboard_id),
            Scope(signals=(cmd.signal_id,), ends=True),
            lambda board, _, now: board.fail_signal(
                cmd.signal_id,
                cmd.agent_id,
                cmd.error,
                now,
                cmd.token,
                cmd.usage,
                cmd.retry_after,
                cmd.stalled,
            ),
            cmd,
            actor=cmd.agent_id,
            deadlines=(cmd.signal_id,),
            hold=Hold.SIGNALS,
        )

    def claim_signals(self, cmd: ClaimSignals) -> Claims:
        """Claim up to `cmd.limit` of the signals, in order, in one append. A signal that cannot be
        claimed any more is skipped (and said why), so workers racing for the same oldest signals
        each take the next free ones."""
        caller = self._authority.check(Act.CLAIM)
        cmd = self._authority.named(caller, cmd, "agent_id", "claim signals")
        agent = self._agent(cmd.agent_id)

        def decide(board: BlackboardAggregate, tx: BoardTransaction, now: datetime) -> Claims:
            claims, limits, reserved = Claims(), _claim_limits(agent, tx, now), Spent()
            for signal_id in cmd.signal_ids:
                if len(claims.claimed) >= cmd.limit:
                    break
                try:
                    limits.check(signal_id, board.id, len(claims.claimed))
                    claimant, threshold = self._scored(agent, board, signal_id), self.settings.claim_threshold
                    reservation = self._reservation(limits, board, signal_id, claimant, now, reserved)
                    claims.claimed.append(
                        board.claim_signal(
                            signal_id,
                            claimant,
                            now,
                            threshold,
                            cmd.tokens.get(signal_id),
                            limits.key,
                            reservation,
                            cmd.runner,
                        )
                    )
                    reserved += Spent.reserved_by(reservation)
                except BlackboardError as refused:  # taken or changed meanwhile: the next one
                    claims.skipped[signal_id] = refused
            _take_rate(limits, tx, len(claims.claimed))
            return claims

        return self._execute(
            cmd.blackboard_id,
            # only as many candidates as it may take (and a few for those refused), so a worker racing
            # for the same backlog takes the next ones instead of finding them all held by this claim
            Scope(
                signals=cmd.signal_ids,
                at_most=cmd.limit + CLAIM_SPARE,
                limits=agent.concurrency is None,
                lapse=self.settings.claim_timeout,
                reserves=agent.spending is not None,
            ),
            decide,
            cmd,
            actor=cmd.agent_id,
            deadlines=cmd.signal_ids,
            hold=Hold.FREE_SIGNALS,  # a signal another worker is claiming is skipped, not waited for
        )

    def record_outcomes(self, cmd: RecordOutcomes) -> list[AgentSignal | BlackboardError]:
        """Complete or fail each signal, in one append; per outcome, the signal as stored or the
        reason it was refused (a claim that expired or went to someone else meanwhile, an outcome larger
        than an export carries)."""
        for outcome in cmd.outcomes:
            self._own_claim(
                outcome.signal_id,
                outcome.agent_id,
                "complete" if isinstance(outcome, CompleteSignal) else "fail",
            )

        def decide(
            board: BlackboardAggregate, _: BoardTransaction, now: datetime
        ) -> list[AgentSignal | BlackboardError]:
            results: list[AgentSignal | BlackboardError] = []
            for outcome in cmd.outcomes:
                try:
                    if isinstance(outcome, CompleteSignal):
                        result = SignalResult(
                            artifact_path=outcome.artifact_path, knowledge_items=outcome.knowledge_items
                        )
                        results.append(
                            board.complete_signal(
                                outcome.signal_id, outcome.agent_id, result, now, outcome.token, outcome.usage
                            )
                        )
                    else:
                        results.append(
                            board.fail_signal(
                                outcome.signal_id,
                                outcome.agent_id,
                                outcome.error,
                                now,
                                outcome.token,
                                outcome.usage,
                                outcome.retry_after,
                                outcome.stalled,
                            )
                        )
                except BlackboardError as refused:
                    results.append(refused)
                    _charge_refused(board, outcome, refused, now)
            return results

        scope = Scope(signals=tuple(o.signal_id for o in cmd.outcomes), ends=True)
        try:
            return self._execute(
                cmd.blackboard_id,
                scope,
                decide,
                cmd,
                actor=cmd.agent_id,
                deadlines=scope.signals,
                hold=Hold.SIGNALS,
            )
        except InvalidInput as refused:  # an event the log would not carry (application/carried.py), refused
            # at its append, nothing written: that outcome alone is refused, the others are recorded one by one
            if len(cmd.outcomes) == 1:
                return [refused]
            return [
                result
                for outcome in cmd.outcomes
                for result in self.record_outcomes(cmd.model_copy(update={"outcomes": (outcome,)}))
            ]

    def redeliver_completion(
        self, blackboard_id: str, signal_id: str, agent_id: str, token: str | None
    ) -> bool:
        """Tell subscribers again of a completion this claimer stored, when the claimer could not learn
        that it was stored (the database went away before its commit was acknowledged, so the retry was
        refused as already COMPLETED). Its knowledge items then land as they would have (landing is
        idempotent). False when the signal was not completed by this claim."""
        signal = self._read_model.get(signal_id)
        if (
            signal is None
            or signal.status is not SignalStatus.COMPLETED
            or not signal.held_by(agent_id, token)
            or self._store is None
        ):
            return False
        completion = self._store.completion_of(blackboard_id, signal_id)  # that event, not the board's
        if completion is None:
            return False
        self._publisher.publish([completion])
        return True

    def renew_claim(self, cmd: RenewClaim) -> AgentSignal:
        self._own_claim(cmd.signal_id, cmd.agent_id, "renew the claim on")
        return self._execute(
            self._locate(cmd.signal_id, cmd.blackboard_id),
            Scope(signals=(cmd.signal_id,)),
            lambda board, _, now: board.renew_claim(cmd.signal_id, cmd.agent_id, now, cmd.token),
            cmd,
            actor=cmd.agent_id,
            deadlines=(cmd.signal_id,),
            hold=Hold.SIGNALS,
        )

    def retry_signal(self, cmd: RetrySignal) -> AgentSignal:
        """A new signal for the work of a FAILED, EXPIRED or CANCELLED one; UNCLAIMED at once if nobody can
        take it."""
        self._authority.check(Act.RETRY)

        def decide(board: BlackboardAggregate, tx: BoardTransaction, now: datetime) -> AgentSignal:
            signal = board.retry_signal(cmd.signal_id, self._unused_signal_id(tx), cmd.posted_by, now)
            return self._unclaimed_if_nobody_fits(board, signal.signal_id, now)

        board_id = self._locate(cmd.signal_id, cmd.blackboard_id)
        return self._execute(
            board_id,
            Scope(signals=(cmd.signal_id,), retries=True),
            decide,
            cmd,
            actor=cmd.posted_by,
            deadlines=(cmd.signal_id,),
        )

    def run_flow(self, cmd: RunFlow) -> list[AgentSignal]:
        """Post every step of a flow, in order, each after the signals of the steps it names, in one
        transaction: all of them, or none (a step that cannot be posted, a flow id already on the board).
        A step no registered agent fits is UNCLAIMED at once, as a post is, and what comes after it expires."""
        caller = self._authority.check(Act.FLOW)
        cmd = self._authority.named(caller, cmd, "posted_by", "run a flow")
        flow = cmd.flow
        flow_id = cmd.flow_id or f"{flow.name}-{self._ids.new_signal_id().removeprefix('sig-')}"
        about = {"name": flow.name, "description": flow.description, "body": flow.body}
        context = {"flow": {k: v for k, v in about.items() if v}}
        check_json(context, "flow")

        def decide(board: BlackboardAggregate, tx: BoardTransaction, now: datetime) -> list[AgentSignal]:
            steps = (self._flow_step(n, spec) for n, spec in enumerate(flow.steps))  # made as each is posted
            posted = post_flow(
                board, flow_id, steps, cmd.posted_by, now, lambda: self._unused_signal_id(tx), context
            )
            for signal in posted:
                self._unclaimed_if_nobody_fits(board, signal.signal_id, now)
            return [board.signal(s.signal_id) for s in posted]

        posted = self._execute(cmd.blackboard_id, Scope(flow=flow_id), decide, cmd, actor=cmd.posted_by)
        for signal in posted:
            self._remember(signal.signal_id, signal.blackboard_id)
        return posted

    def cancel_flow(self, cmd: CancelFlow) -> list[AgentSignal]:
        """Cancel every open step of a flow (and so what waits on them); returns every signal cancelled,
        [] when none was open. FlowNotFound (exit 4) for no such flow on the board."""
        caller = self._authority.check(Act.CANCEL, "cancel a flow")
        cmd = self._authority.named(caller, cmd, "cancelled_by", "cancel a flow")

        def decide(board: BlackboardAggregate, _: BoardTransaction, now: datetime) -> list[AgentSignal]:
            signals = board.flow_signals(cmd.flow_id)
            if not signals:
                raise FlowNotFound(cmd.flow_id, board.id)
            for signal in sorted(signals, key=step_order):
                if not board.signal(signal.signal_id).status.is_final:  # or ended just now with an upstream
                    board.cancel_signal(signal.signal_id, cmd.cancelled_by, cmd.reason, now)
            ended = [board.signal(sid) for sid in dict.fromkeys(e.signal_id for e in board.pending_events)]
            return sorted(ended, key=step_order)  # a cancel's cascade goes in no particular order

        scope = Scope(flow=cmd.flow_id, ends=True)
        return self._execute(cmd.blackboard_id, scope, decide, cmd, actor=cmd.cancelled_by)

    def retry_flow(self, cmd: RetryFlow) -> list[AgentSignal]:
        """Post again, in step order, every step of a flow whose latest signal ended FAILED or EXPIRED (what
        `retry` takes), each after the retries of the steps it comes after; NothingToRetry (exit 3) when
        none did. Returns the new signals."""
        self._authority.check(Act.RETRY, "retry a flow")

        def decide(board: BlackboardAggregate, tx: BoardTransaction, now: datetime) -> list[AgentSignal]:
            signals = board.flow_signals(cmd.flow_id)
            if not signals:
                raise FlowNotFound(cmd.flow_id, board.id)
            steps = latest(signals)
            ended = [s for s in steps if s.status in RETRIABLE]
            if not ended:
                raise NothingToRetry(cmd.flow_id, {str(s.step_id): str(s.status) for s in steps})
            retried = [
                board.retry_signal(s.signal_id, self._unused_signal_id(tx), cmd.posted_by, now) for s in ended
            ]
            return [self._unclaimed_if_nobody_fits(board, r.signal_id, now) for r in retried]

        scope = Scope(flow=cmd.flow_id, retries=True)
        return self._execute(cmd.blackboard_id, scope, decide, cmd, actor=cmd.posted_by)

    def cancel_signal(self, cmd: CancelSignal) -> AgentSignal:
        """CANCELLED, with every open signal that waits on it; refused (RuleViolation) once it is final."""
        caller = self._authority.check(Act.CANCEL)
        cmd = self._authority.named(caller, cmd, "cancelled_by", "cancel a signal")
        return self._execute(
            self._locate(cmd.signal_id, cmd.blackboard_id),
            Scope(signals=(cmd.signal_id,), ends=True),
            lambda board, _, now: board.cancel_signal(cmd.signal_id, cmd.cancelled_by, cmd.reason, now),
            cmd,
            actor=cmd.cancelled_by,
            deadlines=(cmd.signal_id,),
        )

    def approve_gate(self, cmd: ApproveGate) -> AgentSignal:
        """A person approves an open gate: COMPLETED, what waits on it may run; refused (RuleViolation)
        for a signal that is not an open gate."""
        self._authority.check(Act.DECIDE, "approve a gate")
        return self._execute(
            self._locate(cmd.signal_id, cmd.blackboard_id),
            Scope(signals=(cmd.signal_id,), ends=True),
            lambda board, _, now: board.approve_gate(cmd.signal_id, cmd.approved_by, cmd.note, now),
            cmd,
            actor=cmd.approved_by,
            deadlines=(cmd.signal_id,),
        )

    def nudge_signal(self, cmd: NudgeSignal) -> AgentSignal:
        """A person's word to the running agent (AgentSignalNudged), which the worker running it delivers at
        its next turn; refused (RuleViolation, nothing written) unless it is CLAIMED and run by a runner."""
        self._authority.check(Act.NUDGE)
        return self._execute(
            self._locate(cmd.signal_id, cmd.blackboard_id),
            Scope(signals=(cmd.signal_id,)),
            lambda board, _, now: board.nudge_signal(cmd.signal_id, cmd.nudged_by, cmd.text, now),
            cmd,
            actor=cmd.nudged_by,
            deadlines=(cmd.signal_id,),
            hold=Hold.SIGNALS,
        )

    def reject_gate(self, cmd: RejectGate) -> AgentSignal:
        """A person rejects an open gate: FAILED, what waits on it expires."""
        self._authority.check(Act.DECIDE, "reject a gate")
        return self._execute(
            self._locate(cmd.signal_id, cmd.blackboard_id),
            Scope(signals=(cmd.signal_id,), ends=True),
            lambda board, _, now: board.reject_gate(cmd.signal_id, cmd.rejected_by, cmd.reason, now),
            cmd,
            actor=cmd.rejected_by,
            deadlines=(cmd.signal_id,),
        )

    def cancel_signals(self, cmd: CancelSignals) -> list[AgentSignal]:
        """Cancel every open signal of a board, or those posted with a correlation id, one command per
        board; returns every signal cancelled (what waited on them too), in the order they were."""
        caller = self._authority.check(Act.CANCEL, "cancel signals")
        cmd = self._authority.named(caller, cmd, "cancelled_by", "cancel signals")
        if self._projector is not None:  # rows an import or a rebuild left unfolded are open signals too
            self._projector.catch_up()
        by_board: dict[str, list[str]] = {}
        reached = self._authority.reach(cmd.blackboard_id)  # a confined caller's "every board": its own
        if cmd.posted_with is not None:
            if self._store is None:
                raise RuntimeError("this service was built without the event store (store)")
            for board_id, signal_id in self._store.posted_with(cmd.posted_with, reached):
                by_board.setdefault(board_id, []).append(signal_id)
        else:
            for status in (SignalStatus.POSTED, SignalStatus.CLAIMED):
                for found in self._read_model.find(SignalFilter(status=status, blackboard_id=reached)):
                    by_board.setdefault(found.blackboard_id, []).append(found.signal_id)
        cancelled: list[AgentSignal] = []
        for board_id, signal_ids in by_board.items():

            def decide(
                board: BlackboardAggregate, _: BoardTransaction, now: datetime, ids: list[str] = signal_ids
            ) -> list[AgentSignal]:
                for signal_id in ids:
                    if not board.signal(signal_id).status.is_final:  # ended meanwhile, or with an upstream
                        board.cancel_signal(signal_id, cmd.cancelled_by, cmd.reason, now)
                ended = dict.fromkeys(e.signal_id for e in board.pending_events)
                return [board.signal(sid) for sid in ended]

            cancelled += self._execute(
                board_id, Scope(signals=tuple(signal_ids), ends=True), decide, cmd, actor=cmd.cancelled_by
            )
        return cancelled

    def expire_signals(self, cmd: ExpireSignals) -> list[AgentSignal]:
        """Expire what is past its timeout; returns every signal this call ended."""
        self._authority.check(Act.EXPIRE)
        if (
            self._projector is not None
        ):  # rows an import or an unfinished rebuild left unfolded name live boards too
            self._projector.catch_up()
        ended: list[AgentSignal] = []
        boards = self._read_model.live_boards(self._authority.reach(cmd.blackboard_id))
        workers = self._presence.workers() if self._presence is not None and boards else []
        for board_id in boards:
            overdue = Overdue(self._clock.now(), self.settings.post_timeout, self.settings.claim_timeout)

            def decide(board: BlackboardAggregate, _: BoardTransaction, now: datetime) -> list[AgentSignal]:
                # the rows loaded are past the earliest deadline; a live worker that fits may push it later
                fits = fitting(board.signals.values(), workers, self._scorer, self.settings.claim_threshold)
                return board.expire_overdue(now, overdue.post_timeout, overdue.claim_timeout, fits)

            ended += self._execute(
                board_id,
                Scope(overdue=overdue, ends=True),
                decide,
                cmd,
                actor="expiry-sweeper",
                at=overdue.at,
            )
        return ended

    def enforce_deadline(self, cmd: EnforceDeadline) -> AgentSignal:
        """The signal as it stands, its expiry recorded first if it is past its deadline (the events and the
        cascade any command that finds it late records): what a wait does when the deadline comes, so it
        ends with the board's decision whether a sweeper runs or not."""
        return self._execute(
            self._locate(cmd.signal_id, cmd.blackboard_id),
            Scope(signals=(cmd.signal_id,)),
            lambda board, _, now: board.signal(cmd.signal_id),
            cmd,
            actor=cmd.by,
            deadlines=(cmd.signal_id,),
            hold=Hold.SIGNALS,
        )

    def set_budget(self, cmd: SetBudget) -> Budget:
        """The board's budget from now on (`blackboard budget`): a limit not given stays as it was, and
        none may be below what the board's runners have already spent (InvalidInput, nothing written)."""
        self._authority.check(Act.LIMITS, f"set the budget of {cmd.board}")

        def decide(board: BlackboardAggregate, tx: BoardTransaction, now: datetime) -> Budget:
            budget = new_budget(tx.budget(), cmd.usd, cmd.tokens, tx.spent())
            board.set_budget(budget, cmd.set_by, cmd.reason, now)
            return budget

        return self._execute(cmd.board, Scope(), decide, cmd, actor=cmd.set_by)

    # ----------------------------------------------------------------- helpers
    def _own_claim(self, signal_id: str, agent_id: str, verb: str) -> None:
        """An agent ends or renews only its own claims, a run only its own signal (Act.FINISH)."""
        caller = self._authority.check(Act.FINISH, f"{verb} {signal_id}")
        self._authority.own_claim(caller, signal_id, agent_id, verb)

    def _unused_signal_id(self, tx: BoardTransaction) -> str:
        """Ids have 32 random bits, so collisions happen on large boards: draw again until unused."""
        while True:
            signal_id = self._ids.new_signal_id()
            if not tx.taken(signal_id):
                return signal_id

    def _retry_policy(self, agent_id: str) -> RetryPolicy | None:
        agent = self._registry.get(agent_id)
        return None if agent is None else agent.retries

    def _agent(self, agent_id: str) -> AgentProfile:
        agent = self._registry.get(agent_id)
        if agent is None:
            raise AgentNotFound(agent_id)
        return agent

    def _scored(self, agent: AgentProfile, board: BlackboardAggregate, signal_id: str) -> Claimant:
        """The agent as it scores for that signal of the board (by text, for one targeting `auto`)."""
        return self._scorer.profile(agent, board.signal(signal_id))

    def _reservation(
        self,
        limits: ClaimLimits,
        board: BlackboardAggregate,
        signal_id: str,
        claimant: Claimant,
        now: datetime,
        taken: Spent | None = None,
    ) -> Reservation | None:
        """What claiming the signal reserves of the board's budget (domain/limits.py), `taken` having been
        reserved by this command already; a claim the rules refuse for another reason says that reason."""
        if limits.spending is None:  # its runs record no usage: nothing to reserve
            return None
        signal = board.check_claim(signal_id, claimant, now, self.settings.claim_threshold)
        return limits.reserve(signal_id, board.id, signal.budget_usd, taken or Spent())

    def _locate(self, signal_id: str, blackboard_id: str | None) -> str:
        """The board a command on the signal holds: the one it names, else the signal's. A caller confined
        to a board (Caller.confined_to) is refused another board's signal, whichever board it names."""
        confined = self._authority.caller().confined_to is not None
        if blackboard_id and not confined:
            return blackboard_id
        board_id = self._boards_of.get(signal_id) or self._read_model.board_of(signal_id)
        if board_id is None and self._projector is not None:
            self._projector.catch_up()  # a rebuild is running: the signal's row may not be back yet
            board_id = self._read_model.board_of(signal_id)
        if board_id is None:
            raise SignalNotFound(signal_id, blackboard_id)
        self._remember(signal_id, board_id)
        self._authority.reach(board_id)
        return blackboard_id or board_id

    def _remember(self, signal_id: str, board_id: str) -> None:
        if len(self._boards_of) > 100_000:
            self._boards_of.clear()
        self._boards_of[signal_id] = board_id

    def _flow_step(self, n: int, spec: StepSpec) -> FlowStep:
        """A flow's step as the board posts it; an agent's step targets that agent's best capability (its
        first, on a tie). An agent the registry does not hold is bad input naming the step."""
        targets: tuple[str, ...] = (spec.capability,) if spec.capability is not None else ()
        if spec.agent is not None:
            agent = self._registry.get(spec.agent)
            if agent is None:
                raise InvalidInput(
                    f"steps[{n}].agent", f"no agent named {spec.agent} among the agents (`blackboard agents`)"
                )
            targets = (max(agent.capabilities, key=lambda c: c.score).type,)
        kind = step_type(spec.type, targets, spec.gate)
        return FlowStep(spec.id, kind, targets, spec.topic, spec.prompt, spec.after, spec.gate)

    def _unclaimed_if_nobody_fits(
        self, board: BlackboardAggregate, signal_id: str, now: datetime
    ) -> AgentSignal:
        """A signal just posted that is POSTED, not a gate, and that no registered agent fits is UNCLAIMED at
        once (and what waits on it expires)."""
        signal = board.signal(signal_id)
        if (
            signal.status is SignalStatus.POSTED
            and not signal.gate
            and (reason := self._nobody_can_take(signal))
        ):
            return board.mark_unclaimed(signal_id, reason, now)
        return signal

    def _nobody_can_take(self, signal: AgentSignal) -> str | None:
        ranking = rank(signal, self._scorer.profiles(signal), self.settings.claim_threshold)
        if any(v.passes for v in ranking):
            return None
        wanted = ", ".join(signal.target_capabilities)
        best = (
            f"; best was {ranking[0].agent.agent_id} at {ranking[0].score:.2f}"
            if ranking and ranking[0].score
            else ""
        )
        return f"no registered agent scores above its threshold for {wanted}{best}"

    def _execute(
        self,
        blackboard_id: str,
        scope: Scope,
        decide: Callable[[BlackboardAggregate, BoardTransaction, datetime], T],
        cmd: Command,
        actor: str,
        deadlines: tuple[str, ...] = (),
        at: datetime | None = None,
        workers: list[WorkerPresence] | None = None,
        hold: Hold = Hold.BOARD,
        conflicts: int = 0,
    ) -> T:
        """Hold the board, load what `scope` names, decide, commit once; then tell subscribers.
        A refusal raises before anything is written (the transaction rolls back), except the expiry
        of a signal in `deadlines` found past its deadline: that is recorded first and committed
        with whatever the decision did, and a refusal it causes is raised after the commit. The command
        decides at one time, `at` or the clock's now."""
        self._authority.reach(blackboard_id)  # a caller confined to a board writes on no other
        started = time.time_ns()  # a traced command's span starts here
        metadata = command_metadata(cmd, actor)  # every event it stores carries it
        refused: BlackboardError | None = None
        try:
            with self._uow.board(blackboard_id, hold) as tx:
                now = at or self._clock.now()  # after the hold: a command that waited for it decides now
                board = tx.load(scope, now)
                board.attempts = self._attempts
                board, expired = self._enforce_deadlines(board, tx, scope, deadlines, now, workers)
                try:
                    outcome = decide(board, tx, now)
                except BlackboardError as refusal:
                    if not expired:
                        raise
                    refused = refusal  # the refusal of a signal just expired: the expiry stands
                recorded = tx.commit(board, metadata)
        except (
            _WorkersNeeded
        ):  # rolled back, nothing written: read who is live outside the hold, decide again
            assert self._presence is not None
            live = self._presence.workers()
            return self._execute(
                blackboard_id, scope, decide, cmd, actor, deadlines, at, live, hold, conflicts
            )
        except BoardHoldNeeded:  # rolled back, nothing written: the read model is behind, hold the board
            return self._execute(blackboard_id, scope, decide, cmd, actor, deadlines, at, workers, Hold.BOARD)
        except ConcurrencyConflict:
            # holding only its signals, the transaction lost a deadlock (or met an append it could not
            # fold after): rolled back, nothing written; decide again, on the rows as they are now
            if hold is Hold.BOARD or conflicts >= CONFLICT_RETRIES:
                raise
            return self._execute(
                blackboard_id, scope, decide, cmd, actor, deadlines, at, workers, hold, conflicts + 1
            )
        if recorded:
            self._publisher.publish([r.event for r in recorded])
        if refused is not None:
            raise refused
        self.tracer.command(cmd, metadata, outcome, started)
        return outcome

    def _enforce_deadlines(
        self,
        board: BlackboardAggregate,
        tx: BoardTransaction,
        scope: Scope,
        signal_ids: tuple[str, ...],
        now: datetime,
        workers: list[WorkerPresence] | None,
    ) -> tuple[BlackboardAggregate, bool]:
        """Expire the named signals past their deadlines by this service's clock, by the sweeper's rule
        (`deadline`, live workers read through the presence port), so a deadline holds whether a sweeper
        runs or not. Rare, so only then is the board loaded again
        with what waits on them (the expiry ends those too)."""
        post, claim = self.settings.post_timeout, self.settings.claim_timeout
        signals = board.signals
        # past the earliest deadline first (no I/O); only then ask whether a live worker fits them
        late = [sid for sid in signal_ids if sid in signals and overdue(signals[sid], now, post, claim)]
        if late and self._presence is not None:
            if workers is None:  # rare: read outside the board's hold (one connection may be all there is)
                raise _WorkersNeeded
            fits = fitting(
                [signals[sid] for sid in late], workers, self._scorer, self.settings.claim_threshold
            )
            late = [sid for sid in late if overdue(signals[sid], now, post, claim, fits.get(sid))]
        else:
            fits = {}
        if not late:
            return board, False
        board = tx.load(replace(scope, ends=True))
        board.attempts = self._attempts
        for signal_id in late:
            board.expire_if_overdue(signal_id, now, post, claim, fits.get(signal_id))
        return board, True


def _claim_limits(agent: AgentProfile, tx: BoardTransaction, now: datetime) -> ClaimLimits:
    """What limits a claim by `agent` on the transaction's board (domain/limits.py): the agent's key,
    held until the commit and counted under the hold, and the board's budget with what was spent and
    reserved, in one read; then, for an agent with a rate limit only, its key's window, held until the
    commit (domain/rates.py)."""
    limit = agent.concurrency
    seen = tx.limits(None if limit is None else limit.key)
    if seen.reached:
        return ClaimLimits(over_budget=seen.budget.reached(seen.spent) or "budget reached")
    rate = agent.rate_limit
    return ClaimLimits(
        limit,
        seen.held,
        None,
        agent.agent_id,
        agent.spending,
        seen.budget,
        seen.spent + seen.reserved,
        rate,
        None if rate is None else tx.rate_window(rate, now),
        now,
    )


def _take_rate(limits: ClaimLimits, tx: BoardTransaction, claimed: int) -> None:
    """The rate limit's window, less the first call's room of each run claimed, kept with the claims."""
    window = limits.window_after(claimed)
    if window is not None:
        tx.keep_rate_window(window)


def _charge_refused(
    board: BlackboardAggregate, outcome: CompleteSignal | FailSignal, refused: BlackboardError, now: datetime
) -> None:
    """An outcome refused because its run's claim ended by another hand (cancelled, expired, retried after
    it lapsed) still spent what its usage says: charged to the board (BlackboardAggregate.charge_run). An
    outcome refused for any other reason, or a run that spent nothing, charges nothing."""
    usage = outcome.usage
    if usage is None or not (usage.input_tokens or usage.output_tokens or usage.cost_usd):
        return
    try:
        board.charge_run(
            outcome.signal_id,
            outcome.agent_id,
            outcome.token,
            outcome.attempt,
            usage,
            f"its outcome was refused: {refused}",
            now,
        )
    except BlackboardError:  # not a run whose claim ended, or its attempt was charged already: nothing more
        pass
