"""`AsyncBlackboard` on a SQLite file and on PostgreSQL (docs/python-api.md, "Async"): its documents and
errors are `Blackboard`'s for the same calls on one store; a wait suspends only its task (a ticker keeps
ticking while it waits for a completion made by another handle on the store); cancelling waits is at once
and closing afterwards leaves no thread behind; `watch` is an async iterator one can break out of."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from collections.abc import Awaitable, Iterator
from contextlib import aclosing
from typing import Any

import pytest

from blackboard import AsyncBlackboard, Blackboard, Closed, InvalidInput, TimedOut
from blackboard.infrastructure.api.asynchronous import THREADS
from tests.e2e.conftest import database_url


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def url(request, tmp_path_factory) -> str:
    return database_url(request, tmp_path_factory, "api-async")


@pytest.fixture(scope="module")
def boards(url, agents_dir) -> Iterator[tuple[AsyncBlackboard, Blackboard]]:
    """The async handle and a blocking one on the same store (each with its own connections)."""
    asynchronous = AsyncBlackboard(url, agents_dir=agents_dir)
    with Blackboard(url, agents_dir=agents_dir) as blocking:
        yield asynchronous, blocking
    asyncio.run(asynchronous.close())


@pytest.fixture
def board() -> str:
    return f"ps-{uuid.uuid4().hex[:8]}"


def run(coroutine: Awaitable[Any]) -> Any:
    async def main() -> Any:
        return await coroutine

    return asyncio.run(main())


def doc(model: Any) -> Any:
    return model.model_dump(mode="json") if hasattr(model, "model_dump") else model


def board_threads(but: frozenset[threading.Thread] = frozenset()) -> list[str]:
    """The threads of AsyncBlackboards (its pool's, its log follower), but those of `but`."""
    return [
        t.name
        for t in threading.enumerate()
        if t.name.startswith(("blackboard-async", "blackboard-log")) and t not in but
    ]


def test_documents_and_errors_of_both_agree_for_a_run_of_calls(boards, board):
    bb, blocking = boards

    async def scenario() -> None:
        since = await bb.position()
        assert since == blocking.position()
        first = await bb.post("RESEARCH", board, "e-1", "HNSW recall", prompt="find prior work")
        assert doc(blocking.show(first.signal_id)) == {k: v for k, v in doc(first).items() if k != "warnings"}
        second = blocking.post("RESEARCH", board, "e-2", "IVF recall", after=[first.signal_id])
        assert doc(await bb.show(second.signal_id)) == doc(blocking.show(second.signal_id))
        claimed = await bb.claim(first.signal_id, agent="ps-researcher")
        assert claimed.status == "CLAIMED" and doc(blocking.show(first.signal_id)) == doc(claimed)
        done = await bb.complete(first.signal_id, agent="ps-researcher", knowledge_items=["HNSW wins"])
        assert doc(blocking.show(first.signal_id)) == doc(done)
        written = await bb.write(
            "findings", {"summary": "HNSW"}, blackboard_id=board, author="ps-researcher", topics=["news"]
        )
        assert doc(blocking.read("findings", blackboard_id=board)) == doc(written)
        blocking.write("findings/aside", [1, 2], blackboard_id=board, author="ps-writer", topics=["news"])

        calls: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
            ("show", (second.signal_id,), {}),
            ("show", (first.signal_id,), {"at": since + 1}),
            ("signals", (), {"blackboard_id": board}),
            ("match", (second.signal_id,), {}),
            ("agents", (), {}),
            ("events", (), {"blackboard_id": board}),
            ("read", ("findings",), {"blackboard_id": board}),
            ("history", ("findings",), {"blackboard_id": board}),
            ("entries", (), {"blackboard_id": board}),
            ("summary", (), {"blackboard_id": board}),
            ("budget", (board,), {}),
            ("position", (), {}),
            ("wait", (first.signal_id,), {"timeout": 0}),
            ("watch_topic", ("news",), {"blackboard_id": board, "since": since}),
            ("poll_topic", ("news",), {"blackboard_id": board, "since": since, "timeout": 0}),
        ]
        for name, args, kwargs in calls:
            expected = doc(getattr(blocking, name)(*args, **kwargs))
            assert doc(await getattr(bb, name)(*args, **kwargs)) == expected, name
        watched = await anext(bb.watch(["RESEARCH"], blackboard_id=board, since=since, timeout=0))
        assert doc(watched) == doc(blocking.watch(["RESEARCH"], blackboard_id=board, since=since, timeout=0))
        assert watched.signal_id == first.signal_id

        refusals: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
            ("show", ("sig-00000000",), {}),  # NotFound
            ("post", ("", board, "e-3", "t"), {}),  # InvalidInput: signal_type
            ("claim", (first.signal_id,), {"agent": "ps-researcher"}),  # Refused: it is COMPLETED
            ("wait", (second.signal_id,), {"timeout": 0}),  # TimedOut, in the blocking call's words
            ("wait", (second.signal_id,), {"timeout": float("nan")}),  # InvalidInput: timeout
            ("wait", ("sig-00000000",), {"timeout": 1}),  # NotFound
            ("poll_topic", ("news",), {"blackboard_id": board, "timeout": 0}),  # TimedOut
            ("watch_topic", ("news",), {"blackboard_id": board, "since": -1}),  # InvalidInput: since
            ("events", (), {"since": None}),  # InvalidInput
            ("write", ("k", {1, 2}), {"blackboard_id": board, "author": "a"}),  # InvalidInput: a set
        ]
        for name, args, kwargs in refusals:
            with pytest.raises(Exception) as blocked:
                getattr(blocking, name)(*args, **kwargs)
            with pytest.raises(Exception) as awaited:
                await getattr(bb, name)(*args, **kwargs)
            assert (type(awaited.value), str(awaited.value)) == (type(blocked.value), str(blocked.value)), (
                name
            )
        with pytest.raises(InvalidInput) as blocked:
            blocking.watch([], blackboard_id=board)
        with pytest.raises(InvalidInput) as awaited:
            await anext(bb.watch([], blackboard_id=board))
        assert str(awaited.value) == str(blocked.value)

    run(scenario())


