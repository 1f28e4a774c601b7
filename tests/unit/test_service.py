"""BlackboardService: the use cases over honest in-memory adapters."""

from __future__ import annotations

import contextlib
import threading

import pytest

from blackboard.application.commands import (
    CancelSignal,
    ClaimSignal,
    ClaimSignals,
    CompleteSignal,
    ExpireSignals,
    FailSignal,
    GetOpenSignals,
    GetSignalById,
    PostSignal,
    WatchSignals,
)
from blackboard.application.ports import Hold
from blackboard.domain.errors import AgentNotFound, AlreadyClaimed, SignalNotFound
from blackboard.domain.events import AgentSignalCompleted, AgentSignalPosted
from blackboard.domain.signals import SignalStatus
from tests.fakes import SEED_RULE, Board, agent

RESEARCHER = agent("ps-researcher", RESEARCH=0.9, INVESTIGATION=0.7)
ANALYST = agent("ps-analyst", ANALYSIS=0.9, RESEARCH=0.85)
REVIEWER = agent("ps-reviewer", REVIEW=0.95)


def research(**overrides) -> PostSignal:
    fields = dict(signal_type="RESEARCH", ps_id="ps-1", entry_id="e-1", topic="event stores")
    return PostSignal(**{**fields, **overrides})


def test_a_posted_signal_lands_on_the_board_named_by_its_ps_id():
    board = Board(RESEARCHER)

    signal = board.service.post_signal(research())

    assert signal.blackboard_id == "ps-1"
    assert signal.status is SignalStatus.POSTED
    assert board.queries.get_signal(GetSignalById(signal_id=signal.signal_id)) == signal


def test_a_signal_nobody_can_take_is_marked_unclaimed_at_once_naming_the_best_candidate():
    board = Board(agent("ps-junior", RESEARCH=0.5))

    signal = board.service.post_signal(research())

    assert signal.status is SignalStatus.UNCLAIMED
    assert board.event_types() == ["AgentSignalPosted", "AgentSignalUnclaimed"]
    assert "ps-junior at 0.50" in signal.result.error


def test_reposting_with_the_same_key_returns_the_first_signal_and_stores_nothing():
    board = Board(RESEARCHER)
    first = board.service.post_signal(research(dedupe_key="ps-1/e-1"))

    again = board.service.post_signal(research(dedupe_key="ps-1/e-1", topic="different words"))

    assert again.signal_id == first.signal_id
    assert board.event_types() == ["AgentSignalPosted"]


def test_a_claim_finds_the_board_of_the_signal_by_itself():
    board = Board(RESEARCHER)
    signal = board.service.post_signal(research(blackboard_id="swarm-7"))

    claimed = board.service.claim_signal(ClaimSignal(signal_id=signal.signal_id, agent_id="ps-researcher"))

    assert (claimed.blackboard_id, claimed.claimed_by) == ("swarm-7", "ps-researcher")


def test_an_unknown_agent_or_signal_is_not_found():
    board = Board(RESEARCHER)
    signal = board.service.post_signal(research())

    with pytest.raises(AgentNotFound):
        board.service.claim_signal(ClaimSignal(signal_id=signal.signal_id, agent_id="ps-ghost"))
    with pytest.raises(SignalNotFound):
        board.service.claim_signal(ClaimSignal(signal_id="sig-ffffffff", agent_id="ps-researcher"))
    assert board.event_types() == ["AgentSignalPosted"]


def test_threads_racing_for_one_signal_leave_exactly_one_winner():
    contenders = [agent(f"agent-{i}", RESEARCH=0.9) for i in range(8)]
    board = Board(*contenders)
    signal = board.service.post_signal(research())
    start, outcomes = threading.Barrier(len(contenders)), []

    def claim(name: str) -> None:
        start.wait()
        try:
            outcomes.append(
                board.service.claim_signal(ClaimSignal(signal_id=signal.signal_id, agent_id=name))
            )
        except AlreadyClaimed as refused:
            outcomes.append(refused)

    threads = [threading.Thread(target=claim, args=(a.agent_id,)) for a in contenders]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    winners = [o for o in outcomes if not isinstance(o, Exception)]
    assert len(winners) == 1 and len(outcomes) == 8
    assert board.event_types().count("AgentSignalClaimed") == 1


