"""Random stories that move signals along as real use does: posts (two in five after an open signal, so its
completion releases them), claims by an agent that may take the signal, completions and failures by the
claimer, time passing past the timeouts and sweeps, retries of what failed or expired, and now and then a
refused command (a claim by the wrong agent, a completion by someone else).

`play(board, seed, length)` runs one on any tests.fakes.Board (in memory, or SqlBoard); `shares` measures,
over many seeds, how many stories hold each kind of event, so a test can keep the mix honest."""

from __future__ import annotations

import random
from collections import Counter

from blackboard.application.commands import (
    ClaimSignal,
    CompleteSignal,
    ExpireSignals,
    FailSignal,
    PostSignal,
    RetrySignal,
)
from blackboard.application.ports import SignalFilter
from blackboard.domain.errors import BlackboardError
from blackboard.domain.signals import SignalStatus

TAKES = {
    "RESEARCH": "ps-researcher",
    "ANALYSIS": "ps-analyst",
    "REVIEW": "ps-reviewer",
}  # tests.integration.conftest.AGENTS
MIX = {"post": 30, "claim": 28, "complete": 16, "fail": 6, "time": 6, "retry": 4, "refused": 4}


def play(board, seed: int, length: int) -> None:
    rng = random.Random(seed)
    for n in range(length):
        step = rng.choices(list(MIX), weights=list(MIX.values()))[0]
        try:
            _STEPS[step](board, rng, n)
        except BlackboardError:
            pass  # refusals are part of the story


def _open(board, status: SignalStatus, rng: random.Random):
    found = [s for s in board.read_model.find(SignalFilter(status=status)) if not s.waiting_for]
    return rng.choice(found) if found else None


def _post(board, rng: random.Random, n: int) -> None:
    upstreams = [s.signal_id for s in board.read_model.find(SignalFilter()) if not s.status.is_final]
    after = (rng.choice(upstreams),) if upstreams and rng.random() < 0.4 else ()
    board.service.post_signal(
        PostSignal(
            signal_type=rng.choice(list(TAKES)),
            ps_id=rng.choice(("ps-1", "ps-2")),
            entry_id=f"e-{n}",
            topic="t",
            after=after,
        )
    )


def _claim(board, rng: random.Random, n: int) -> None:
    if signal := _open(board, SignalStatus.POSTED, rng):
        board.service.claim_signal(
            ClaimSignal(signal_id=signal.signal_id, agent_id=TAKES[signal.signal_type])
        )


def _complete(board, rng: random.Random, n: int) -> None:
    if signal := _open(board, SignalStatus.CLAIMED, rng):
        board.service.complete_signal(
            CompleteSignal(signal_id=signal.signal_id, agent_id=signal.claimed_by, artifact_path="a.md")
        )


def _fail(board, rng: random.Random, n: int) -> None:
    if signal := _open(board, SignalStatus.CLAIMED, rng):
        board.service.fail_signal(
            FailSignal(signal_id=signal.signal_id, agent_id=signal.claimed_by, error="no")
        )


def _time(board, rng: random.Random, n: int) -> None:
    board.clock.advance(rng.choice((5, 40, 400)))  # within, past the post timeout, past the claim timeout
    board.service.expire_signals(ExpireSignals())


def _retry(board, rng: random.Random, n: int) -> None:
    if signal := _open(board, rng.choice((SignalStatus.FAILED, SignalStatus.EXPIRED)), rng):
        board.service.retry_signal(RetrySignal(signal_id=signal.signal_id))


def _refused(board, rng: random.Random, n: int) -> None:
    if signal := _open(board, SignalStatus.POSTED, rng):
        wrong = next(a for t, a in TAKES.items() if t != signal.signal_type)
        board.service.claim_signal(ClaimSignal(signal_id=signal.signal_id, agent_id=wrong))


_STEPS = {
    "post": _post,
    "claim": _claim,
    "complete": _complete,
    "fail": _fail,
    "time": _time,
    "retry": _retry,
    "refused": _refused,
}


def kinds(board) -> set[str]:
    """What happened in a played story: claim, complete, fail, expire, retry, release (a completion that
    let a waiting signal go)."""
    seen, waits = set(), set()
    for record in board.store.read_all():
        event = record.event
        kind = event.event_type.removeprefix("AgentSignal").lower()
        seen.add(kind)
        if kind == "posted":
            waits.update(event.after)
            if event.retry_of:
                seen.add("retry")
        elif kind == "completed" and event.signal_id in waits:
            seen.add("release")
    return seen


def shares(make_board, seeds: range, length: int) -> Counter[str]:
    """For each kind of event, the share of the stories (seeds) that hold it."""
    found: Counter[str] = Counter()
    for seed in seeds:
        board = make_board()
        play(board, seed, length)
        found.update(kinds(board))
    return Counter({k: v / len(seeds) for k, v in found.items()})
