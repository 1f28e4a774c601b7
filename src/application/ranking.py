"""The controller (seed 004): what should happen next on a board, and why.

For each open signal that may be claimed now (dependencies released), the runnable agent that fits it
best; the signals in the order a worker claims them (`claiming.best_first`: the most urgent, then the best
score, then the oldest, then by id). An agent without a handler is never proposed; a signal no runnable
agent passes for is listed apart, with its best score, as waiting for an agent; one its board's budget
holds back, with why (the budget reached, or what its best agent's run would reserve does not fit in what
is left, taken in that order: domain/limits.py); one whose best agent's rate limit has no room in its
window now, as `waiting: rate limit K` (domain/rates.py); one whose best agent's concurrency key has as many
signals claimed under it as its maximum, as the claim refuses it (domain/limits.py); an open gate, as
waiting for a person; and one posted for later (`not_before` still to come), as waiting for its time, with
the agent that would take it then.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from blackboard.application.budgets import BoardBudget
from blackboard.application.claiming import Fit, best_first, fit
from blackboard.application.commands import GetSignalById, ListSignals
from blackboard.application.ports import AgentRegistry
from blackboard.application.queries import BlackboardQueries
from blackboard.domain.capabilities import AgentProfile
from blackboard.domain.limits import (
    BudgetReached,
    ClaimLimits,
    ConcurrencyLimit,
    ConcurrencyLimitReached,
    Spent,
)
from blackboard.domain.rates import RateLimit, RateWindow, waiting_for_rate_limit
from blackboard.domain.signals import AgentSignal, SignalStatus


@dataclass(frozen=True, slots=True)
class Upstream:
    """A signal this one waited for: released (it completed), and whether it left a result to read."""

    signal_id: str
    status: SignalStatus
    has_result: bool


@dataclass(frozen=True, slots=True)
class Move:
    """One open signal and the runnable agent to act on it (None: no runnable agent passes for it)."""

    signal: AgentSignal
    best: Fit | None  # the best runnable agent that passes
    best_score: float  # the best score of any runnable agent, passing or not
    age: timedelta  # since it was posted
    upstreams: tuple[Upstream, ...]


@dataclass(frozen=True, slots=True)
class Plan:
    moves: tuple[Move, ...]  # claim order: what a worker of each agent would take first
    waiting: tuple[Move, ...]  # claimable, but no runnable agent scores above its threshold (oldest first)
    over_budget: tuple[Move, ...] = ()  # held back by its board's budget: not claimed until there is room
    budget_reasons: Mapping[str, str] = field(default_factory=dict)  # board -> why its signals wait
    budget_waits: Mapping[str, str] = field(default_factory=dict)  # signal -> why it waits (a reservation)
    gates: tuple[Move, ...] = ()  # open gates: each waits for a person to approve or reject it (oldest first)
    later: tuple[Move, ...] = ()  # posted for later (`not_before` to come; a gate too): soonest first
    rate_limited: tuple[Move, ...] = ()  # its best agent's rate limit has no room now: claimed once it has
    rate_waits: Mapping[str, str] = field(
        default_factory=dict
    )  # signal -> the key K of the rate limit holding it
    keyed: tuple[Move, ...] = ()  # its best agent's concurrency key is full: claimed once a claim ends
    key_waits: Mapping[str, str] = field(default_factory=dict)  # signal -> why it waits (the claim's words)

    @property
    def waits(self) -> bool:
        """Whether anything open waits for something other than a worker: a budget, a person, a time, an
        agent that fits, a rate limit or a concurrency key."""
        return bool(
            self.waiting or self.over_budget or self.gates or self.later or self.rate_limited or self.keyed
        )

    def held(self) -> dict[str, str]:
        """Why each signal a limit holds back waits, as `next --json` gives its `reason`: its board's budget
        (reached, or what its run would reserve does not fit), its concurrency key, its rate limit."""
        why = {m.signal.signal_id: self.budget_reasons.get(m.signal.blackboard_id) for m in self.over_budget}
        why.update(self.budget_waits)
        why.update(self.key_waits)
        why.update({signal_id: waiting_for_rate_limit(key) for signal_id, key in self.rate_waits.items()})
        return {signal_id: reason for signal_id, reason in why.items() if reason is not None}


class Controller:
    def __init__(
        self,
        queries: BlackboardQueries,
        registry: AgentRegistry,
        threshold: float,
        budgets: Callable[[str | None], Mapping[str, BoardBudget]] | None = None,
        rates: Callable[[], Iterable[RateWindow]] | None = None,
        claimed: Callable[[], Mapping[str, int]] | None = None,
    ) -> None:
        self._queries, self._registry, self._threshold = queries, registry, threshold
        self._budgets = budgets  # the boards with a budget, as a claim there decides (application/budgets.py)
        self._rates = rates  # the rate limits' windows, read only when a runnable agent has a rate limit
        self._claimed = claimed  # live claims per concurrency key, read only when a runnable agent has a key

    def next(
        self,
        blackboard_id: str | None,
        limit: int | None,
        now: datetime,
        labels: tuple[str, ...] = (),
        signals: Sequence[AgentSignal] | None = None,
    ) -> Plan:
        """`labels`: only the signals carrying every one of these (the validated ListSignals' rule).
        `signals`: plan these (those of them POSTED), read already, rather than the board's POSTED ones."""
        listed = (
            self._queries.list_signals(
                ListSignals(status=SignalStatus.POSTED, blackboard_id=blackboard_id, labels=labels)
            )
            if signals is None
            else [s for s in signals if s.status is SignalStatus.POSTED]
        )
        posted = [
            s
            for s in listed
            if not s.waiting_for  # one that waits for an upstream: the upstream is what comes next
        ]
        # a signal posted for later is not proposed before then, and a gate never is: a person decides it
        open_signals = [s for s in posted if s.claimable_at(now)]
        runnable = [a for a in self._registry.get_all() if self._registry.can_run(a.agent_id)]
        gates = tuple(self._move(s, None, 0.0, now) for s in posted if s.waits_for_a_person(now))
        later = tuple(
            self._scored(s, runnable, now)
            for s in sorted(posted, key=lambda s: (s.not_before or now, s.created_at, s.signal_id))
            if s.waits_for_its_time(now)
        )
        chosen: dict[str, Move] = {}
        waiting: list[Move] = []
        states = dict(self._budgets(blackboard_id)) if self._budgets and open_signals else {}
        reasons = {board: why for board, state in states.items() if (why := state.reached) is not None}
        stopped: list[Move] = []
        for signal in open_signals:
            move = self._scored(signal, runnable, now)
            if signal.blackboard_id in reasons:
                stopped.append(move)
            elif move.best is None:
                waiting.append(move)
            else:
                chosen[signal.signal_id] = move
        order = best_first(m.best for m in chosen.values() if m.best is not None)
        ordered, key_waits = self._within_concurrency([chosen[f.signal_id] for f in order], runnable)
        keyed = tuple(m for m in chosen.values() if m.signal.signal_id in key_waits)
        moves, waits = self._within_budgets(list(ordered), runnable, states)
        stopped += [m for m in chosen.values() if m.signal.signal_id in waits]
        moves, rate_waits = self._within_rate_limits(moves, runnable, now)
        limited = tuple(m for m in chosen.values() if m.signal.signal_id in rate_waits)
        return Plan(
            moves[:limit] if limit else moves,
            tuple(waiting),
            tuple(stopped),
            reasons,
            waits,
            gates,
            later,
            limited,
            rate_waits,
            keyed,
            key_waits,
        )

    def _within_concurrency(
        self, moves: list[Move], agents: list[AgentProfile]
    ) -> tuple[tuple[Move, ...], dict[str, str]]:
        """The moves whose best agent's concurrency key has room under what is claimed now, and why each of
        the others waits, in the words the claim refuses it with (nothing read when no runnable agent has a
        key)."""
        keys = {a.agent_id: a.concurrency for a in agents if a.concurrency is not None}
        if not keys or self._claimed is None or not moves:
            return tuple(moves), {}
        claimed = self._claimed()
        refusals: dict[ConcurrencyLimit, str | None] = {}  # the claim's decision, the same for every signal
        kept, waits = [], {}
        for move in moves:
            key = keys.get(move.best.agent_id) if move.best is not None else None
            if key is not None and key not in refusals:
                try:
                    ClaimLimits(key, claimed.get(key.key, 0)).check(
                        move.signal.signal_id, move.signal.blackboard_id, 0
                    )
                    refusals[key] = None
                except ConcurrencyLimitReached as refused:  # its message, past the signal's id
                    refusals[key] = str(refused).removeprefix(f"{move.signal.signal_id} ")
            why = refusals.get(key) if key is not None else None
            if why is None:
                kept.append(move)
            else:
                waits[move.signal.signal_id] = why
        return tuple(kept), waits

    def _within_rate_limits(
        self, moves: tuple[Move, ...], agents: list[AgentProfile], now: datetime
    ) -> tuple[tuple[Move, ...], dict[str, str]]:
        """The moves whose best agent's rate limit has room now, and the key holding each of the others
        (nothing read when no runnable agent has a rate limit)."""
        limits = {a.agent_id: a.rate_limit for a in agents if a.rate_limit is not None}
        if not limits or self._rates is None or not moves:
            return moves, {}
        holding = rate_limits_holding(self._rates(), limits.values(), now)
        kept, waits = [], {}
        for move in moves:
            limit = limits.get(move.best.agent_id) if move.best is not None else None
            if limit is not None and limit.key in holding:
                waits[move.signal.signal_id] = limit.key
            else:
                kept.append(move)
        return tuple(kept), waits

    def best_for(self, signal: AgentSignal, runnable: list[AgentProfile], now: datetime) -> Move:
        """The signal with the runnable agent that fits it best, as `next` ranks it."""
        return self._scored(signal, runnable, now)

    def _scored(self, signal: AgentSignal, runnable: list[AgentProfile], now: datetime) -> Move:
        """The signal with the runnable agent that fits it best (None: none passes) and the best score."""
        fits = [fit(signal, p, self._threshold) for p in self._queries.scorer.profiles(signal, runnable)]
        ranked = best_first(fits)  # one signal: best score first, then by name (the registry's order)
        return self._move(
            signal, ranked[0] if ranked else None, max((f.score for f in fits), default=0.0), now
        )

    def _move(self, signal: AgentSignal, best: Fit | None, score: float, now: datetime) -> Move:
        return Move(signal, best, score, now - signal.created_at, self._upstreams(signal))

    @staticmethod
    def _within_budgets(
        moves: list[Move], agents: list[AgentProfile], states: Mapping[str, BoardBudget]
    ) -> tuple[tuple[Move, ...], dict[str, str]]:
        """The moves whose claim the board's budget lets through, in claim order, each reserving what its
        best agent's run would (domain/limits.py); and why each of the others waits."""
        if not states:
            return tuple(moves), {}
        profiles = {a.agent_id: a for a in agents}
        kept, waits, taken = [], {}, {}
        for move in moves:
            board, best = move.signal.blackboard_id, move.best
            state = states.get(board)
            agent = profiles.get(best.agent_id) if best is not None else None
            if state is None or agent is None or agent.spending is None:
                kept.append(move)
                continue
            limits = ClaimLimits(
                agent_id=agent.agent_id,
                spending=agent.spending,
                budget=state.budget,
                committed=state.spent + state.reserved,
            )
            try:
                reserved = limits.reserve(
                    move.signal.signal_id, board, move.signal.budget_usd, taken.get(board, Spent())
                )
            except BudgetReached as refused:  # its message, past the signal's id: why, and what to do
                waits[move.signal.signal_id] = str(refused).removeprefix(f"{move.signal.signal_id} ")
                continue
            taken[board] = taken.get(board, Spent()) + Spent.reserved_by(reserved)
            kept.append(move)
        return tuple(kept), waits

    def _upstreams(self, signal: AgentSignal) -> tuple[Upstream, ...]:
        found = []
        for upstream_id in signal.after:
            upstream = self._queries.get_signal(GetSignalById(signal_id=upstream_id))
            result = upstream.result
            found.append(
                Upstream(
                    upstream_id,
                    upstream.status,
                    bool(result and (result.artifact_path or result.knowledge_items)),
                )
            )
        return tuple(found)


@dataclass(frozen=True, slots=True)
class BudgetHold:
    """Why a POSTED signal's board budget holds it back (`show`, `next`, and a `solve` step), and whether only
    a higher budget frees it: the budget reached, or a reservation that does not fit while the board's open
    claims reserve nothing (no run's end can leave room)."""

    reason: str
    lasting: bool


def budget_hold(
    queries: BlackboardQueries,
    registry: AgentRegistry,
    threshold: float,
    budgets: Callable[[str | None], Mapping[str, BoardBudget]],
    signal_id: str,
    blackboard_id: str,
    now: datetime,
) -> BudgetHold | None:
    """Why the board's budget holds the signal back, as `next` plans it (None: it does not; a board without
    a budget costs the one read of `budgets`)."""
    states = dict(budgets(blackboard_id))
    state = states.get(blackboard_id)
    if state is None:
        return None
    plan = Controller(queries, registry, threshold, lambda _board: states).next(blackboard_id, None, now)
    if signal_id in plan.budget_waits:
        return BudgetHold(plan.budget_waits[signal_id], state.reserved == Spent())
    if any(m.signal.signal_id == signal_id for m in plan.over_budget):
        reason = plan.budget_reasons[blackboard_id]
        return BudgetHold(
            f"waits: blackboard {blackboard_id} {reason}; raise it with blackboard budget {blackboard_id}",
            True,
        )
    return None


def rate_limits_holding(
    windows: Iterable[RateWindow], limits: Iterable[RateLimit], now: datetime
) -> dict[str, float]:
    """The keys whose window has no room for a call now, with the seconds until it has (a key never used
    has room: its window is full)."""
    by_key = {w.key: w for w in windows}
    holding: dict[str, float] = {}
    for limit in limits:
        window = by_key.get(limit.key)
        if window is not None and (wait := window.wait(limit, now)) > 0:
            holding[limit.key] = max(wait, holding.get(limit.key, 0.0))
    return holding


def rate_hold(
    queries: BlackboardQueries,
    registry: Callable[[], AgentRegistry],
    threshold: float,
    windows: list[RateWindow],
    signal: AgentSignal,
    now: datetime,
) -> str | None:
    """The key of the rate limit holding a POSTED signal (`show`): that of the runnable agent that fits it
    best, when its window has no room now; None otherwise. The agents are read only when a window holds."""
    if signal.status is not SignalStatus.POSTED or not signal.claimable_at(now) or signal.waiting_for:
        return None
    if not any(w.holds(now) > 0 for w in windows):
        return None
    agents = registry()
    runnable = [a for a in agents.get_all() if agents.can_run(a.agent_id)]
    controller = Controller(queries, agents, threshold, rates=lambda: windows)
    best = controller.best_for(signal, runnable, now).best
    agent = next((a for a in runnable if best is not None and a.agent_id == best.agent_id), None)
    if agent is None or agent.rate_limit is None:
        return None
    return agent.rate_limit.key if rate_limits_holding(windows, [agent.rate_limit], now) else None


def rate_limited(plan: Plan) -> dict[str, dict[str, int]]:
    """Per board, how many of its signals each rate limit's key holds (`status`, `/metrics`)."""
    counted: dict[str, dict[str, int]] = {}
    for move in plan.rate_limited:
        key = plan.rate_waits[move.signal.signal_id]
        by_key = counted.setdefault(move.signal.blackboard_id, {})
        by_key[key] = by_key.get(key, 0) + 1
    return counted