def test_a_claim_decides_on_the_one_signal_it_names_not_the_whole_board():
    board = Board(RESEARCHER)
    posted = [board.service.post_signal(research(topic=f"topic {i}")) for i in range(30)]
    loaded = spy_on_loads(board)

    board.service.claim_signal(ClaimSignal(signal_id=posted[7].signal_id, agent_id="ps-researcher"))

    assert loaded == [{posted[7].signal_id}]


def test_claims_and_outcomes_hold_their_signals_and_the_rest_the_board():
    board = Board(RESEARCHER)
    holds: list[Hold] = []
    spy_on_loads(board, holds)
    one, two = (board.service.post_signal(research(topic=f"t {i}")) for i in range(2))
    board.service.claim_signal(ClaimSignal(signal_id=one.signal_id, agent_id="ps-researcher"))
    board.service.claim_signals(
        ClaimSignals(blackboard_id=one.blackboard_id, signal_ids=(two.signal_id,), agent_id="ps-researcher")
    )
    board.service.complete_signal(CompleteSignal(signal_id=one.signal_id, agent_id="ps-researcher"))
    board.service.cancel_signal(CancelSignal(signal_id=two.signal_id, cancelled_by="someone"))

    assert holds == [Hold.BOARD, Hold.BOARD, Hold.SIGNALS, Hold.FREE_SIGNALS, Hold.SIGNALS, Hold.BOARD]


def test_completing_a_signal_loads_what_waits_on_it_down_the_chain_while_open():
    board = Board(RESEARCHER)
    first = board.service.post_signal(research())
    second = board.service.post_signal(research(after=(first.signal_id,)))
    third = board.service.post_signal(research(after=(second.signal_id,)))
    board.service.post_signal(research(topic="unrelated"))
    board.service.claim_signal(ClaimSignal(signal_id=first.signal_id, agent_id="ps-researcher"))
    loaded = spy_on_loads(board)

    board.service.fail_signal(
        FailSignal(signal_id=first.signal_id, agent_id="ps-researcher", error="no sources")
    )

    assert loaded == [{first.signal_id, second.signal_id, third.signal_id}]
    assert board.queries.get_signal(GetSignalById(signal_id=third.signal_id)).status is SignalStatus.EXPIRED


def spy_on_loads(board: Board, holds: list[Hold] | None = None) -> list[set[str]]:
    """Which signals each command's transaction loaded (and, into `holds`, what it held), as the
    service goes on."""
    loaded: list[set[str]] = []
    original = board.service._uow.board

    @contextlib.contextmanager
    def spying(blackboard_id, hold=Hold.BOARD):
        with original(blackboard_id, hold) as tx:
            yield tx
            loaded.append(set(tx.loaded))
            if holds is not None:
                holds.append(hold)

    board.service._uow.board = spying
    return loaded


def test_subscribers_hear_of_an_event_only_once_it_is_stored():
    board = Board(RESEARCHER)
    seen_in_store = []
    board.dispatcher.register(
        AgentSignalPosted, lambda e: seen_in_store.append([r.event for r in board.store.read_all()] == [e])
    )

    board.service.post_signal(research())

    assert seen_in_store == [True]


def test_a_failing_subscriber_is_logged_and_the_write_stands(caplog):
    board = Board(RESEARCHER)
    board.dispatcher.register(AgentSignalPosted, lambda e: 1 / 0)

    signal = board.service.post_signal(research())

    assert board.queries.get_signal(GetSignalById(signal_id=signal.signal_id)).status is SignalStatus.POSTED
    assert "failed on AgentSignalPosted" in caplog.text


