"""The post timeout runs only while no live worker fits a signal: the domain's rule (`deadline`, `overdue`,
the expiry's reason) with the fitting worker as input, the application's choice of that worker
(`fitting`), and the service keeping one rule for the sweep and for decisions. Fakes: a ticking clock and
in-memory presence."""

from __future__ import annotations

from datetime import timedelta

import pytest

from blackboard.application.commands import ClaimSignal, ExpireSignals, GetSignalById, PostSignal
from blackboard.application.presence import fitting
from blackboard.application.scoring import Scorer
from blackboard.domain.blackboard import BlackboardAggregate, deadline, overdue
from blackboard.domain.errors import SignalExpired
from blackboard.domain.presence import MISSED_BEATS, WorkerPresence
from blackboard.domain.signals import SignalPayload, SignalStatus, SignalType
from tests.fakes import SEED_RULE, T0, Board, FixedAgentRegistry, agent

POST, CLAIM = timedelta(seconds=30), timedelta(seconds=300)
BEAT = timedelta(seconds=2)
RESEARCHER = agent("ps-researcher", RESEARCH=0.9)


def seconds(n: float) -> timedelta:
    return timedelta(seconds=n)


def worker(
    last_beat_after: float, profile=RESEARCHER, stopped_after: float | None = None, boards=(), wid="w-1"
) -> WorkerPresence:
    return WorkerPresence(
        worker_id=wid,
        agent=profile.model_copy(update={"threshold": profile.threshold_or(0.8)}),
        host="host",
        pid=42,
        started_at=T0,
        last_beat=T0 + seconds(last_beat_after),
        beat_every=BEAT,
        boards=tuple(boards),
        stopped_at=None if stopped_after is None else T0 + seconds(stopped_after),
    )


def posted_board(signal_type: str = "RESEARCH", blackboard_id: str = "bb-1") -> BlackboardAggregate:
    board = BlackboardAggregate(blackboard_id)
    board.post_signal(
        signal_id="sig-0000000a",
        signal_type=SignalType(signal_type),
        payload=SignalPayload(ps_id="ps-1", entry_id="e-1", topic="t"),
        posted_by="me",
        at=T0,
    )
    board.collect_events()
    return board


# -- the domain's rule -----------------------------------------------------------------------------
def test_without_a_fitting_worker_the_post_timeout_counts_from_when_it_became_claimable():
    signal = posted_board().signal("sig-0000000a")

    assert deadline(signal, POST, CLAIM) == T0 + POST
    assert overdue(signal, T0 + POST, POST, CLAIM) and not overdue(
        signal, T0 + POST - seconds(1), POST, CLAIM
    )


def test_a_live_fitting_worker_holds_the_deadline_past_its_liveness():
    signal = posted_board().signal("sig-0000000a")
    live = worker(last_beat_after=100)  # beating at T0+100: live until T0+106

    assert deadline(signal, POST, CLAIM, live) == T0 + seconds(100) + MISSED_BEATS * BEAT + POST
    assert not overdue(signal, T0 + seconds(101), POST, CLAIM, live)


def test_a_stale_worker_stops_counting_missed_beats_after_its_last_one():
    signal = posted_board().signal("sig-0000000a")
    stale = worker(last_beat_after=40)

    assert overdue(signal, T0 + seconds(40) + 3 * BEAT + POST, POST, CLAIM, stale)
    assert not overdue(signal, T0 + seconds(40) + 3 * BEAT + POST - seconds(1), POST, CLAIM, stale)


def test_a_stopped_worker_counts_until_it_stopped():
    signal = posted_board().signal("sig-0000000a")
    stopped = worker(last_beat_after=50, stopped_after=50)

    assert deadline(signal, POST, CLAIM, stopped) == T0 + seconds(50) + POST


def test_a_worker_gone_before_the_signal_became_claimable_changes_nothing():
    signal = posted_board().signal("sig-0000000a")

    assert deadline(signal, POST, CLAIM, worker(last_beat_after=-60)) == T0 + POST


