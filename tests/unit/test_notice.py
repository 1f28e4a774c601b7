"""What a notification on the log's channel carries (PostgreSQL, persistence/notice.py): the signals a
post made claimable and those a claim took, else the position alone; never 8,000 bytes or more."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from blackboard.application.commands import ClaimSignal, PostSignal
from blackboard.infrastructure.persistence import notice
from tests.fakes import Board, agent

RESEARCHER = agent("ps-researcher", RESEARCH=0.9)


def events_of(board: Board, after: int = 0):
    return [r.event for r in board.store.read_all(after)]


def post(board: Board, n: int, **fields) -> str:
    return board.service.post_signal(
        PostSignal(signal_type="RESEARCH", ps_id="ps-1", entry_id=f"e-{n}", topic=f"t{n}", **fields)
    ).signal_id


def test_a_post_tells_what_a_worker_picks_by():
    board = Board(RESEARCHER)
    signal_id = post(board, 1, priority=1)
    stored = board.read_model.get(signal_id)

    heard = notice.read(notice.payload(7, events_of(board)))

    assert isinstance(heard, notice.Told) and heard.position == 7 and heard.taken == ()
    (candidate,) = heard.posted
    assert (candidate.signal_id, candidate.blackboard_id, candidate.target_capabilities) == (
        signal_id,
        "ps-1",
        ("RESEARCH",),
    )
    assert (candidate.created_at, candidate.priority, candidate.text) == (stored.created_at, 1, "")


def test_no_signal_s_text_is_in_the_payload_not_even_one_scored_by_it():
    board = Board(RESEARCHER)
    post(board, 1, target_capabilities=("auto",), prompt="find the sources")
    posts = [e for e in events_of(board) if e.event_type == "AgentSignalPosted"]  # nobody here fits it

    sent = notice.payload(3, posts)
    (candidate,) = notice.read(sent).posted

    # any role that can connect may LISTEN: the topic and prompt stay in the tables
    assert "find the sources" not in sent and "t1" not in sent
    assert candidate.target_capabilities == ("auto",) and candidate.text == ""  # the worker reads its row


def test_a_claim_tells_what_it_took_and_posts_nothing():
    board = Board(RESEARCHER)
    signal_id = post(board, 1)
    last = board.store.last_position()
    board.service.claim_signal(ClaimSignal(signal_id=signal_id, agent_id="ps-researcher"))

    heard = notice.read(notice.payload(9, events_of(board, last)))

    assert heard.posted == () and heard.taken == (signal_id,)


def test_a_post_nobody_can_take_is_no_candidate():
    board = Board(RESEARCHER)
    post(board, 1, target_capabilities=("auto",), prompt="find the sources")  # marked unclaimed at once

    assert notice.read(notice.payload(3, events_of(board))).posted == ()


def test_a_gate_is_no_candidate_but_the_notice_still_tells_everything():
    board = Board(RESEARCHER)
    post(board, 1, gate=True)

    assert notice.read(notice.payload(4, events_of(board))).posted == ()


def test_what_a_post_alone_cannot_tell_sends_the_position_only():
    board = Board(RESEARCHER)
    upstream = post(board, 1)
    last = board.store.last_position()
    post(board, 2, after=(upstream,))  # claimable once the upstream completes: the log tells
    waits = events_of(board, last)
    last = board.store.last_position()
    post(board, 3, not_before=board.clock.now() + timedelta(hours=1))  # claimable later

    assert notice.payload(5, waits) == "5"
    assert notice.payload(6, events_of(board, last)) == "6"
    assert notice.payload(8) == "8"  # no events named
    assert notice.read("8") == notice.Moved(8)  # the listener must read the log


def test_a_payload_that_would_reach_8000_bytes_falls_back_to_the_position():
    board = Board(RESEARCHER)
    post(board, 1, target_capabilities=("RESEARCH", *(f"CAPABILITY-{n:04d}" for n in range(600))))

    assert notice.payload(11, events_of(board)) == "11"


def test_a_payload_that_is_not_ours_is_read_as_none():
    assert notice.read("hello") is None
    assert notice.read('{"x": 1}') is None
    assert notice.read("true") is None and notice.read("") is None
    assert notice.read('{"p": 3, "a": [["b", "sig-1"]]}') is None  # a candidate row cut short


def test_a_payload_of_an_older_release_is_read_alike():
    """Its times were Python's isoformat (`+00:00`); this one's are RFC 3339 (`Z`): the same moment."""
    older = (
        '{"p":12,"a":[["ps-1","sig-0000000a",["RESEARCH"],"2026-01-02T03:04:05.000006+00:00",1]],"t":["x"]}'
    )

    heard = notice.read(older)

    assert isinstance(heard, notice.Told)
    (candidate,) = heard.posted
    assert (candidate.signal_id, candidate.blackboard_id, candidate.priority, heard.taken) == (
        "sig-0000000a",
        "ps-1",
        1,
        ("x",),
    )
    assert candidate.created_at == datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=UTC)


def test_a_post_and_its_claim_in_one_append_tell_what_the_domain_folds():
    """Claimability is the domain's (AgentSignal.claimable_at, of the signal the domain folds from its post):
    a signal posted and claimed in one append is taken, no candidate; one marked unclaimed is neither."""
    board = Board(RESEARCHER)
    first, second = post(board, 1), post(board, 2)
    posts = [e for e in events_of(board) if e.event_type == "AgentSignalPosted"]
    last = board.store.last_position()
    board.service.claim_signal(ClaimSignal(signal_id=first, agent_id="ps-researcher"))

    heard = notice.read(notice.payload(20, [*posts, *events_of(board, last)]))

    assert [c.signal_id for c in heard.posted] == [second] and heard.taken == (first,)