def test_complete_unblocks_a_watcher_of_that_type_and_only_that_type():
    board = Board(RESEARCHER, REVIEWER)
    heard = []
    board.dispatcher.register(AgentSignalCompleted, heard.append)
    start = board.store.last_position()
    signal = board.service.post_signal(research())
    board.service.claim_signal(ClaimSignal(signal_id=signal.signal_id, agent_id="ps-researcher"))
    board.service.complete_signal(
        CompleteSignal(signal_id=signal.signal_id, agent_id="ps-researcher", artifact_path="docs/r.md")
    )

    research_done = board.queries.watch(WatchSignals(signal_types=("RESEARCH",), since=start))
    reviews_done = board.queries.watch(WatchSignals(signal_types=("REVIEW",), since=start))
    nothing_new = board.queries.watch(WatchSignals(signal_types=("RESEARCH",), since=research_done.position))

    assert [e.signal_id for e in heard] == [signal.signal_id]
    assert [s.result.artifact_path for s in research_done.signals] == ["docs/r.md"]
    assert reviews_done.signals == [] and nothing_new.signals == []


def test_open_candidates_are_claimable_signals_matching_the_capabilities_oldest_first():
    board = Board(RESEARCHER, ANALYST, REVIEWER)
    first = board.service.post_signal(research(entry_id="e-1"))
    second = board.service.post_signal(research(entry_id="e-2"))
    board.service.post_signal(research(signal_type="REVIEW", entry_id="e-3", after=(first.signal_id,)))
    board.service.post_signal(research(signal_type="ANALYSIS", entry_id="e-4"))

    open_research = board.queries.open_candidates(GetOpenSignals(capabilities=("RESEARCH", "REVIEW")))

    assert [s.signal_id for s in open_research] == [first.signal_id, second.signal_id]


def test_failing_a_signal_expires_what_waits_for_it():
    board = Board(RESEARCHER, REVIEWER)
    upstream = board.service.post_signal(research())
    dependant = board.service.post_signal(research(signal_type="REVIEW", after=(upstream.signal_id,)))
    board.service.claim_signal(ClaimSignal(signal_id=upstream.signal_id, agent_id="ps-researcher"))

    board.service.fail_signal(
        FailSignal(signal_id=upstream.signal_id, agent_id="ps-researcher", error="no sources")
    )

    ended = board.queries.get_signal(GetSignalById(signal_id=dependant.signal_id))
    assert ended.status is SignalStatus.EXPIRED
    assert f"upstream {upstream.signal_id} ended FAILED: no sources" in ended.result.error


def test_expire_sweeps_every_board_and_reports_what_it_ended():
    board = Board(RESEARCHER, settings=SEED_RULE)
    a = board.service.post_signal(research(ps_id="ps-a"))
    b = board.service.post_signal(research(ps_id="ps-b"))
    board.service.claim_signal(ClaimSignal(signal_id=b.signal_id, agent_id="ps-researcher"))

    board.clock.advance(31)
    ended = board.service.expire_signals(ExpireSignals())

    assert [s.signal_id for s in ended] == [a.signal_id]  # the claim has 300 s, the post 30 s
    board.clock.advance(300)
    assert [s.signal_id for s in board.service.expire_signals(ExpireSignals())] == [b.signal_id]
    assert board.service.expire_signals(ExpireSignals()) == []


def test_events_caused_by_a_subscriber_are_delivered_after_the_ones_being_delivered():
    board = Board(RESEARCHER)
    seen = []
    board.dispatcher.register(
        AgentSignalPosted,
        lambda e: board.service.claim_signal(ClaimSignal(signal_id=e.signal_id, agent_id="ps-researcher")),
    )
    board.dispatcher.register(None, lambda e: seen.append(e.event_type))

    board.service.post_signal(research())

    assert seen == ["AgentSignalPosted", "AgentSignalClaimed"]


def test_every_stored_event_carries_who_did_it_and_which_command_caused_it():
    board = Board(RESEARCHER)
    signal = board.service.post_signal(research(correlation_id="ps-1/run-9"))
    board.service.claim_signal(ClaimSignal(signal_id=signal.signal_id, agent_id="ps-researcher"))

    posted, claimed = board.store.read_all()

    assert posted.metadata["actor"] == "ps-skill" and claimed.metadata["actor"] == "ps-researcher"
    assert posted.metadata["command"] == "PostSignal" and claimed.metadata["command"] == "ClaimSignal"
    assert posted.metadata["correlation_id"] == "ps-1/run-9"
    assert (
        claimed.metadata["correlation_id"]
        == claimed.metadata["causation_id"]
        != posted.metadata["causation_id"]
    )
