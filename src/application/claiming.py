"""The claim policy of a worker: which open signals it claims, in what order, and how long it yields first.

A worker asks the read model for the claimable signals of each capability it scores above its
threshold, best capability first, a few more than it has free slots. Of what comes back it claims
the signals it may take, best score first, then oldest, then by id, in one command per board (the
boards in the order of their best signal). When another registered agent fits the first of them
better, it first yields (their score - its own) x head start seconds, so the best fit usually gets it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from blackboard.domain.capabilities import AgentProfile
from blackboard.domain.signals import Candidate


@dataclass(frozen=True, slots=True)
class Search:
    """What to ask the read model for: open signals of each capability in turn, `limit` of each."""

    capabilities: tuple[str, ...]  # best score first
    limit: int


@dataclass(frozen=True, slots=True)
class BoardClaim:
    """One claim command: signals of one board, in the order they are to be claimed."""

    blackboard_id: str
    signal_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ClaimPlan:
    claims: tuple[BoardClaim, ...]  # boards in the order of their best signal
    wait: float  # seconds to yield to a better fit before the first claim


def search_for(profile: AgentProfile, default_threshold: float, free: int) -> Search:
    """The capabilities the agent scores above its threshold, best first; more signals of each than the
    free slots, so that when other workers take the first ones meanwhile the claim goes on to the next."""
    threshold = profile.threshold_or(default_threshold)
    able = sorted((c for c in profile.capabilities if c.score > threshold), key=lambda c: -c.score)
    return Search(capabilities=tuple(c.type for c in able), limit=max(8, 2 * free))


def plan_claims(
    candidates: Iterable[Candidate],
    profile: AgentProfile,
    others: Callable[[], Iterable[AgentProfile]],
    default_threshold: float,
    head_start: float,
    free: int,
) -> ClaimPlan:
    """Every candidate the agent may claim, in claiming order (all of them, not only `free`: the claim
    command stops at the free slots and goes past the ones taken meanwhile), and the yield before.

    `others` is every registered agent (this one may be among them). It is asked only when there is
    something to yield for: a registry answers it by looking at its folder again.
    """
    if free <= 0:
        return ClaimPlan(claims=(), wait=0.0)
    found = {c.signal_id: c for c in candidates}  # a signal found under two capabilities is claimed once
    fitting = [c for c in found.values() if profile.may_claim(c, default_threshold)]
    ordered = sorted(fitting, key=lambda c: (-profile.score(c), c.created_at, c.signal_id))
    by_board: dict[str, list[str]] = {}
    for candidate in ordered:
        by_board.setdefault(candidate.blackboard_id, []).append(candidate.signal_id)
    claims = tuple(BoardClaim(board, tuple(ids)) for board, ids in by_board.items())
    if not ordered or not head_start:
        return ClaimPlan(claims=claims, wait=0.0)
    return ClaimPlan(claims=claims, wait=_yield_to_better_fits(ordered[0], profile, others(), head_start))


def _yield_to_better_fits(
    first: Candidate, profile: AgentProfile, everyone: Iterable[AgentProfile], head_start: float
) -> float:
    """Seconds to wait so that an agent fitting the signal better gets there first (0 if none does)."""
    mine = profile.score(first)
    best_other = max((a.score(first) for a in everyone if a.agent_id != profile.agent_id), default=0.0)
    return max(0.0, best_other - mine) * head_start
