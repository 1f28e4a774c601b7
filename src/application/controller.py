"""The controller (seed 004): what should happen next on a board, and why.

For each open signal that may be claimed now (dependencies released), the runnable agent that fits it
best; the signals in the order a worker claims them (`claiming.best_first`: the most urgent, then the best
score, then the oldest, then by id). An agent without a handler is never proposed; a signal no runnable
agent passes for is listed apart, with its best score, as waiting for an agent.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from blackboard.application.claiming import Fit, best_first, fit
from blackboard.application.commands import GetSignalById, ListSignals
from blackboard.application.ports import AgentRegistry
from blackboard.application.queries import BlackboardQueries
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
    over_budget: tuple[Move, ...] = ()  # on a board whose budget is reached: not claimed until it is raised
    budget_reasons: Mapping[str, str] = field(default_factory=dict)  # board -> why its signals wait


class Controller:
    def __init__(
        self,
        queries: BlackboardQueries,
        registry: AgentRegistry,
        threshold: float,
        over_budget: Callable[[str | None], Mapping[str, str]] | None = None,
    ) -> None:
        self._queries, self._registry, self._threshold = queries, registry, threshold
        self._over_budget = over_budget  # boards whose budget is reached, with why (application/budgets.py)

    def next(self, blackboard_id: str | None, limit: int | None, now: datetime) -> Plan:
        open_signals = [
            s
            for s in self._queries.list_signals(
                ListSignals(status=SignalStatus.POSTED, blackboard_id=blackboard_id)
            )
            if s.is_claimable and s.due(now)  # a signal posted for later is not proposed before then
        ]
        runnable = [a for a in self._registry.get_all() if self._registry.can_run(a.agent_id)]
        chosen: dict[str, Move] = {}
        waiting: list[Move] = []
        reasons = dict(self._over_budget(blackboard_id)) if self._over_budget and open_signals else {}
        stopped: list[Move] = []
        for signal in open_signals:
            fits = [fit(signal, p, self._threshold) for p in self._queries.scorer.profiles(signal, runnable)]
            ranked = best_first(fits)  # one signal: best score first, then by name (the registry's order)
            move = Move(
                signal,
                ranked[0] if ranked else None,
                max((f.score for f in fits), default=0.0),
                now - signal.created_at,
                self._upstreams(signal),
            )
            if signal.blackboard_id in reasons:
                stopped.append(move)
            elif move.best is None:
                waiting.append(move)
            else:
                chosen[signal.signal_id] = move
        order = best_first(m.best for m in chosen.values() if m.best is not None)
        moves = tuple(chosen[f.signal_id] for f in order)
        return Plan(moves[:limit] if limit else moves, tuple(waiting), tuple(stopped), reasons)

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