@pytest.mark.parametrize(
    ("seen", "reason"),
    [
        (
            None,
            "not claimed within 30s of becoming claimable; no live worker fits it since it became claimable at "
            f"{T0.isoformat()}",
        ),
        (
            worker(last_beat_after=10),
            "not claimed within 30s of becoming claimable; the last worker that fits it, "
            f"ps-researcher on host:42, stopped beating at {(T0 + seconds(10)).isoformat()}",
        ),
        (
            worker(10, stopped_after=12),
            "not claimed within 30s of becoming claimable; the last worker that fits it, "
            f"ps-researcher on host:42, stopped at {(T0 + seconds(12)).isoformat()}",
        ),
    ],
)
def test_the_expiry_says_why_it_ran_out(seen, reason):
    board = posted_board()

    board.expire_overdue(T0 + seconds(200), POST, CLAIM, {"sig-0000000a": seen} if seen else {})

    [expired] = board.collect_events()
    assert expired.reason == reason


def test_a_sweep_leaves_what_a_live_worker_fits_and_expires_the_rest():
    board = posted_board()

    kept = board.expire_overdue(T0 + seconds(60), POST, CLAIM, {"sig-0000000a": worker(last_beat_after=59)})

    assert kept == [] and board.signal("sig-0000000a").status is SignalStatus.POSTED


# -- which worker fits ------------------------------------------------------------------------------
def test_the_fitting_worker_is_the_one_live_the_longest_among_those_that_would_claim():
    signal = posted_board().signal("sig-0000000a")
    scorer = Scorer(FixedAgentRegistry([]))
    reviewer = agent("ps-reviewer", REVIEW=0.95)
    workers = [
        worker(50, wid="w-old"),
        worker(58, wid="w-new"),
        worker(90, profile=reviewer, wid="w-reviewer"),  # live longer, but does not fit RESEARCH
        worker(99, boards=("bb-other",), wid="w-other-board"),  # fits, but serves another board
        worker(95, profile=agent("ps-weak", RESEARCH=0.5), wid="w-weak"),  # below its threshold
    ]

    chosen = fitting([signal], workers, scorer, 0.8)

    assert chosen["sig-0000000a"].worker_id == "w-new"


def test_a_signal_still_waiting_for_upstreams_or_claimed_gets_no_fitting_worker():
    board = posted_board()
    board.claim_signal("sig-0000000a", RESEARCHER, T0)

    assert fitting(board.signals.values(), [worker(10)], Scorer(FixedAgentRegistry([])), 0.8) == {}


# -- the service: one rule for the sweep and for decisions -------------------------------------------
def research() -> PostSignal:
    return PostSignal(signal_type="RESEARCH", ps_id="ps-1", entry_id="e-1", topic="event stores")


def beating(board: Board, wid: str = "w-1") -> WorkerPresence:
    now = board.clock.now()
    me = WorkerPresence(wid, RESEARCHER.model_copy(update={"threshold": 0.8}), "host", 7, now, now, BEAT)
    board.presence.beat(me)
    return me


def test_the_sweep_and_a_claim_both_wait_while_a_fitting_worker_beats():
    board = Board(RESEARCHER, agent("ps-analyst", RESEARCH=0.85), settings=SEED_RULE)
    sig = board.service.post_signal(research()).signal_id
    for _ in range(4):  # two minutes, a fitting worker beating all along
        board.clock.advance(30)
        beating(board)

    swept = board.service.expire_signals(ExpireSignals())
    claimed = board.service.claim_signal(ClaimSignal(signal_id=sig, agent_id="ps-analyst"))

    assert swept == [] and claimed.status is SignalStatus.CLAIMED


def test_once_the_fitting_worker_stops_a_claim_past_the_timeout_finds_it_expired_naming_it():
    board = Board(RESEARCHER, agent("ps-analyst", RESEARCH=0.85), settings=SEED_RULE)
    sig = board.service.post_signal(research()).signal_id
    board.clock.advance(60)
    me = beating(board)
    board.presence.stopped(me.worker_id, board.clock.now())
    board.clock.advance(31)

    with pytest.raises(
        SignalExpired, match="the last worker that fits it, ps-researcher on host:7, stopped at"
    ):
        board.service.claim_signal(ClaimSignal(signal_id=sig, agent_id="ps-analyst"))

    assert board.queries.get_signal(GetSignalById(signal_id=sig)).status is SignalStatus.EXPIRED


def test_show_marks_a_signal_overdue_by_the_same_rule():
    board = Board(RESEARCHER, settings=SEED_RULE)
    sig = board.service.post_signal(research())
    board.clock.advance(60)

    before = board.queries.overdue([sig])
    beating(board)
    after = board.queries.overdue([sig])

    assert list(before) == [sig.signal_id] and after == {}
