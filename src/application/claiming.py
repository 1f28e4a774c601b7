"""The claim policy of a worker: which open signals it claims, in what order, and how long it yields first.

A worker asks the read model for the claimable signals of each capability it scores above its
threshold, best capability first (and those targeting `auto`, scored by text), a few more than it has
free slots, the most urgent first. Of what comes back it claims the signals it may take in the claim order
(`best_first`: the most urgent first, then the best score, then the oldest, then by id), in one command per
board (the boards in the order of their best signal). When another registered agent fits the first of
them better, it first yields (their score - its own) x head start seconds, so the best fit usually gets it.
`blackboard next` orders what it proposes with the same `best_first`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime

from blackboard.domain.capabilities import AUTO, AgentProfile, Claimant, canonical_capability
from blackboard.domain.signals import AgentSignal, Candidate

# an agent as it scores for one candidate (its text score as capability `auto`): application/scoring.py
Rescore = Callable[[AgentProfile, Candidate], Claimant]


def _as_declared(profile: AgentProfile, _: Candidate) -> Claimant:
    return profile


@dataclass(frozen=True, slots=True)
class Fit:
    """One agent for one claimable signal: its score for it and its threshold."""

    signal_id: str
    blackboard_id: str
    created_at: datetime
    agent_id: str
    score: float
    threshold: float
    priority: int = 2  # the signal's: 0 most urgent

    @property
    def passes(self) -> bool:
        return self.score > self.threshold


def fit(candidate: Candidate | AgentSignal, profile: Claimant, default_threshold: float) -> Fit:
    return Fit(
        candidate.signal_id,
        candidate.blackboard_id,
        candidate.created_at,
        profile.agent_id,
        profile.score(candidate),
        profile.threshold_or(default_threshold),
        candidate.priority,
    )


def best_first(fits: Iterable[Fit]) -> list[Fit]:
    """The claim order, for a worker's own candidates and for `next` alike: the fits above their
    threshold, the most urgent signal first (priority 0), then the best score, then the oldest signal,
    then by signal id."""
    return sorted(
        (f for f in fits if f.passes), key=lambda f: (f.priority, -f.score, f.created_at, f.signal_id)
    )


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
    """The capabilities the agent scores above its threshold, best first, then `auto` (signals scored by
    text: any agent may fit one); more signals of each than the free slots, so that when other workers
    take the first ones meanwhile the claim goes on to the next."""
    threshold = profile.threshold_or(default_threshold)
    able = sorted(
        (c for c in profile.capabilities if c.score > threshold and c.type != canonical_capability(AUTO)),
        key=lambda c: -c.score,
    )
    return Search(capabilities=(*(c.type for c in able), AUTO), limit=max(8, 2 * free))


def plan_claims(
    candidates: Iterable[Candidate],
    profile: AgentProfile,
    others: Callable[[], Iterable[AgentProfile]],
    default_threshold: float,
    head_start: float,
    free: int,
    rescore: Rescore = _as_declared,
    at_most: int | None = None,
) -> ClaimPlan:
    """Every candidate the agent may claim, in claiming order (all of them, not only `free`: the claim
    command stops at the free slots and goes past the ones taken meanwhile), or the first `at_most` of
    them (what a claim names stays bounded however many were found), and the yield before.

    `others` is every registered agent (this one may be among them). It is asked only when there is
    something to yield for: a registry answers it by looking at its folder again.
    """
    if free <= 0:
        return ClaimPlan(claims=(), wait=0.0)
    found = {c.signal_id: c for c in candidates}  # a signal found under two capabilities is claimed once
    ordered = best_first(fit(c, rescore(profile, c), default_threshold) for c in found.values())[:at_most]
    by_board: dict[str, list[str]] = {}
    for chosen in ordered:
        by_board.setdefault(chosen.blackboard_id, []).append(chosen.signal_id)
    claims = tuple(BoardClaim(board, tuple(ids)) for board, ids in by_board.items())
    if not ordered or not head_start:
        return ClaimPlan(claims=claims, wait=0.0)
    first = found[ordered[0].signal_id]
    best_other = max(
        (rescore(a, first).score(first) for a in others() if a.agent_id != profile.agent_id), default=0.0
    )
    return ClaimPlan(claims=claims, wait=max(0.0, best_other - ordered[0].score) * head_start)