def test_a_wait_suspends_only_its_task_while_another_handle_completes_the_signal(
    boards, board, url, agents_dir
):
    bb, _ = boards
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    def complete_later(signal_id: str, when: list[float]) -> None:
        time.sleep(0.5)
        with Blackboard(url, agents_dir=agents_dir) as other:  # its own connections: woken through the store
            other.claim(signal_id, agent="ps-researcher")
            other.complete(signal_id, agent="ps-researcher")
        when.append(time.monotonic())

    async def scenario() -> None:
        signal = await bb.post("RESEARCH", board, "e-1", "wait for me")
        completed_at: list[float] = []
        ticking = asyncio.create_task(ticker())
        completing = threading.Thread(
            target=complete_later, args=(signal.signal_id, completed_at), daemon=True
        )
        completing.start()
        began = time.monotonic()
        done = await bb.wait(signal.signal_id, timeout=30)
        ended, waited_ticks = time.monotonic(), ticks
        ticking.cancel()
        completing.join(timeout=30)  # the wait may wake before the thread has noted when it completed

        assert done.status == "COMPLETED"
        assert ended - began >= 0.5 and completed_at
        assert ended - completed_at[0] < 2.0, f"woke {ended - completed_at[0]:.2f} s after the completion"
        # a wait that held the loop would let the ticker tick not once; 0.5 s holds about 50 ticks
        assert waited_ticks >= 10, f"the ticker ticked {waited_ticks} times during a 0.5 s wait"

    run(scenario())


