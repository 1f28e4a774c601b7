"""`AsyncBlackboard`: the Python API for asyncio (docs/python-api.md, "Async").

Every call is `Blackboard`'s own, run on a small pool of threads of this board, so the rules, the documents
and the errors are the same code, not a copy. What waits is different: a `wait`, `watch`, `watch_topic` or
`poll_topic` never holds a thread while it waits. It checks in a thread (the blocking call with timeout 0,
which answers at once or raises TimedOut), then suspends its task until an event that may answer it (one
of its signal's, a completion, a version on its topic: the blocking wait's own rules) lands past the
position read before that check, and checks again. The one thread that follows the log (`LogFollower`)
waits on the board's notifier in slices of a quarter second and reads each new page of the log once, for
every suspended task at once, so a cancelled task is gone at once and leaves nothing blocked, and closing
ends that thread within a slice.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import logging
import os
import threading
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Concatenate, ParamSpec, Self, TypeVar

from blackboard.application.commands import FollowSignal, WaitForSignal, WatchSignals
from blackboard.application.errors import StoreUnavailable, WaitTimedOut
from blackboard.application.knowledge.commands import WatchTopic
from blackboard.application.ports import Recorded
from blackboard.application.watching import FINAL_EVENTS, OUTPUT_POLL, may_change, published
from blackboard.domain.events import BlackboardEvent
from blackboard.infrastructure.api.base import names, request
from blackboard.infrastructure.api.board import Blackboard
from blackboard.infrastructure.api.errors import Closed
from blackboard.infrastructure.documents import (
    Entries,
    Entry,
    FollowedOutput,
    OutputLine,
    Signal,
    WatchedSignal,
)
from blackboard.infrastructure.interfaces.following import page

logger = logging.getLogger(__name__)

P = ParamSpec("P")
R = TypeVar("R")
Wanted = Callable[[BlackboardEvent], bool]  # the events that may answer a wait: it checks again after one

THREADS = 8  # calls of one AsyncBlackboard that run at once (more queue); waits hold none while they wait
SLICE = 0.25  # seconds the follower waits on the notifier at a time: how long closing may wait for it
IDLE = 5.0  # seconds with nothing to wait for before the follower's thread ends (the next wait starts one)
PAGE = 1000  # events the follower reads at a time


def _in_thread(
    method: Callable[Concatenate[Blackboard, P], R],
) -> Callable[Concatenate[AsyncBlackboard, P], Coroutine[Any, Any, R]]:
    """`Blackboard`'s method as a coroutine: the same signature, document and exceptions."""

    @functools.wraps(method)
    async def call(self: AsyncBlackboard, /, *args: P.args, **kwargs: P.kwargs) -> R:
        return await self._call(method, *args, **kwargs)

    call.__qualname__ = f"AsyncBlackboard.{method.__name__}"
    return call


