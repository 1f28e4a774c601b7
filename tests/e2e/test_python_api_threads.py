"""One `Blackboard` shared by real threads, on a SQLite file and on PostgreSQL: posts, claim races and
completions from eight threads lose nothing and give one winner per claim; eight writers of one key
leave one holder and seven candidates; waits and topic polls
from many threads wake for what another thread does, and each honours its own timeout."""

from __future__ import annotations

import random
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from blackboard import Blackboard, Closed, Conflict, Refused, TimedOut
from tests.e2e.conftest import database_url

THREADS = 8
POSTS_PER_THREAD = 6


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def api(request, agents_dir, tmp_path_factory) -> Iterator[Blackboard]:
    with Blackboard(database_url(request, tmp_path_factory, "api-threads"), agents_dir=agents_dir) as shared:
        yield shared


@pytest.fixture
def board() -> str:
    return f"ps-{uuid.uuid4().hex[:8]}"


def together(count: int, work: Callable[[int], Any]) -> list[Any]:
    """`work(0..count-1)` on `count` threads released at once; their results, or the first error raised."""
    start = threading.Barrier(count)

    def run(n: int) -> Any:
        start.wait()
        return work(n)

    with ThreadPoolExecutor(max_workers=count) as pool:
        return [f.result() for f in [pool.submit(run, n) for n in range(count)]]


def test_eight_threads_post_race_for_every_claim_and_complete_what_they_won_losing_nothing(api, board):
    posted = together(
        THREADS,
        lambda n: [
            api.post("RESEARCH", board, f"e-{n * 100 + i}", f"topic {n}/{i}").signal_id
            for i in range(POSTS_PER_THREAD)
        ],
    )
    signal_ids = [s for mine in posted for s in mine]

    def race(n: int) -> list[str]:
        won = []
        for signal_id in random.Random(n).sample(signal_ids, len(signal_ids)):
            try:
                api.claim(signal_id, agent="ps-researcher", token=f"thread-{n}")
            except Refused as refused:
                assert (
                    "already claimed" in str(refused)
                    or "is CLAIMED" in str(refused)
                    or "COMPLETED" in str(refused)
                )
                continue
            api.complete(
                signal_id, agent="ps-researcher", token=f"thread-{n}", knowledge_items=[f"won by {n}"]
            )
            won.append(signal_id)
        return won

    winners = together(THREADS, race)

    won = Counter(s for mine in winners for s in mine)
    assert len(set(signal_ids)) == THREADS * POSTS_PER_THREAD
    assert set(won) == set(signal_ids) and set(won.values()) == {1}, "every signal has exactly one winner"
    final = {s.signal_id: s for s in api.signals(blackboard_id=board)}
    assert set(final) == set(signal_ids)
    for n, mine in enumerate(winners):
        for signal_id in mine:
            assert (final[signal_id].status, final[signal_id].result.knowledge_items) == (
                "COMPLETED",
                [f"won by {n}"],
            )
    kinds = Counter(e.event_type for e in api.events(blackboard_id=board))
    assert (kinds["AgentSignalPosted"], kinds["AgentSignalClaimed"], kinds["AgentSignalCompleted"]) == (
        len(signal_ids),
    ) * 3
    assert len(api.entries(blackboard_id=board)) == len(signal_ids)  # each completion's knowledge landed


def test_eight_threads_writing_one_key_leave_one_holder_and_every_other_value_as_a_candidate(api, board):
    def write(n: int) -> str:
        try:
            api.write("verdict", {"pick": n}, blackboard_id=board, author=f"agent-{n}")
        except Conflict:
            return "candidate"
        return "accepted"

    outcomes = Counter(together(THREADS, write))

    history = api.history("verdict", blackboard_id=board)
    assert outcomes == {"accepted": 1, "candidate": THREADS - 1}
    assert [v.version for v in history] == list(range(1, THREADS + 1))
    assert sorted(v.value["pick"] for v in history) == list(range(THREADS))
    assert len(api.read("verdict", blackboard_id=board).conflict.candidates) == THREADS


def test_waiters_on_many_threads_wake_for_completions_while_a_short_wait_times_out_on_time(api, board):
    signals = [api.post("RESEARCH", board, f"e-{n}", f"wait {n}").signal_id for n in range(THREADS)]
    never = api.post("RESEARCH", board, "e-99", "nobody finishes this").signal_id
    waiting, timed_out = threading.Barrier(THREADS + 1), threading.Event()
    short: dict[str, Any] = {}

    def wait(n: int) -> str:
        waiting.wait()
        if n == 0:  # among the waiters: a short wait on a signal nobody completes
            began = time.monotonic()
            with pytest.raises(TimedOut):
                api.wait(never, timeout=0.5)
            short["took"] = time.monotonic() - began
            timed_out.set()
        return api.wait(signals[n], timeout=120).status

    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        futures = [pool.submit(wait, n) for n in range(THREADS)]
        waiting.wait()
        assert timed_out.wait(60), "the short wait never ended"  # the others wait all along it
        for signal_id in signals:
            api.claim(signal_id, agent="ps-researcher")
            api.complete(signal_id, agent="ps-researcher")
        assert [f.result() for f in futures] == ["COMPLETED"] * THREADS

    # PostgreSQL's waiters share one listening connection: queued behind the others' one-second turns on
    # it, this wait took 2.7 s here; it must end at its own timeout, whatever the others wait for
    assert 0.5 <= short["took"] < 2.0, (
        f"a 0.5 s wait took {short['took']:.2f} s: it queued behind the other waiters"
    )


def test_topic_polls_on_many_threads_each_see_every_entry_a_writer_thread_publishes_in_order(api, board):
    since = api.position()
    keys = [f"news/{n}" for n in range(5)]

    def subscribe(n: int) -> list[str]:
        seen, position = [], since
        while len(seen) < len(keys):
            found = api.poll_topic("news", blackboard_id=board, since=position, timeout=120)
            seen += [e.key for e in found]
            position = found[-1].position
        return seen

    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        subscribers = [pool.submit(subscribe, n) for n in range(THREADS - 1)]
        for key in keys:
            api.write(key, {"headline": key}, blackboard_id=board, author="ps-writer", topics=["news"])
            api.write(f"{key}/aside", "not news", blackboard_id=board, author="ps-writer", topics=["weather"])
        assert [s.result() for s in subscribers] == [keys] * (THREADS - 1)

    with pytest.raises(TimedOut):
        api.poll_topic("news", blackboard_id=board, timeout=0.2)


def test_a_closed_blackboard_refuses_calls_and_closing_twice_is_harmless(agents_dir, tmp_path):
    with Blackboard(f"sqlite:///{tmp_path / 'b.db'}", agents_dir=agents_dir) as api:
        signal = api.post("RESEARCH", "ps-1", "e-1", "t")
    api.close()
    with pytest.raises(Closed, match="closed"):
        api.show(signal.signal_id)
    with Blackboard(f"sqlite:///{tmp_path / 'b.db'}", agents_dir=agents_dir) as again:
        posted = {
            k: v for k, v in signal.model_dump(mode="json").items() if k != "warnings"
        }  # the post's own
        assert again.show(signal.signal_id).model_dump(mode="json") == posted
