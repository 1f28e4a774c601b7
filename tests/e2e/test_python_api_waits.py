"""The Python API's and the async API's waits end at the signal's deadline as the board decides it, with no
worker and no sweeper (issue 32, defect 6): they return the signal EXPIRED, as they return a FAILED one, on a
SQLite file and on PostgreSQL; their own `timeout` still raises TimedOut when it comes first. A wait on a signal
that waits for an upstream ends alike, blocking or async, when the upstream expires or when it ends and the
signal's own deadline comes."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from datetime import timedelta
from typing import Any

import pytest

from blackboard import AsyncBlackboard, Blackboard, InvalidInput, TimedOut
from tests.e2e.conftest import database_url

LATE = 25.0  # seconds: a generous bound on "about 2 s" for a loaded machine (the waits' own timeout is 30)


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path_factory) -> str:
    return database_url(request, tmp_path_factory, "api-waits")


@pytest.fixture
def board() -> str:
    return f"ps-{uuid.uuid4().hex[:8]}"


def test_a_wait_returns_the_signal_expired_at_its_post_timeout(url, agents_dir, board):
    with Blackboard(url, agents_dir=agents_dir) as api:
        posted = api.post("RESEARCH", board, "e-1", "nobody takes it", timeout=timedelta(seconds=2))
        assert posted.timeout_s == 2 and posted.waiting == "a worker that fits: RESEARCH"

        started = time.monotonic()
        ended = api.wait(posted.signal_id, timeout=30)
        took = time.monotonic() - started

        assert ended.status == "EXPIRED" and "not claimed within 2s" in ended.result.error
        assert 1.5 <= took < LATE, f"the wait took {took:.1f}s"


def test_an_async_wait_returns_the_signal_expired_at_its_post_timeout(url, agents_dir, board):
    async def main() -> tuple[str, str, float]:
        async with AsyncBlackboard(url, agents_dir=agents_dir) as api:
            posted = await api.post("RESEARCH", board, "e-1", "nobody takes it", timeout="2s")
            started = time.monotonic()
            ended = await api.wait(posted.signal_id, timeout=30)
            return ended.status, ended.result.error, time.monotonic() - started

    status, error, took = asyncio.run(main())

    assert status == "EXPIRED" and "not claimed within 2s" in error
    assert 1.5 <= took < LATE, f"the wait took {took:.1f}s"


def test_the_default_post_timeout_setting_keeps_the_old_rule_for_an_api_wait(url, agents_dir, board):
    with Blackboard(url, agents_dir=agents_dir, post_timeout=2) as api:
        posted = api.post("RESEARCH", board, "e-1", "nobody takes it")  # no timeout of its own

        assert api.wait(posted.signal_id, timeout=30).status == "EXPIRED"


def test_an_api_wait_s_own_timeout_comes_first(url, agents_dir, board):
    with Blackboard(url, agents_dir=agents_dir) as api:
        posted = api.post("RESEARCH", board, "e-1", "no deadline of its own")  # it waits for a worker
        with pytest.raises(TimedOut):
            api.wait(posted.signal_id, timeout=0.5)
        assert api.show(posted.signal_id).status == "POSTED"


def test_the_timeout_s_former_name_still_works_and_both_names_at_once_are_refused(url, agents_dir, board):
    with Blackboard(url, agents_dir=agents_dir) as api:
        gate = api.post("DECISION", board, "e-1", "ship it?", gate=True, gate_timeout="2h")
        assert gate.timeout_s == 7200
        with pytest.raises(InvalidInput, match="timeout: give timeout or gate_timeout"):
            api.post("DECISION", board, "e-2", "ship it?", gate=True, timeout="1h", gate_timeout="2h")


# -- a signal that waits for an upstream: the blocking and the async wait end alike (one rule) -----------------
def wait_both(
    url: str, agents_dir, board: str, scenario, **settings: Any
) -> dict[str, tuple[str, str, float]]:
    """`scenario(post, then)` posts what it needs (through `post`, the blocking handle's) and returns the signal
    to wait on; `then()` runs in a thread once the wait is under way. The blocking wait and the async one, each
    on a board of its own: their status, error and how long they took. `settings`: every handle's."""
    found: dict[str, tuple[str, str, float]] = {}
    with Blackboard(url, agents_dir=agents_dir, **settings) as api:
        for kind in ("blocking", "async"):
            where = f"{board}-{kind[0]}"
            awaited, then = scenario(lambda *a, **k: api.post(a[0], where, *a[1:], **k), api)
            if then is not None:
                threading.Timer(0.5, then).start()
            started = time.monotonic()
            if kind == "blocking":
                ended = api.wait(awaited, timeout=30)
            else:

                async def waited(signal_id: str = awaited) -> Any:
                    async with AsyncBlackboard(url, agents_dir=agents_dir, **settings) as other:
                        return await other.wait(signal_id, timeout=30)

                ended = asyncio.run(waited())
            found[kind] = (
                ended.status,
                ended.result.error if ended.result else "",
                time.monotonic() - started,
            )
    return found


def test_a_wait_on_a_signal_whose_upstream_expires_ends_expired_blocking_and_async_alike(
    url, agents_dir, board
):
    def scenario(post, api):
        upstream = post("RESEARCH", "e-1", "nobody takes it", timeout="2s")
        return post("RESEARCH", "e-2", "after it", after=[upstream.signal_id]).signal_id, None

    found = wait_both(url, agents_dir, board, scenario)  # before: both waited out their own 30 s

    for kind, (status, error, took) in found.items():
        assert status == "EXPIRED" and "ended EXPIRED" in error, (kind, status, error)
        assert took < LATE, f"the {kind} wait took {took:.1f}s"


def test_a_wait_on_a_signal_whose_upstream_ends_meanwhile_ends_at_its_own_deadline_blocking_and_async_alike(
    url, agents_dir, board
):
    def scenario(post, api):
        upstream = post("RESEARCH", "e-1", "done elsewhere")
        awaited = post("RESEARCH", "e-2", "nobody takes it", after=[upstream.signal_id], timeout="2s")

        def complete() -> None:  # another handle: the wait learns of it through the store
            with Blackboard(url, agents_dir=agents_dir) as other:
                other.claim(upstream.signal_id, agent="ps-researcher")
                other.complete(upstream.signal_id, agent="ps-researcher")

        return awaited.signal_id, complete

    found = wait_both(url, agents_dir, board, scenario)  # before: the async wait waited out its 30 s

    for kind, (status, error, took) in found.items():
        assert status == "EXPIRED" and "not claimed within 2s" in error, (kind, status, error)
        assert took < LATE, f"the {kind} wait took {took:.1f}s"


def test_a_wait_behind_an_upstream_claimed_meanwhile_ends_at_the_claim_s_lapse_blocking_and_async_alike(
    url, agents_dir, board
):
    """The upstream's claim moves its deadline (a 60 s post timeout becomes a 2 s claim timeout). Before: the
    blocking wait ended EXPIRED at the lapse, the async one heard only the upstream's end and its own
    signal's events, kept the stale 60 s deadline and timed out at its own 30 s."""

    def scenario(post, api):
        upstream = post("RESEARCH", "e-1", "claimed, then its worker dies", timeout="60s", max_attempts=1)
        awaited = post("RESEARCH", "e-2", "after it", after=[upstream.signal_id]).signal_id

        def claim() -> None:  # another handle, whose worker then goes silent: the claim lapses
            with Blackboard(url, agents_dir=agents_dir, claim_timeout=2) as other:
                other.claim(upstream.signal_id, agent="ps-researcher")

        return awaited, claim

    found = wait_both(url, agents_dir, board, scenario, claim_timeout=2)

    for kind, (status, error, took) in found.items():
        assert status == "EXPIRED" and "ended EXPIRED" in error, (kind, status, error)
        assert took < LATE, f"the {kind} wait took {took:.1f}s"
