"""`blackboard next`: the controller's ranking as text and JSON (application/ranking.py)."""

from __future__ import annotations

import argparse
from collections.abc import Collection
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from dependency_injector.wiring import Provide, inject

from blackboard.domain.errors import InvalidInput
from blackboard.infrastructure.cli.signal_text import Output
from blackboard.infrastructure.composition.container import Container
from blackboard.infrastructure.composition.settings import BlackboardSettings
from blackboard.infrastructure.interfaces.waiting import (
    approve_command,
    waiting_for_a_person,
    waiting_for_a_time,
    waiting_for_a_worker,
)

if TYPE_CHECKING:
    from blackboard.application.ranking import Move

Lazy = Any


@inject
def next_moves(
    args: argparse.Namespace,
    config: BlackboardSettings = Provide[Container.config],
    queries: Lazy = Provide[Container.queries.provider],
    registry: Lazy = Provide[Container.agent_registry.provider],
    clock: Lazy = Provide[Container.clock.provider],
    read_model: Lazy = Provide[Container.read_model.provider],
    rate_windows: Lazy = Provide[Container.rate_windows.provider],
) -> Output:
    from blackboard.application.budgets import budget_states
    from blackboard.application.ranking import Controller  # imported by this command only

    if args.limit is not None and args.limit < 1:
        raise InvalidInput("--limit", f"must be 1 or more, got {args.limit}")
    now = clock().now()
    lapsed = now - timedelta(seconds=config.claim_timeout)  # claims older than that count no more
    plan = Controller(
        queries(),
        registry(),
        config.claim_threshold,
        lambda board: budget_states(read_model(), board, lapsed),
        lambda: rate_windows().windows(),
        lambda: read_model().claimed_under(lapsed),
    ).next(args.blackboard, args.limit, now, tuple(args.labels))
    # a move no live worker fits waits for one: said with it (its agent's worker would take it)
    unstarted = queries().waiting_for_workers(m.signal for m in plan.moves)
    data = {
        "next": [_move(m, unstarted) for m in plan.moves],
        "waiting_for_an_agent": [_move(m) for m in plan.waiting],
    }
    why = plan.held()
    data["waiting_for_a_budget"] = [{**_move(m), "reason": why[m.signal.signal_id]} for m in plan.over_budget]
    data["waiting_for_a_concurrency_key"] = [
        {**_move(m), "reason": why[m.signal.signal_id]} for m in plan.keyed
    ]
    data["waiting_for_a_person"] = [{**_move(m), "reason": _person(m)} for m in plan.gates]
    data["waiting_for_a_time"] = [
        {**_move(m), "not_before": m.signal.not_before.isoformat(), "reason": _time(m)} for m in plan.later
    ]
    data["waiting_for_a_rate_limit"] = [
        {**_move(m), "key": plan.rate_waits[m.signal.signal_id], "reason": why[m.signal.signal_id]}
        for m in plan.rate_limited
    ]
    lines = [f"{n}. {_line(m, unstarted)}" for n, m in enumerate(plan.moves, 1)]
    if not lines:  # what waits, and why, rather than "nothing to do" while something does wait
        lines = (
            ["nothing to claim now; what waits, and why:"]
            if plan.waits
            else ["nothing to do next: no open signal a runnable agent fits"]
        )
    if plan.gates:
        lines += [
            "waiting for a person (a gate: approve it, or reject it with blackboard reject SIG --reason):"
        ]
        lines += [f"   {_head(m)}: {_approve(m)}" for m in plan.gates]
    if plan.later:
        lines += ["waiting for a time (posted with --not-before, or a retry's wait):"]
        lines += [f"   {_line(m)}: {_time(m)}" for m in plan.later]
    if plan.waiting:
        lines += ["waiting for an agent (no runnable agent scores above its threshold):"]
        lines += [f"   {_line(m)}" for m in plan.waiting]
    for board, reason in plan.budget_reasons.items():
        lines += [f"waiting for a budget on {board} ({reason}; raise it with blackboard budget {board}):"]
        lines += [f"   {_line(m)}" for m in plan.over_budget if m.signal.blackboard_id == board]
    if plan.budget_waits:
        lines += ["waiting for room in a budget (what the run would reserve does not fit):"]
        lines += [
            f"   {_line(m)}: {plan.budget_waits[m.signal.signal_id]}"
            for m in plan.over_budget
            if m.signal.signal_id in plan.budget_waits
        ]
    if plan.keyed:
        lines += [
            "waiting for a concurrency key (as many claimed under it as its max; claimed once one ends):"
        ]
        lines += [f"   {_line(m)}: {why[m.signal.signal_id]}" for m in plan.keyed]
    if plan.rate_limited:
        lines += ["waiting for a rate limit (its window has no room now; claimed once it has):"]
        lines += [f"   {_line(m)}: {why[m.signal.signal_id]}" for m in plan.rate_limited]
    return Output(data, "\n".join(lines))


def _move(move: Move, unstarted: Collection[str] = ()) -> dict[str, Any]:
    """`waiting` (a worker that fits) when the signal is in `unstarted`: no live worker fits it."""
    s, best = move.signal, move.best
    waiting = {"waiting": waiting_for_a_worker(s.target_capabilities)} if s.signal_id in unstarted else {}
    return {
        "signal_id": s.signal_id,
        "blackboard_id": s.blackboard_id,
        "signal_type": s.signal_type.value,
        "topic": s.payload.topic,
        "priority": s.priority,
        "target_capabilities": list(s.target_capabilities),
        "agent": best.agent_id if best else None,
        "score": best.score if best else move.best_score,
        "threshold": best.threshold if best else None,
        "age_seconds": round(move.age.total_seconds(), 3),
        "dependencies": [
            {"signal_id": u.signal_id, "status": u.status.value, "result_present": u.has_result}
            for u in move.upstreams
        ],
        **waiting,
    }


def _approve(move: Move) -> str:
    return approve_command(move.signal.signal_id)


def _person(move: Move) -> str:
    return waiting_for_a_person(move.signal.signal_id)


def _time(move: Move) -> str:
    not_before = move.signal.not_before
    assert not_before is not None  # Plan.later holds signals posted for later only
    return waiting_for_a_time(not_before, move.signal.gate)


def _head(move: Move) -> str:
    s = move.signal
    return f"{s.signal_id} P{s.priority} {s.signal_type.value} {s.payload.topic!r}"


def _line(move: Move, unstarted: Collection[str] = ()) -> str:
    s, best = move.signal, move.best
    who = (
        f"{best.agent_id} (score {best.score:.2f} > {best.threshold:.2f})"
        if best
        else f"best score {move.best_score:.2f}"
    )
    deps = (
        "; ".join(
            f"after {u.signal_id} {u.status.value.lower()}, {'result present' if u.has_result else 'no result'}"
            for u in move.upstreams
        )
        or "no dependencies"
    )
    head = _head(move)
    unattended = (
        f"; waiting for {waiting_for_a_worker(s.target_capabilities)} (none is live)"
        if s.signal_id in unstarted
        else ""
    )
    return f"{head} -> {who}, waiting {_age(move.age)}, {deps}{unattended}"


def _age(age: timedelta) -> str:
    seconds = int(age.total_seconds())
    if seconds < 120:
        return f"{seconds}s"
    return f"{seconds // 60}m" if seconds < 7200 else f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"