def test_cancelled_waits_end_at_once_hold_no_thread_and_closing_then_leaves_none(url, agents_dir, board):
    async def scenario() -> None:
        others = frozenset(threading.enumerate())  # the module's AsyncBlackboard has threads of its own
        bb = AsyncBlackboard(url, agents_dir=agents_dir)
        signal = await bb.post("RESEARCH", board, "e-1", "nobody finishes this")
        waits = [asyncio.create_task(bb.wait(signal.signal_id)) for _ in range(40)]
        waits.append(asyncio.create_task(bb.poll_topic("news", blackboard_id=board)))
        waits.append(asyncio.create_task(anext(bb.watch(["RESEARCH"], blackboard_id=board))))
        await asyncio.sleep(0.5)
        assert not any(w.done() for w in waits)
        # 42 waits under way, and none holds a thread: the pool's and the log follower's, at most
        assert len(board_threads(but=others)) <= THREADS + 1, board_threads(but=others)

        began = time.monotonic()
        for w in waits:
            w.cancel()
        outcomes = await asyncio.gather(*waits, return_exceptions=True)
        assert all(isinstance(o, asyncio.CancelledError) for o in outcomes)
        assert time.monotonic() - began < 0.5

        await asyncio.wait_for(bb.close(), 5)
        assert board_threads(but=others) == []
        with pytest.raises(Closed):
            await bb.show(signal.signal_id)
        await bb.close()  # again: harmless

    run(scenario())


def test_watch_is_an_async_iterator_of_completions_in_order_that_one_breaks_out_of(boards, board):
    bb, blocking = boards

    async def scenario() -> None:
        start = await bb.position()
        signals = [(await bb.post("RESEARCH", board, f"e-{n}", f"topic {n}")).signal_id for n in range(3)]

        async def finish() -> None:
            for signal_id in signals:
                await asyncio.sleep(0.05)
                await asyncio.to_thread(blocking.claim, signal_id, agent="ps-researcher")
                await asyncio.to_thread(blocking.complete, signal_id, agent="ps-researcher")

        finishing = asyncio.create_task(finish())
        seen = []
        async for event in bb.watch(["RESEARCH"], blackboard_id=board, timeout=30):
            seen.append(event)
            if len(seen) == 3:
                break
        await finishing
        assert [e.signal_id for e in seen] == signals
        assert all(e.status == "COMPLETED" for e in seen)
        assert [e.position for e in seen] == sorted(e.position for e in seen)

        # from a position: the same three again, then nothing more within the timeout (per step)
        again = []
        with pytest.raises(TimedOut, match="timed out after 0.3s waiting for a RESEARCH signal"):
            async with aclosing(bb.watch(["RESEARCH"], blackboard_id=board, since=start, timeout=0.3)) as it:
                async for event in it:
                    again.append(event.signal_id)
        assert again == signals

    run(scenario())


def test_a_wait_under_way_raises_closed_when_the_board_closes_and_async_with_closes(url, agents_dir, board):
    async def scenario() -> None:
        others = frozenset(threading.enumerate())
        async with AsyncBlackboard(url, agents_dir=agents_dir) as bb:
            signal = await bb.post("RESEARCH", board, "e-1", "nobody finishes this")
            waiting = asyncio.create_task(bb.wait(signal.signal_id, timeout=60))
            watching = asyncio.create_task(bb.watch_topic("news", blackboard_id=board))
            await asyncio.sleep(0.3)
            began = time.monotonic()
            await bb.close()
            for task in (waiting, watching):
                with pytest.raises(Closed):
                    await task
            assert time.monotonic() - began < 2.0
        with pytest.raises(Closed):
            await bb.wait(signal.signal_id)
        assert board_threads(but=others) == []

    run(scenario())