class AsyncBlackboard:
    """`Blackboard` for asyncio: the same arguments and methods, each awaitable, returning the same documents
    and raising the same errors. `wait`, `watch_topic` and `poll_topic` suspend only their task; `watch` is an
    async iterator of completions. Close it with `await bb.close()` or `async with`."""

    def __init__(
        self, url: str | None = None, *, agents_dir: str | os.PathLike[str] | None = None, **settings: Any
    ) -> None:
        """As `Blackboard(url, agents_dir=..., **settings)`, which opens (creates, upgrades) the database here,
        before the first await: open it before the loop is busy, or in `asyncio.to_thread`."""
        self._board = Blackboard(url, agents_dir=agents_dir, **settings)
        self._pool = ThreadPoolExecutor(THREADS, thread_name_prefix="blackboard-async")
        self._follower = LogFollower(self._board)
        self._closed = False
        self._shut = threading.Lock()
        self._shut_down = False

    # -- the calls: Blackboard's, each in a thread ----------------------------------------------------------
    post = _in_thread(Blackboard.post)
    claim = _in_thread(Blackboard.claim)
    complete = _in_thread(Blackboard.complete)
    fail = _in_thread(Blackboard.fail)
    retry = _in_thread(Blackboard.retry)
    cancel = _in_thread(Blackboard.cancel)
    approve = _in_thread(Blackboard.approve)
    nudge = _in_thread(Blackboard.nudge)
    reject = _in_thread(Blackboard.reject)
    cancel_all = _in_thread(Blackboard.cancel_all)
    budget = _in_thread(Blackboard.budget)
    expire = _in_thread(Blackboard.expire)
    show = _in_thread(Blackboard.show)
    signals = _in_thread(Blackboard.signals)
    match = _in_thread(Blackboard.match)
    agents = _in_thread(Blackboard.agents)
    events = _in_thread(Blackboard.events)
    position = _in_thread(Blackboard.position)
    write = _in_thread(Blackboard.write)
    read = _in_thread(Blackboard.read)
    history = _in_thread(Blackboard.history)
    entries = _in_thread(Blackboard.entries)
    search = _in_thread(Blackboard.search)
    resolve = _in_thread(Blackboard.resolve)
    summary = _in_thread(Blackboard.summary)
    # a controller's run: it holds a thread until it ends (cancelling the task does not stop it; close waits)
    solve = _in_thread(Blackboard.solve)
    resume_solve = _in_thread(Blackboard.resume_solve)
    solve_status = _in_thread(Blackboard.solve_status)
    flow_run = _in_thread(Blackboard.flow_run)
    # with wait=True it holds a thread until the flow ends, as solve does
    flow_status = _in_thread(Blackboard.flow_status)
    cancel_flow = _in_thread(Blackboard.cancel_flow)
    retry_flow = _in_thread(Blackboard.retry_flow)

    # -- the waits: checked in a thread, waited for in the task ----------------------------------------------
    async def wait(self, signal_id: str, *, timeout: float | None = None) -> Signal:
        """`blackboard wait`: the signal once it is COMPLETED, FAILED, EXPIRED, UNCLAIMED or CANCELLED (check
        `status`); TimedOut after `timeout` seconds. Only this task waits; cancelling it ends the wait."""
        query = request(WaitForSignal, signal_id=signal_id, timeout=timeout)
        chain: frozenset[str] = frozenset({query.signal_id})  # what it watches, read before each check

        def check(board: Blackboard, _: int | None) -> Signal:
            nonlocal chain
            chain = board._parts.watcher.awaited_chain(query.signal_id)
            return board.wait(query.signal_id, timeout=0)

        # the blocking wait's rule: any event of the signal or of an open upstream up its chain
        return await self._until(check, query.timeout, lambda event: may_change(event, chain))

    async def watch(
        self,
        signal_types: Iterable[str],
        *,
        blackboard_id: str | None = None,
        since: int | None = None,
        timeout: float | None = None,
        labels: Iterable[str] = (),
    ) -> AsyncIterator[WatchedSignal]:
        """`blackboard watch --type`, as an async iterator: every signal of those types (carrying every one
        of `labels`) that completes after `since` (default: when the iteration starts), in order, each with
        the `position` it was read at; TimedOut when `timeout` seconds pass with no next one. Break out of
        the loop to stop."""
        query = request(
            WatchSignals,
            signal_types=names(signal_types, "signal_types"),
            blackboard_id=blackboard_id,
            labels=names(labels, "labels"),
            since=since,
            timeout=timeout,
        )
        position = query.since if since is not None else await self.position()
        while True:
            found = await self._until(
                lambda board, read: board.watch(
                    query.signal_types,
                    blackboard_id=query.blackboard_id,
                    labels=query.labels,
                    since=position if read is None else max(position, read),  # read up to `read` before
                    timeout=0,
                ),
                query.timeout,
                lambda event: event.event_type in FINAL_EVENTS,  # some signal ended (a completion among them)
            )
            yield found
            position = found.position

    async def follow(
        self, signal_id: str, *, after: str | None = None, timeout: float | None = None
    ) -> AsyncIterator[OutputLine | Signal]:
        """`blackboard show SIG --follow`, as an async iterator: each line of the run's output as it comes
        (an `OutputLine`), then the signal once it ended (the last item: check its `status`); `after`, a
        line's `cursor`, goes on after it. TimedOut after `timeout` seconds with the signal still open. Reads
        a page at a time in a thread, and sleeps in between in this task alone (OUTPUT_POLL)."""
        query = request(FollowSignal, signal_id=signal_id, after=after, timeout=0)
        deadline = (
            None
            if timeout is None
            else time.monotonic() + request(FollowSignal, signal_id=signal_id, timeout=timeout).timeout
        )
        while True:
            found = await self._call(_page, query)
            for line in found.lines:
                yield line
            if found.outcome is not None:
                yield found.outcome
                return
            query = query.model_copy(update={"after": found.after})
            if found.lines:
                continue
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                raise WaitTimedOut(f"{query.signal_id} to finish", timeout or 0)
            await asyncio.sleep(OUTPUT_POLL if remaining is None else min(OUTPUT_POLL, remaining))

    async def watch_topic(
        self, topic: str, *, blackboard_id: str, since: int | None = None, timeout: float | None = None
    ) -> Entry:
        """`blackboard watch --topic`: the first entry version published to the topic after `since`
        (default: now); its `position` is the next `since`. TimedOut after `timeout` seconds."""
        return (await self.poll_topic(topic, blackboard_id=blackboard_id, since=since, timeout=timeout))[0]

    async def poll_topic(
        self, topic: str, *, blackboard_id: str, since: int | None = None, timeout: float | None = None
    ) -> Entries:
        """Every entry version published to the topic after `since` (default: now), in log order, as soon
        as there is one; TimedOut after `timeout` seconds with none."""
        query = request(WatchTopic, blackboard_id=blackboard_id, topic=topic, since=since, timeout=timeout)
        start = query.since if query.since is not None else await self.position()

        def check(board: Blackboard, read: int | None) -> Entries:
            # the log up to `read` was read by the check before: the next one starts there, as the
            # blocking poll moves on through the log rather than reading it again from `start`
            after = start if read is None else max(start, read)
            return board.poll_topic(query.topic, blackboard_id=query.blackboard_id, since=after, timeout=0)

        return await self._until(
            check, query.timeout, lambda event: published(event, query.blackboard_id, query.topic)
        )

    # -- closing ---------------------------------------------------------------------------------------------
    async def close(self) -> None:
        """Close the database connections after the calls under way end (a wait in progress raises Closed at
        once; a wait's check and the log's follower end within a quarter second). Idempotent; a call after it
        raises Closed."""
        self._closed = True
        self._follower.stop()
        await asyncio.to_thread(self._shutdown)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    # -- the machinery -------------------------------------------------------------------------------------
    async def _call(self, method: Callable[..., R], *args: Any, **kwargs: Any) -> R:
        """`method(board, ...)` on a thread of this board's pool, in a copy of this task's context."""
        if self._closed:
            raise Closed()
        run = functools.partial(contextvars.copy_context().run, method, self._board, *args, **kwargs)
        try:
            future = asyncio.get_running_loop().run_in_executor(self._pool, run)
        except RuntimeError:  # the pool was shut down: closed while this call was on its way
            raise Closed() from None
        return await future

    async def _until(
        self, check: Callable[[Blackboard, int | None], R], timeout: float | None, wanted: Wanted
    ) -> R:
        """`check(board, read)`'s answer, once it has one: it is a blocking call with timeout 0, which
        raises WaitTimedOut while there is nothing yet; `read` is the log position read before the last
        check (None at first). Between checks this task waits for an event that `wanted` accepts (a
        superset of those that can answer the check) to land past that position (read before the check,
        so nothing that lands during it is missed), or for the awaited signal's deadline (the check's
        `recheck_in`), when the check has the board decide. TimedOut, with the blocking call's own words,
        once `timeout` seconds have passed."""
        deadline = None if timeout is None else time.monotonic() + timeout
        read: int | None = None
        pending: WaitTimedOut | None = None
        while True:
            try:
                read, found, pending = await self._call(_checked, check, read)
            except StoreUnavailable:
                if pending is None:  # the first check: the database is down, as for the blocking call
                    raise
                moved = False  # an outage during the wait is waited out, as the blocking wait does
            else:
                if pending is None:
                    return found  # type: ignore[return-value]
                moved = True
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                raise WaitTimedOut(pending.what, timeout or 0)
            if moved:
                # the awaited signal's deadline, if it comes first: the next check has the board decide there
                recheck = pending.recheck_in if pending is not None else None
                wake = min((t for t in (remaining, recheck) if t is not None), default=None)
                await self._follower.past(read, wake, wanted)  # type: ignore[arg-type]
            else:
                await asyncio.sleep(SLICE if remaining is None else min(SLICE, remaining))

    def _shutdown(self) -> None:
        with self._shut:
            if self._shut_down:
                return
            self._follower.join()
            self._pool.shutdown(wait=True)
            self._board.close()
            self._shut_down = True


