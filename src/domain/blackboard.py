"""The blackboard aggregate: one board's signals, their rules, and the events that change them."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, MutableMapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from blackboard.domain.capabilities import DEFAULT_THRESHOLD, Claimant
from blackboard.domain.errors import (
    AlreadyClaimed,
    BelowThreshold,
    DependenciesPending,
    DuplicateSignal,
    GateNotClaimable,
    GateNotOpen,
    InvalidInput,
    InvalidTransition,
    NotAGate,
    NotTheClaimer,
    NotYetDue,
    RunChargedAlready,
    SignalExpired,
    SignalNotClaimable,
    SignalNotFound,
    StaleClaim,
    TakesNoInput,
    UnknownDependency,
)
from blackboard.domain.events import (
    AgentSignalApproved,
    AgentSignalAttemptFailed,
    AgentSignalCancelled,
    AgentSignalClaimed,
    AgentSignalClaimRenewed,
    AgentSignalCompleted,
    AgentSignalExpired,
    AgentSignalFailed,
    AgentSignalNudged,
    AgentSignalPosted,
    AgentSignalRejected,
    AgentSignalRunCharged,
    AgentSignalStalled,
    AgentSignalUnclaimed,
    BlackboardEvent,
    BoardBudgetSet,
)
from blackboard.domain.evolution import evolve
from blackboard.domain.limits import Budget
from blackboard.domain.presence import WorkerPresence
from blackboard.domain.reservations import Reservation
from blackboard.domain.retries import (
    ONE_ATTEMPT,
    AttemptRules,
    check_max_attempts,
    check_retry_after,
    next_attempt,
)
from blackboard.domain.signals import (
    DEFAULT_PRIORITY,
    LEAST_URGENT,
    MOST_URGENT,
    AgentSignal,
    SignalId,
    SignalPayload,
    SignalResult,
    SignalStatus,
    SignalType,
    SignalUsage,
    entry_number,
)

POSTED, CLAIMED = SignalStatus.POSTED, SignalStatus.CLAIMED
RETRIABLE = (
    SignalStatus.FAILED,
    SignalStatus.EXPIRED,
    SignalStatus.CANCELLED,
)  # what `retry` posts again (and `retry --flow`)


class BlackboardAggregate:
    """Commands check a rule and record an event; only `_apply` changes state.

    An aggregate may hold the whole board (`replay`) or only the part of it a command decides on
    (`restore`, from the rows a unit of work loaded under the board's lock): the signals the command
    names, their upstreams, every signal that waits on them, and what a dedupe key or a retry chain
    points at. The rules below read nothing else, so both give the same decisions.
    """

    def __init__(self, blackboard_id: str, state: Callable[[], MutableMapping[str, Any]] = dict) -> None:
        """`state` makes each mapping the aggregate keeps (a dict; an import's check of a big board
        passes one kept on disk)."""
        self.id = blackboard_id
        self.version = 0
        self._signals: MutableMapping[str, AgentSignal] = state()
        self._by_key: MutableMapping[str, str] = state()
        self._dependants: MutableMapping[str, list[str]] = state()
        self._retried_by: MutableMapping[str, str] = state()  # a signal -> its latest retry
        self._flows: MutableMapping[str, list[str]] = state()  # a flow -> its signals, in posting order
        self.budget = (
            Budget()
        )  # as its BoardBudgetSet events leave it (a replayed board; a restored one: none)
        self._pending: list[BlackboardEvent] = []
        # what a failed attempt asks (the claimer's retry policy, a jitter draw); whoever decides sets it
        self.attempts: AttemptRules = ONE_ATTEMPT

    @classmethod
    def replay(cls, blackboard_id: str, history: Iterable[BlackboardEvent]) -> BlackboardAggregate:
        board = cls(blackboard_id)
        for event in history:
            board.apply(event)
        return board

    @classmethod
    def restore(cls, blackboard_id: str, version: int, signals: Iterable[AgentSignal]) -> BlackboardAggregate:
        """A board at `version` holding these signals, given in the order they were posted. A signal's
        dependants are those among `signals` that come after it, so whoever restores a part of a board
        passes every dependant of each signal a command may end."""
        board = cls(blackboard_id)
        board.version = version
        for signal in signals:
            board._signals[signal.signal_id] = signal
            for upstream in signal.after:
                board._dependants.setdefault(upstream, []).append(signal.signal_id)
            if signal.dedupe_key is not None:
                board._by_key[signal.dedupe_key] = signal.signal_id
            if signal.retry_of is not None:
                board._retried_by[signal.retry_of] = signal.signal_id
            if signal.flow_id is not None:
                board._flows.setdefault(signal.flow_id, []).append(signal.signal_id)
        return board

    # ----------------------------------------------------------------- reading
    @property
    def signals(self) -> Mapping[str, AgentSignal]:
        return dict(self._signals)

    @property
    def signal_count(self) -> int:
        return len(self._signals)

    def signal(self, signal_id: str) -> AgentSignal:
        try:
            return self._signals[signal_id]
        except KeyError:
            raise SignalNotFound(signal_id, self.id) from None

    def find_by_key(self, dedupe_key: str) -> AgentSignal | None:
        signal_id = self._by_key.get(dedupe_key)
        return self._signals[signal_id] if signal_id else None

    @property
    def has_pending_events(self) -> bool:
        return bool(self._pending)

    @property
    def pending_events(self) -> list[BlackboardEvent]:
        """Events recorded but not yet stored."""
        return list(self._pending)

    def flow_signals(self, flow_id: str) -> list[AgentSignal]:
        """The signals of a flow (its steps and their retries), in posting order, as far as this aggregate
        holds them (a decision on a flow loads them all: `Scope.flow`)."""
        return [self._signals[sid] for sid in self._flows.get(flow_id, ())]

    def dependants_of(self, signal_id: str) -> list[str]:
        """The signals of this board that wait for `signal_id`, as far as this aggregate holds them."""
        return list(self._dependants.get(signal_id, ()))

    def collect_events(self) -> list[BlackboardEvent]:
        """Hand over the events recorded since the last call; they count as stored from now on."""
        events, self._pending = self._pending, []
        return events

    # ---------------------------------------------------------------- commands
    def post_signal(
        self,
        *,
        signal_id: str,
        signal_type: SignalType,
        payload: SignalPayload,
        posted_by: str,
        at: datetime,
        target_capabilities: Sequence[str] = (),
        after: Sequence[str] = (),
        dedupe_key: str | None = None,
        retry_of: str | None = None,
        read_keys: Sequence[str] = (),
        write_keys: Sequence[str] = (),
        budget_usd: float | None = None,
        priority: int = DEFAULT_PRIORITY,
        not_before: datetime | None = None,
        max_attempts: int | None = None,
        gate: bool = False,
        timeout_s: float | None = None,
        flow_id: str | None = None,
        step_id: str | None = None,
    ) -> AgentSignal:
        if dedupe_key is not None and (existing := self.find_by_key(dedupe_key)) is not None:
            return existing  # idempotent retry: nothing new is recorded
        upstream = tuple(dict.fromkeys(after))
        self.check_post(
            signal_id, posted_by, target_capabilities, priority, upstream, max_attempts, gate, timeout_s
        )
        self._record(
            AgentSignalPosted,
            at,
            signal_id=signal_id,
            signal_type=signal_type,
            payload=payload,
            target_capabilities=tuple(dict.fromkeys(target_capabilities)) or (signal_type.value,),
            posted_by=posted_by,
            after=upstream,
            dedupe_key=dedupe_key,
            retry_of=retry_of,
            read_keys=tuple(dict.fromkeys(read_keys)),
            write_keys=tuple(dict.fromkeys(write_keys)),
            budget_usd=budget_usd,
            priority=priority,
            not_before=not_before if not_before is not None and not_before > at else None,
            max_attempts=max_attempts,
            gate=gate,
            timeout_s=timeout_s,
            flow_id=flow_id,
            step_id=step_id,
        )
        for dep in upstream:  # an upstream that already ended badly ends this one at once
            if (broken := self._signals[dep]).status.is_final and broken.status is not SignalStatus.COMPLETED:
                self._expire_with_dependants(signal_id, _upstream_reason(broken), at)
                break
        return self._signals[signal_id]

    def claim_signal(
        self,
        signal_id: str,
        agent: Claimant,
        at: datetime,
        default_threshold: float = DEFAULT_THRESHOLD,
        token: str | None = None,
        concurrency_key: str | None = None,
        reserved: Reservation | None = None,
        runner: str | None = None,
    ) -> AgentSignal:
        """`concurrency_key`: the claimer's (domain/limits.py); the caller checked there is room under it.
        `reserved`: what the claim reserves of the board's budget (domain/reservations.py), which the
        caller checked fits. `runner`: the runner its worker runs it with (None: a handler, or by hand)."""
        signal = self.check_claim(signal_id, agent, at, default_threshold)
        self._record(
            AgentSignalClaimed,
            at,
            signal_id=signal_id,
            claimed_by=agent.agent_id,
            score=agent.score(signal),
            token=token,
            concurrency_key=concurrency_key,
            reserved=reserved,
            runner=runner,
        )
        return self._signals[signal_id]

    def check_claim(
        self, signal_id: str, agent: Claimant, at: datetime, default_threshold: float = DEFAULT_THRESHOLD
    ) -> AgentSignal:
        """The signal, if `agent` may claim it at `at`: claimable, and the agent's score above its threshold."""
        signal = self.check_claimable(signal_id, at)
        score, threshold = agent.score(signal), agent.threshold_or(default_threshold)
        if not score > threshold:
            raise BelowThreshold(signal_id, agent.agent_id, score, threshold)
        return signal

    def set_budget(self, budget: Budget, set_by: str, reason: str, at: datetime) -> None:
        """Record the board's budget from now on (`limits.new_budget` checked it against what was spent)."""
        if not set_by:
            raise InvalidInput("by", "must not be empty")
        self._record(BoardBudgetSet, at, usd=budget.usd, tokens=budget.tokens, set_by=set_by, reason=reason)

    def renew_claim(
        self, signal_id: str, agent_id: str, at: datetime, token: str | None = None
    ) -> AgentSignal:
        """The claimer is still working: its claim timeout starts again now."""
        self._check_claimer(signal_id, agent_id, "renewed", token)
        self._record(AgentSignalClaimRenewed, at, signal_id=signal_id, claimed_by=agent_id)
        return self._signals[signal_id]

    def complete_signal(
        self,
        signal_id: str,
        agent_id: str,
        result: SignalResult,
        at: datetime,
        token: str | None = None,
        usage: SignalUsage | None = None,
    ) -> AgentSignal:
        self._check_claimer(signal_id, agent_id, "completed", token)
        self._record(
            AgentSignalCompleted, at, signal_id=signal_id, completed_by=agent_id, result=result, usage=usage
        )
        return self._signals[signal_id]

    def fail_signal(
        self,
        signal_id: str,
        agent_id: str,
        error: str,
        at: datetime,
        token: str | None = None,
        usage: SignalUsage | None = None,
        retry_after: float | None = None,
        stalled: float | None = None,
    ) -> AgentSignal:
        """The claimer's attempt failed. With attempts left (the post's `max_attempts`, else the claimer's
        retry policy) the signal is POSTED again after its backoff, or after `retry_after` seconds when the
        handler asked for that; else it is FAILED and what waits on it expires. `stalled`: its run showed no
        progress for that many seconds and was stopped (docs/control.md, "Stalls"): AgentSignalStalled is
        recorded first, in the same append, and the failure is that attempt's one failure."""
        check_retry_after(retry_after)
        self._check_claimer(signal_id, agent_id, "failed", token)
        if stalled is not None:
            attempt = self._signals[signal_id].attempt
            self._record(
                AgentSignalStalled,
                at,
                signal_id=signal_id,
                actor=agent_id,
                seconds_idle=stalled,
                attempt=attempt,
            )
        if self._retry(self._signals[signal_id], error, at, usage, retry_after):
            return self._signals[signal_id]
        self._record(AgentSignalFailed, at, signal_id=signal_id, failed_by=agent_id, error=error, usage=usage)
        self._expire_dependants(signal_id, at)
        return self._signals[signal_id]

    def charge_run(
        self,
        signal_id: str,
        agent_id: str,
        token: str | None,
        attempt: int | None,
        usage: SignalUsage,
        reason: str,
        at: datetime,
    ) -> AgentSignal:
        """A run whose outcome was refused, its claim ended by another hand: what it spent is charged to the
        board all the same (AgentSignalRunCharged), once for its attempt; the signal stays as it is.
        `attempt`: the number of the attempt whose claim the run held; None: the signal's current one."""
        attempt = self.signal(signal_id).attempt if attempt is None else attempt
        self.check_charge(signal_id, agent_id, token, attempt)
        self._record(
            AgentSignalRunCharged,
            at,
            signal_id=signal_id,
            charged_to=agent_id,
            attempt=attempt,
            usage=usage,
            reason=reason,
        )
        return self._signals[signal_id]

    def check_charge(self, signal_id: str, agent_id: str, token: str | None, attempt: int) -> None:
        """The run of `attempt` is charged once, and only when its claim has ended by another hand: the
        signal CANCELLED or EXPIRED while that attempt's claim, naming the run's agent (and its token, when
        it has one), still held it (`attempt` is the signal's current one); or that attempt's claim, the
        agent's, lapsed and the signal was retried (a failed attempt of that number, expired). A claim the
        run still holds records its outcome instead; any other attempt's run is not this one."""
        signal = self.signal(signal_id)
        if attempt in signal.charged_attempts:
            raise RunChargedAlready(signal_id, attempt)
        held = attempt == signal.attempt and signal.held_by(agent_id, token)
        ended = held and signal.status in (SignalStatus.CANCELLED, SignalStatus.EXPIRED)
        lapsed = any(a.attempt == attempt and a.claimed_by == agent_id and a.expired for a in signal.attempts)
        if ended or lapsed:
            return
        if held and signal.status is CLAIMED:
            raise InvalidTransition(signal_id, signal.status, "charged", (SignalStatus.CANCELLED,))
        raise NotTheClaimer(signal_id, agent_id, signal.claimed_by or "nobody")

    def _retry(
        self,
        signal: AgentSignal,
        reason: str,
        at: datetime,
        usage: SignalUsage | None = None,
        retry_after: float | None = None,
        expired: bool = False,
    ) -> bool:
        """Record a failed attempt and put the signal back to POSTED, if it has attempts left."""
        claimer = signal.claimed_by
        policy = self.attempts.policy_of(claimer) if claimer is not None else None
        following = next_attempt(
            signal.attempt, signal.max_attempts, policy, at, self.attempts.draw(), retry_after
        )
        if following is None:
            return False
        self._record(
            AgentSignalAttemptFailed,
            at,
            signal_id=signal.signal_id,
            attempt=following.attempt,
            max_attempts=following.max_attempts,
            claimed_by=claimer,
            reason=reason,
            retry_at=following.at,
            expired=expired,
            usage=usage,
        )
        return True

    def expire_signal(self, signal_id: str, reason: str, at: datetime) -> AgentSignal:
        self.check_open(signal_id, "expired")
        self._expire_with_dependants(signal_id, reason, at)
        return self._signals[signal_id]

    def mark_unclaimed(self, signal_id: str, reason: str, at: datetime) -> AgentSignal:
        self.check_unclaimed(signal_id)
        self._record(AgentSignalUnclaimed, at, signal_id=signal_id, reason=reason)
        self._expire_dependants(signal_id, at)
        return self._signals[signal_id]

    def cancel_signal(self, signal_id: str, cancelled_by: str, reason: str, at: datetime) -> AgentSignal:
        """End a signal that is not final on purpose: CANCELLED, and so is every open signal that waits on
        it (each naming the upstream that took it down). Whoever holds its claim loses it: an outcome
        sent afterwards is refused."""
        self.check_open(signal_id, "cancelled")
        if not cancelled_by:
            raise InvalidInput("cancelled_by", "must not be empty")
        if not reason:
            raise InvalidInput("reason", "must not be empty")
        self._cancel_with_dependants(signal_id, cancelled_by, reason, None, at)
        return self._signals[signal_id]

    def approve_gate(self, signal_id: str, approved_by: str, note: str | None, at: datetime) -> AgentSignal:
        """A person approves an open gate: COMPLETED, and what waits on it may run."""
        self.check_open_gate(signal_id, "approved", at)
        if not approved_by:
            raise InvalidInput("by", "must name who approves the gate")
        self._record(AgentSignalApproved, at, signal_id=signal_id, approved_by=approved_by, note=note or None)
        return self._signals[signal_id]

    def reject_gate(self, signal_id: str, rejected_by: str, reason: str, at: datetime) -> AgentSignal:
        """A person rejects an open gate: FAILED, and what waits on it expires."""
        self.check_open_gate(signal_id, "rejected", at)
        if not rejected_by:
            raise InvalidInput("by", "must name who rejects the gate")
        if not reason:
            raise InvalidInput("reason", "must say why the gate is rejected")
        self._record(AgentSignalRejected, at, signal_id=signal_id, rejected_by=rejected_by, reason=reason)
        self._expire_dependants(signal_id, at)
        return self._signals[signal_id]

    def nudge_signal(self, signal_id: str, nudged_by: str, text: str, at: datetime) -> AgentSignal:
        """A person's word to the running agent, for its next turn (`check_nudge`). Nothing changes but its
        count of nudges."""
        signal = self.check_nudge(signal_id, nudged_by, text)
        self._record(
            AgentSignalNudged, at, signal_id=signal_id, nudged_by=nudged_by, text=text, attempt=signal.attempt
        )
        return self._signals[signal_id]

    def check_nudge(self, signal_id: str, nudged_by: str, text: str) -> AgentSignal:
        """The signal, if its run may be nudged: CLAIMED, and its claim run by a runner (a handler's run, or a
        claim by hand, reads no input while it runs)."""
        signal = self.signal(signal_id)
        _refuse_expired(signal, "nudged", CLAIMED)
        if signal.status is not CLAIMED:
            raise InvalidTransition(
                signal_id, signal.status, "nudged (a nudge reaches a running agent)", (CLAIMED,)
            )
        if signal.claim_runner is None:
            raise TakesNoInput(signal_id, signal.claimed_by)
        if not nudged_by:
            raise InvalidInput("by", "must name who nudges the run")
        if not text.strip():
            raise InvalidInput("text", "must say something to the running agent")
        return signal

    def check_open_gate(self, signal_id: str, action: str, at: datetime) -> None:
        signal = self.signal(signal_id)
        if not signal.gate:
            raise NotAGate(signal_id, action)
        _refuse_expired(signal, action, POSTED)
        if signal.status is not POSTED:
            raise InvalidTransition(signal_id, signal.status, action, (POSTED,))
        if signal.waiting_for:
            raise GateNotOpen(signal_id, action, f"it waits for {', '.join(sorted(signal.waiting_for))}")
        if not signal.due(at):
            raise GateNotOpen(signal_id, action, f"posted with --not-before {_iso(signal.not_before)}")

    def _cancel_with_dependants(
        self, signal_id: str, cancelled_by: str, reason: str, cause: str | None, at: datetime
    ) -> None:
        self._record(
            AgentSignalCancelled,
            at,
            signal_id=signal_id,
            cancelled_by=cancelled_by,
            reason=reason,
            cause=cause,
        )
        for dependant in self._dependants.get(signal_id, ()):
            if not self._signals[dependant].status.is_final:
                self._cancel_with_dependants(dependant, cancelled_by, reason, signal_id, at)

    def retry_signal(self, signal_id: str, new_signal_id: str, posted_by: str, at: datetime) -> AgentSignal:
        """Post the work of a FAILED, EXPIRED or CANCELLED signal again, as a new signal linked to it.

        It comes after the same upstreams, each replaced by its latest retry, so retrying a failed
        upstream and then its dependant chains them again."""
        old = self.check_retriable(signal_id)
        return self.post_signal(
            signal_id=new_signal_id,
            signal_type=old.signal_type,
            payload=old.payload,
            posted_by=posted_by,
            at=at,
            target_capabilities=old.target_capabilities,
            after=[self.latest_retry(dep) for dep in old.after],
            retry_of=signal_id,
            read_keys=old.read_keys,  # the same work needs the same keys
            write_keys=old.write_keys,
            budget_usd=old.budget_usd,
            priority=old.priority,
            max_attempts=old.max_attempts,
            gate=old.gate,  # a rejected gate retried asks a person again
            timeout_s=old.timeout_s,
            flow_id=old.flow_id,  # a flow's step retried is the same step of the same flow
            step_id=old.step_id,
        )

    def latest_retry(self, signal_id: str) -> str:
        """The newest signal retrying this one (following retries of retries), or itself."""
        while signal_id in self._retried_by:
            signal_id = self._retried_by[signal_id]
        return signal_id

    def expire_overdue(
        self,
        at: datetime,
        post_timeout: timedelta | None,
        claim_timeout: timedelta,
        fitting: Mapping[str, WorkerPresence] | None = None,
    ) -> list[AgentSignal]:
        """Expire every signal past its timeout (and what waits for it); return the signals ended, and those
        whose lapsed claim was a failed attempt with attempts left (POSTED again).
        `fitting` holds, per POSTED signal, the worker that fits it and counted as live the longest
        (see `deadline`); a signal not in it has no such worker."""
        fits = fitting or {}
        late = [
            s.signal_id
            for s in self._signals.values()
            if overdue(s, at, post_timeout, claim_timeout, fits.get(s.signal_id))
        ]
        start = len(self._pending)
        for signal_id in late:
            self.expire_if_overdue(signal_id, at, post_timeout, claim_timeout, fits.get(signal_id))
        touched = dict.fromkeys(event.signal_id for event in self._pending[start:])
        return [self._signals[sid] for sid in touched]

    def expire_if_overdue(
        self,
        signal_id: str,
        at: datetime,
        post_timeout: timedelta | None,
        claim_timeout: timedelta,
        fitting: WorkerPresence | None = None,
    ) -> bool:
        """Record the expiry of a signal past its deadline at `at` (and of what waits for it), as a
        sweep would; whether it did. A command that finds its signal late calls this before deciding,
        so a deadline holds without a sweeper running (docs/agents.md: "Leases, timeouts and expiry").
        `fitting`: the worker that fits the signal and counted as live the longest, if any."""
        signal = self.signal(signal_id)
        if not overdue(signal, at, post_timeout, claim_timeout, fitting):
            return False
        reason = _timeout_reason(signal, post_timeout, claim_timeout, fitting)
        if signal.status is CLAIMED and self._retry(signal, reason, at, expired=True):
            return True  # a lapsed claim is a failed attempt: with attempts left, the signal is POSTED again
        self._expire_with_dependants(signal_id, reason, at)
        return True

    # ------------------------------------------------------------------- rules
    # Each command checks its rule with one of these before it records; an import checks each stored
    # event with the same one against the state before it (domain/admission.py).
    def check_post(
        self,
        signal_id: str,
        posted_by: str,
        target_capabilities: Sequence[str],
        priority: int,
        upstream: Sequence[str],
        max_attempts: int | None = None,
        gate: bool = False,
        timeout_s: float | None = None,
    ) -> None:
        """A new signal: a valid id not on the board yet, a poster, a priority in range, a sensible number of
        attempts, a timeout of its own above 0, known upstreams."""
        _check_post(signal_id, posted_by, target_capabilities)
        check_max_attempts(max_attempts)
        if not MOST_URGENT <= priority <= LEAST_URGENT:
            raise InvalidInput(
                "priority", f"must be from {MOST_URGENT} (most urgent) to {LEAST_URGENT}, got {priority}"
            )
        if timeout_s is not None and not timeout_s > 0:
            raise InvalidInput("timeout", f"must be above 0 seconds, got {timeout_s:g}")
        if signal_id in self._signals:
            raise DuplicateSignal(signal_id)
        for dep in upstream:
            if dep not in self._signals:
                raise UnknownDependency(dep, self.id)

    def check_claimable(self, signal_id: str, at: datetime) -> AgentSignal:
        """Claimable at `at` (AgentSignal.claimable_at: POSTED, waiting for no upstream, not a gate, due), else
        the refusal that says which part fails (the claimant's score is the claim's own)."""
        signal = self.signal(signal_id)
        if signal.claimable_at(at):
            return signal
        _refuse_expired(signal, "claimed", POSTED)
        if signal.status is CLAIMED:
            raise AlreadyClaimed(signal_id, signal.status, signal.claimed_by)
        if signal.status is not POSTED:
            raise SignalNotClaimable(signal_id, signal.status)
        if signal.gate:
            raise GateNotClaimable(signal_id)
        if signal.waiting_for:
            raise DependenciesPending(signal_id, signal.waiting_for)
        if not signal.due(at):
            raise NotYetDue(signal_id, signal.not_before)
        return signal

    def check_claimer(self, signal_id: str, agent_id: str, action: str, token: str | None) -> None:
        """Only the claimer; and when the claim has a token, only with that token."""
        self._check_claimer(signal_id, agent_id, action, token)

    def check_open(self, signal_id: str, action: str) -> AgentSignal:
        """POSTED or CLAIMED: not ended yet (what an expiry or a cancel needs)."""
        signal = self.signal(signal_id)
        if signal.status not in (POSTED, CLAIMED):
            raise InvalidTransition(signal_id, signal.status, action, (POSTED, CLAIMED))
        return signal

    def check_unclaimed(self, signal_id: str) -> AgentSignal:
        signal = self.signal(signal_id)
        if signal.status is not POSTED:
            raise InvalidTransition(signal_id, signal.status, "marked unclaimed", (POSTED,))
        return signal

    def check_retriable(self, signal_id: str) -> AgentSignal:
        """FAILED, EXPIRED or CANCELLED (RETRIABLE): what a retry posts again (a mistaken cancel is undone so)."""
        old = self.signal(signal_id)
        if old.status not in RETRIABLE:
            raise InvalidTransition(signal_id, old.status, "retried", RETRIABLE)
        return old

    # ----------------------------------------------------------------- helpers
    def _check_claimer(self, signal_id: str, agent_id: str, action: str, token: str | None) -> None:
        """Only the claimer; and when the claim has a token, only with that token (AgentSignal.held_by)."""
        signal = self.signal(signal_id)
        _refuse_expired(signal, action, CLAIMED)
        if signal.status is not CLAIMED:
            raise InvalidTransition(signal_id, signal.status, action, (CLAIMED,))
        if signal.held_by(agent_id, token):
            return
        if signal.claimed_by != agent_id:  # which part failed: the name, else the token
            raise NotTheClaimer(signal_id, agent_id, signal.claimed_by or "nobody")
        raise StaleClaim(signal_id, agent_id, action)

    def _expire_with_dependants(self, signal_id: str, reason: str, at: datetime) -> None:
        self._record(AgentSignalExpired, at, signal_id=signal_id, reason=reason)
        self._expire_dependants(signal_id, at)

    def _expire_dependants(self, upstream_id: str, at: datetime) -> None:
        reason = _upstream_reason(self._signals[upstream_id])
        for dependant in self._dependants.get(upstream_id, ()):
            if not self._signals[dependant].status.is_final:
                self._expire_with_dependants(dependant, reason, at)

    def _record(self, event_class: type[BlackboardEvent], at: datetime, **data: Any) -> None:
        event = event_class(blackboard_id=self.id, version=self.version + 1, occurred_at=at, **data)
        self._check_follows(event)
        self._apply(event)
        self.version = event.version
        self._pending.append(event)

    # ---------------------------------------------------------------- mutators
    def apply(self, event: BlackboardEvent) -> None:
        """Fold one stored event into the state; versions must follow each other."""
        if self._pending:
            raise ValueError(
                f"{self.id} holds unsaved events; collect or discard them before applying stored ones"
            )
        self._check_follows(event)
        self._apply(event)
        self.version = event.version

    def _check_follows(self, event: BlackboardEvent) -> None:
        if event.blackboard_id != self.id or event.version != self.version + 1:
            raise ValueError(
                f"event {event.blackboard_id}@{event.version} does not follow {self.id}@{self.version}"
            )

    def _apply(self, event: BlackboardEvent) -> None:
        for signal in evolve(event, self._signals.__getitem__, self._dependants_of):
            self._signals[signal.signal_id] = signal
        if isinstance(event, AgentSignalPosted):
            for upstream in event.after:
                self._dependants.setdefault(upstream, []).append(event.signal_id)
            if event.dedupe_key is not None:
                self._by_key[event.dedupe_key] = event.signal_id
            if event.retry_of is not None:
                self._retried_by[event.retry_of] = event.signal_id
            if event.flow_id is not None:
                self._flows.setdefault(event.flow_id, []).append(event.signal_id)
        elif isinstance(event, BoardBudgetSet):
            self.budget = Budget(event.usd, event.tokens)

    def _dependants_of(self, signal_id: str) -> list[str]:
        return self._dependants.get(signal_id, [])


def highest_entry(history: Iterable[BlackboardEvent]) -> int:
    """The highest N of the entry ids `e-N` a board's history posted, 0 for none (what a post numbering its
    entry reads while the read model is behind the log: BoardTransaction.highest_entry)."""
    return max(
        (entry_number(e.payload.entry_id) for e in history if isinstance(e, AgentSignalPosted)), default=0
    )


def _check_post(signal_id: str, posted_by: str, target_capabilities: Sequence[str]) -> None:
    try:
        SignalId(signal_id)
    except ValueError as bad:
        raise InvalidInput("signal_id", str(bad)) from None
    if not posted_by:
        raise InvalidInput("posted_by", "must not be empty")
    if any(not capability for capability in target_capabilities):
        raise InvalidInput("target_capabilities", "every capability must be a non-empty name")


def deadline(
    signal: AgentSignal,
    post_timeout: timedelta | None,
    claim_timeout: timedelta,
    fitting: WorkerPresence | None = None,
) -> datetime | None:
    """When an open signal runs out of time. Claimed: `claim_timeout` after its claim was taken or last
    renewed. Claimable and not claimed: its post timeout (`post_timeout_of`: its own, else the default
    `post_timeout`; none when neither is set, the default) after the later of the moment it became
    claimable and the moment `fitting` (the worker that fits it and counted as live the longest) stopped
    counting as live; so the post timeout runs only while no live worker fits it, and a signal queued
    behind a busy worker that fits it waits for that worker. None while it waits for upstreams, once it
    has ended, and while it waits for a worker with no post timeout. A gate: its own timeout
    (`timeout_s`) after it opened, and none without one (no worker ever fits a gate, so the default does
    not apply). Without `fitting` the deadline is the earliest it can be: what waits for a worker's
    presence reads only the signals past it."""
    if signal.gate:  # no worker fits a gate: it waits for a person, for its own timeout at most
        if signal.status is POSTED and signal.claimable_since is not None and signal.timeout_s:
            return signal.claimable_since + timedelta(seconds=signal.timeout_s)
        return None
    if signal.status is POSTED and signal.claimable_since is not None:
        timeout = post_timeout_of(signal, post_timeout)
        if timeout is None:  # it waits for a worker that fits, however long
            return None
        since = signal.claimable_since
        if fitting is not None and fitting.live_until > since:
            since = fitting.live_until
        return since + timeout
    if signal.status is CLAIMED and signal.lease_started is not None:
        return signal.lease_started + claim_timeout
    return None


def post_timeout_of(signal: AgentSignal, default: timedelta | None) -> timedelta | None:
    """How long the signal may wait unclaimed while no live worker fits it: its own timeout (`post
    --timeout`), else the default (`BLACKBOARD_POST_TIMEOUT`); None: as long as it takes."""
    return timedelta(seconds=signal.timeout_s) if signal.timeout_s else default


def overdue(
    signal: AgentSignal,
    at: datetime,
    post_timeout: timedelta | None,
    claim_timeout: timedelta,
    fitting: WorkerPresence | None = None,
) -> bool:
    """Whether the signal is past its deadline at `at` (`deadline`): unclaimed while no live worker fits
    it for too long, or its claim not renewed."""
    due = deadline(signal, post_timeout, claim_timeout, fitting)
    return due is not None and at >= due


def _refuse_expired(signal: AgentSignal, action: str, allowed: SignalStatus) -> None:
    """An expired signal's refusal says when it expired and why."""
    if signal.status is SignalStatus.EXPIRED:
        reason = signal.result.error if signal.result and signal.result.error else "no reason given"
        raise SignalExpired(signal.signal_id, action, allowed, signal.completed_at, reason)


def _timeout_reason(
    signal: AgentSignal,
    post_timeout: timedelta | None,
    claim_timeout: timedelta,
    fitting: WorkerPresence | None,
) -> str:
    if signal.gate:
        return f"no one decided the gate within {signal.timeout_s or 0:g}s of it opening"
    if signal.status is POSTED:
        waited = post_timeout_of(signal, post_timeout) or timedelta(0)  # overdue: it has one
        late = f"not claimed within {waited.total_seconds():g}s of becoming claimable"
        since = signal.claimable_since
        if fitting is not None and since is not None and fitting.live_until > since:
            return f"{late}; the last worker that fits it, {fitting.label}, {fitting.gone}"
        return f"{late}; no live worker fits it since it became claimable at {_iso(since)}"
    return (
        f"{signal.claimed_by} did not finish within the claim timeout of {claim_timeout.total_seconds():g}s"
    )


def _iso(moment: datetime | None) -> str:
    return moment.isoformat() if moment is not None else "an unknown time"


def _upstream_reason(upstream: AgentSignal) -> str:
    why = upstream.result.error if upstream.result and upstream.result.error else "no reason given"
    return f"upstream {upstream.signal_id} ended {upstream.status}: {why}"