def test_a_topic_watch_wakes_for_a_write_of_another_task_and_times_out_on_time(boards, board):
    bb, _ = boards

    async def scenario() -> None:
        watching = asyncio.create_task(bb.watch_topic("news", blackboard_id=board, timeout=30))
        await asyncio.sleep(0.2)
        await bb.write("weather", "rain", blackboard_id=board, author="ps-writer", topics=["weather"])
        await bb.write("headline", "HNSW wins", blackboard_id=board, author="ps-writer", topics=["news"])
        entry = await watching
        assert (entry.key, entry.value) == ("headline", "HNSW wins")

        began = time.monotonic()
        with pytest.raises(TimedOut, match="timed out after 0.4s waiting for an entry on topic news"):
            await bb.poll_topic("news", blackboard_id=board, timeout=0.4)
        assert 0.4 <= time.monotonic() - began < 2.0

    run(scenario())


def test_a_completion_wakes_only_the_waits_it_answers(boards, board, monkeypatch):
    """Fifty waits on fifty signals, ten of them completed (twenty events): each wait checks once at the
    start and once more if its own signal ended, not once per event of the board (a herd of checks)."""
    bb, blocking = boards
    checks = []
    checking = bb._board.wait
    monkeypatch.setattr(
        bb._board, "wait", lambda signal_id, **kw: checks.append(signal_id) or checking(signal_id, **kw)
    )

    async def scenario() -> None:
        signals = [(await bb.post("RESEARCH", board, f"e-{n}", f"topic {n}")).signal_id for n in range(50)]
        waits = [asyncio.create_task(bb.wait(s, timeout=60)) for s in signals]
        while len(checks) < 50:
            await asyncio.sleep(0.05)
        for signal_id in signals[:10]:
            await asyncio.to_thread(blocking.claim, signal_id, agent="ps-researcher")
            await asyncio.to_thread(blocking.complete, signal_id, agent="ps-researcher")
        done = await asyncio.gather(*waits[:10])
        assert [d.status for d in done] == ["COMPLETED"] * 10
        assert not any(w.done() for w in waits[10:])
        # a claim may wake its signal's wait too (any event of the signal does), and a wait that registers
        # after the follower read on checks again at once: a few more than 60, never one per wait per event
        # (every append waking every wait would make it about 50 + 20 * 45)
        assert 50 + 10 <= len(checks) <= 100, len(checks)
        for w in waits[10:]:
            w.cancel()
        await asyncio.gather(*waits[10:], return_exceptions=True)

    run(scenario())


def test_after_an_idle_spell_the_log_follower_starts_from_the_log_s_end(url, agents_dir, board, monkeypatch):
    """A follower that ended for want of waits forgets where it read to: the next wait's follower starts at
    the log's end, not re-reading every event appended meanwhile (none of them can answer a wait begun
    after them), and it wakes that wait for the event it wants."""
    from blackboard.infrastructure.api import asynchronous

    monkeypatch.setattr(asynchronous, "IDLE", 0.2)

    async def scenario() -> None:
        async with AsyncBlackboard(url, agents_dir=agents_dir) as bb:
            with pytest.raises(TimedOut):
                await bb.poll_topic("news", blackboard_id=board, timeout=0.3)
            follower = bb._follower
            deadline = time.monotonic() + 5
            while follower._thread is not None:  # idle: the follower's thread ends
                assert time.monotonic() < deadline, "the follower did not end after its idle spell"
                await asyncio.sleep(0.05)
            assert follower._seen == -1
            for n in range(30):  # appended while nobody waits
                await bb.write(f"k/{n}", n, blackboard_id=board, author="ps-writer", topics=["other"])
            read: list[int] = []
            store = bb._board._parts.store
            reading = store.read_all
            monkeypatch.setattr(store, "read_all", lambda **kw: read.append(kw["after"]) or reading(**kw))
            watching = asyncio.create_task(bb.watch_topic("news", blackboard_id=board, timeout=30))
            await asyncio.sleep(0.3)
            end = await bb.position()
            await bb.write("headline", "HNSW wins", blackboard_id=board, author="ps-writer", topics=["news"])
            assert (await watching).key == "headline"
            assert read and min(read) >= end - 1  # never from before the wait began

    run(scenario())