def _checked(
    board: Blackboard, check: Callable[[Blackboard, int | None], R], read: int | None
) -> tuple[int, R | None, WaitTimedOut | None]:
    """The log's position, then the check: its answer, or the TimedOut that says there is none yet."""
    position = board.position()
    try:
        return position, check(board, read), None
    except WaitTimedOut as pending:
        return position, None, pending


class LogFollower:
    """Wakes the tasks that wait for something to land in the log: one thread per board, started by the
    first wait and ended after IDLE seconds with none, waits on the board's notifier (PostgreSQL's
    LISTEN, SQLite's poll) for the whole of them and reads each new page of the log once; it wakes a
    task only when an event it wants landed past its position (each task waits on a future of its own
    loop), so a thousand waits on a busy board do not check a thousand times per event."""

    def __init__(self, board: Blackboard) -> None:
        self._board = board
        self._lock = threading.Lock()
        self._waiting: dict[asyncio.Future[None], Waiter] = {}
        self._seen = -1  # the last position this has read the log to (-1: not yet): never past its end
        self._thread: threading.Thread | None = None
        self._stopped = False
        self._wake = threading.Event()  # a first wait after an idle spell

    async def past(self, position: int, timeout: float | None, wanted: Wanted) -> None:
        """Until an event that `wanted` accepts lands past `position`, or `timeout` seconds (then it returns
        too: the caller checks again, and its deadline tells). Closed once the board closes."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        with self._lock:
            if self._stopped:
                raise Closed()
            if position < self._seen:  # this has read past it already, unseen by this task: check again
                return
            self._waiting[future] = Waiter(loop, position, wanted)
            if self._thread is None:
                self._thread = threading.Thread(target=self._follow, name="blackboard-log", daemon=True)
                self._thread.start()
            self._wake.set()
        try:
            await asyncio.wait_for(future, timeout)
        except TimeoutError:
            pass
        finally:
            with self._lock:
                self._waiting.pop(future, None)

    def stop(self) -> None:
        """Every task waiting raises Closed; the thread ends within a slice."""
        with self._lock:
            self._stopped = True
            waiting, self._waiting = self._waiting, {}
            self._wake.set()
        for future, waiter in waiting.items():
            _settle(waiter.loop, future, Closed)

    def join(self) -> None:
        with self._lock:
            thread = self._thread
        if thread is not None:
            thread.join()

    def _follow(self) -> None:
        parts = self._board._parts
        try:
            while True:
                with self._lock:
                    if self._stopped:
                        return
                    busy = bool(self._waiting)
                    self._wake.clear()
                if not busy:
                    if not self._wake.wait(IDLE):
                        with self._lock:
                            if not self._waiting:  # a wait that comes now starts a new thread, which
                                self._thread = None  # reads from the log's end then, not from here
                                self._seen = -1
                                return
                    continue
                try:
                    if self._seen < 0:
                        self._moved(parts.store.last_position(), None)
                    elif parts.notifier.wait(self._seen, SLICE) and not self._read(parts.store):
                        time.sleep(0.02)  # told of an append not readable yet: not a busy loop meanwhile
                except (
                    StoreUnavailable
                ):  # a restart or a network cut: waited out, the waits check again after
                    time.sleep(SLICE)
        except Exception as exc:  # noqa: BLE001 - whatever stops this thread reaches every waiting task
            logger.warning("stopped following the log (%s); the waits under way raise it", exc)
            with self._lock:
                waiting, self._waiting, self._thread = self._waiting, {}, None
            for future, waiter in waiting.items():
                _settle(waiter.loop, future, functools.partial(_again, exc))

    def _read(self, store: Any) -> bool:
        """The log past what this has read, a page at a time, each shown to the waiting tasks; whether any."""
        position, read = self._seen, False
        while not self._stopped and (page := store.read_all(after=position, limit=PAGE)):
            position, read = page[-1].position, True
            self._moved(position, page)
        return read

    def _moved(self, last: int, page: list[Recorded] | None) -> None:
        """The log was read to `last`: the tasks waiting below it wake if `page` (the events read, None when
        unknown) holds one they want past their position."""
        with self._lock:  # a wait that comes after this finds itself behind `_seen` and checks again
            self._seen = seen = max(self._seen, last)
            waiting = list(self._waiting.items())
        ready = [  # matched outside the lock: the event loop's `past` never waits on a page's matching
            (future, waiter.loop)
            for future, waiter in waiting
            if waiter.position < seen
            and (page is None or any(r.position > waiter.position and waiter.wanted(r.event) for r in page))
        ]
        for future, loop in ready:
            _settle(loop, future, None)


@dataclass(frozen=True, slots=True)
class Waiter:
    loop: asyncio.AbstractEventLoop
    position: int
    wanted: Wanted


def _settle(
    loop: asyncio.AbstractEventLoop,
    future: asyncio.Future[None],
    error: Callable[[], BaseException] | None,
) -> None:
    """Done, in its own loop's thread: woken, or raising a new `error()` (each task its own exception)."""

    def settle() -> None:
        if future.done():
            return
        if error is None:
            future.set_result(None)
        else:
            future.set_exception(error())

    try:
        loop.call_soon_threadsafe(settle)
    except RuntimeError:  # that task's loop is closed: nobody waits there any more
        pass


def _again(error: Exception) -> BaseException:
    """What stopped the follower, raised in one more task (chained, so each has its own traceback)."""
    again = StoreUnavailable(f"stopped following the log: {error}")
    again.__cause__ = error
    return again


def _page(board: Blackboard, query: FollowSignal) -> FollowedOutput:
    """A page of a follow (interfaces/following.py), read on a thread of the pool: it never waits."""
    return page(board._parts.watcher, query)
