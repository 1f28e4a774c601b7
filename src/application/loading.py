"""Which rows a decision needs: a command's scope grown into the part of a board it may touch.

The aggregate's rules read a signal (or every signal of a flow), its upstreams (a new signal waits on
them), every signal that waits on a signal being ended (completing releases them, failing or expiring
ends them too, and so on down the chain while they are still open), the signal behind a dedupe key, and
the latest retry of an upstream. Loading exactly that, under the board's lock, gives the same decisions
as loading the whole board, at a cost that does not grow with the board.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from blackboard.domain.blackboard import BlackboardAggregate
from blackboard.domain.signals import AgentSignal

if TYPE_CHECKING:
    from blackboard.application.ports import BoardRows, Scope


def load_scope(blackboard_id: str, rows: BoardRows, scope: Scope) -> BlackboardAggregate:
    found: dict[str, AgentSignal] = {s.signal_id: s for s in rows.signals(scope.signals, scope.at_most)}
    if scope.flow is not None:
        found.update((s.signal_id, s) for s in rows.flow(scope.flow))
    named = list(found)
    if scope.key is not None and (keyed := rows.with_key(scope.key)) is not None:
        found[keyed.signal_id] = keyed
    ending = list(found.values()) if scope.ends else []
    if scope.overdue is not None:
        ending += [s for s in rows.overdue(scope.overdue) if s.signal_id not in found]
        found.update((s.signal_id, s) for s in ending)
    _add_waiting_chains(rows, ending, found)
    upstreams = set(scope.upstreams)
    if scope.retries:
        upstreams |= {u for sid in named for u in found[sid].after}
    _add(found, rows.signals(upstreams - found.keys()))
    if scope.retries:
        _add_retry_chains(rows, upstreams, found)
    ordered = sorted(found.values(), key=lambda s: (s.created_at, s.signal_id))  # posting order
    return BlackboardAggregate.restore(blackboard_id, rows.version, ordered)


def _add_waiting_chains(rows: BoardRows, ending: list[AgentSignal], found: dict[str, AgentSignal]) -> None:
    """Every dependant of a signal being ended, and theirs while they are open (an ended dependant
    stays as it is, so what waits on it is not touched)."""
    frontier = {s.signal_id for s in ending}
    visited: set[str] = set()
    while frontier:
        visited |= frontier
        dependants = rows.dependants(frontier)
        _add(found, dependants)
        frontier = {d.signal_id for d in dependants if not d.status.is_final} - visited


def _add_retry_chains(rows: BoardRows, upstreams: set[str], found: dict[str, AgentSignal]) -> None:
    frontier = set(upstreams)
    while frontier:
        retries = [r for r in rows.retries(frontier) if r.signal_id not in found]
        _add(found, retries)
        frontier = {r.signal_id for r in retries}


def _add(found: dict[str, AgentSignal], signals: list[AgentSignal]) -> None:
    for signal in signals:
        found.setdefault(signal.signal_id, signal)
