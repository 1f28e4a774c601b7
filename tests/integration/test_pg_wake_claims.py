"""On PostgreSQL a post's notification carries the signals it made claimable (and a claim's, the
signals it took), so an idle worker that knew every claimable signal claims a new one without asking
the read model; the claim policy's order still decides, and a notification that cannot tell (one too
big to carry them, an append that did more) sends the worker back to its query."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest

from blackboard.application.commands import CompleteSignal, GetOpenSignals, PostSignal, SetBudget
from blackboard.domain.signals import AgentSignal
from blackboard.infrastructure.agents.parsing import AgentDefinition
from blackboard.infrastructure.composition.clock import SystemClock
from blackboard.infrastructure.composition.settings import BlackboardSettings, worker_options
from blackboard.infrastructure.memory.agents import FixedAgentRegistry
from blackboard.infrastructure.persistence.listening import PostgresNotifier
from blackboard.infrastructure.persistence.postgres import NOTIFY_CHANNEL
from blackboard.infrastructure.worker.loop import ClaimLoop
from tests.integration.conftest import AGENTS, SqlBoard
from tests.waiting import wait_until

RESEARCHER = next(a for a in AGENTS if a.agent_id == "ps-researcher")


class CountedQueries:
    """The worker's queries, counting the candidate queries (looks) it sends and the reads by id."""

    def __init__(self, queries) -> None:
        self._queries = queries
        self.candidate_queries = 0
        self.named: list[tuple[str, ...]] = []

    def open_candidates(self, query: GetOpenSignals):
        self.candidate_queries += 1
        return self._queries.open_candidates(query)

    def look(self, query: GetOpenSignals):
        self.candidate_queries += 1
        return self._queries.look(query)

    def candidates_named(self, signal_ids):
        self.named.append(tuple(signal_ids))
        return self._queries.candidates_named(signal_ids)

    def __getattr__(self, name: str):
        return getattr(self._queries, name)


class CountedService:
    """The worker's service, keeping the signal ids each claim command named."""

    def __init__(self, service) -> None:
        self._service = service
        self.claims: list[tuple[str, ...]] = []

    def claim_signals(self, cmd):
        self.claims.append(tuple(cmd.signal_ids))
        return self._service.claim_signals(cmd)

    def __getattr__(self, name: str):
        return getattr(self._service, name)


class Running:
    """A researcher's claim loop in a thread, its slots held until released."""

    def __init__(self, board: SqlBoard, concurrency: int, wait_idle: bool = True) -> None:
        self._wait_idle = wait_idle
        self.queries = CountedQueries(board.queries)
        self.service = CountedService(board.service)
        self.claimed: list[tuple[str, int]] = []  # (signal id, candidate queries sent before its claim)
        self.notifier = PostgresNotifier(board.engine, board.store)
        definition = AgentDefinition(profile=RESEARCHER, path=Path("ps-researcher.md"))
        options = worker_options(BlackboardSettings(head_start=0), "ps-researcher", False, None)
        self.loop = ClaimLoop(
            replace(options, concurrency=concurrency, sweep_every=3600.0),  # one sweep, at the start
            self.service,
            self.queries,
            board.store,
            self.notifier,
            lambda _name: definition,
            lambda: list(AGENTS),
            board.settings.claim_threshold,
            self._started,
        )
        self._thread = threading.Thread(target=self.loop.run, daemon=True)
        self.tokens: dict[str, str | None] = {}  # each claim's own token, as the loop drew it

    def _started(self, _agent: AgentDefinition, signal: AgentSignal) -> None:
        self.tokens[signal.signal_id] = signal.claim_token
        self.claimed.append((signal.signal_id, self.queries.candidate_queries))

    def __enter__(self) -> Running:
        self._thread.start()
        if self._wait_idle:  # idle: it has looked, knows every claimable signal, and listens
            wait_until(self._idle, 20, "an idle loop")
        return self

    def _idle(self) -> bool:
        view = self.loop._view
        return view is not None and self.notifier.news(view.position, view.position) is not None

    def past(self, position: int) -> bool:
        """Whether it has had a round after hearing of `position`, keeping what it knows (or claimed)."""
        view = self.loop._view
        return view is not None and view.position >= position

    def __exit__(self, *_) -> None:
        self.loop.stop()
        self._thread.join(10)
        self.notifier.close()

    def ids(self) -> list[str]:
        return [sid for sid, _ in self.claimed]


def post(
    board: SqlBoard,
    n: int,
    priority: int = 2,
    capabilities: tuple[str, ...] = (),
    ps_id: str = "ps-wake",
    **more,
) -> str:
    return board.service.post_signal(
        PostSignal(
            signal_type="RESEARCH",
            ps_id=ps_id,
            entry_id=f"e-{n}",
            topic=f"wake {n}",
            priority=priority,
            target_capabilities=capabilities,
            **more,
        )
    ).signal_id


@pytest.fixture
def board(pg_engine) -> SqlBoard:
    return SqlBoard(pg_engine)


def test_an_idle_worker_claims_a_post_from_its_notification_without_a_candidates_query(board):
    with Running(board, concurrency=4) as running:
        looked = running.queries.candidate_queries
        first = post(board, 1)
        wait_until(lambda: len(running.claimed) == 1, 20, "the first claim")
        second = post(board, 2)
        wait_until(lambda: len(running.claimed) == 2, 20, "the second claim")

    assert running.claimed == [(first, looked), (second, looked)]  # no query between the look and either


def test_a_more_urgent_older_signal_still_goes_first(board):
    with Running(board, concurrency=1) as running:
        looked = running.queries.candidate_queries
        held = post(board, 1)
        wait_until(lambda: len(running.claimed) == 1, 20, "the first claim")
        urgent = post(board, 2, priority=0)  # posted while the only slot is taken
        later = post(board, 3, priority=3)
        running.loop.release([held])
        wait_until(lambda: len(running.claimed) == 2, 20, "the second claim")
        running.loop.release([urgent])
        wait_until(lambda: len(running.claimed) == 3, 20, "the third claim")

    assert running.ids() == [held, urgent, later]
    assert [n for _, n in running.claimed] == [looked] * 3  # each from what the notifications told


def test_a_signal_posted_for_later_that_came_due_goes_before_a_newer_post(pg_engine):
    board = SqlBoard(pg_engine)
    board.clock = SystemClock()  # the worker sleeps until a signal comes due by the machine's clock
    board.rewire()
    due_at = datetime.now(UTC) + timedelta(seconds=2)
    later = post(board, 1, priority=0, not_before=due_at)  # no notification will tell when it comes due
    with Running(board, concurrency=1) as running:  # it looks first: nothing is due yet
        held = post(board, 2)
        wait_until(lambda: len(running.claimed) == 1, 20, "the first claim")
        newer = post(board, 3, priority=3)  # its notification carries it
        time.sleep(max(0.0, (due_at - datetime.now(UTC)).total_seconds()) + 0.3)
        running.loop.release([held])
        wait_until(lambda: len(running.claimed) == 2, 20, "the second claim")
        running.loop.release([later])
        wait_until(lambda: len(running.claimed) == 3, 20, "the third claim")

    assert running.ids() == [held, later, newer]


def test_a_notification_too_big_to_carry_the_signal_sends_the_worker_to_its_query(board):
    many = ("RESEARCH", *(f"CAPABILITY-{n:04d}" for n in range(600)))  # over 8,000 bytes of targets
    with Running(board, concurrency=4) as running:
        looked = running.queries.candidate_queries
        big = post(board, 1, capabilities=many)
        wait_until(lambda: len(running.claimed) == 1, 20, "the claim")
        small = post(board, 2)
        wait_until(lambda: len(running.claimed) == 2, 20, "the second claim")

    (first, queried_before), (second, _) = running.claimed
    assert (first, second) == (big, small)
    assert queried_before > looked  # found by the query, not the notification


def test_an_append_that_did_more_than_post_sends_the_worker_to_its_query(board):
    with Running(board, concurrency=4) as running:
        upstream = post(board, 0)
        wait_until(lambda: len(running.claimed) == 1, 20, "the upstream's claim")
        running.loop.release([upstream])
        looked = running.queries.candidate_queries
        waiting = board.service.post_signal(  # waits on the upstream: its notification tells nothing
            PostSignal(signal_type="RESEARCH", ps_id="ps-wake", entry_id="e-9", topic="w", after=(upstream,))
        ).signal_id
        board.service.complete_signal(
            CompleteSignal(signal_id=upstream, agent_id="ps-researcher", token=running.tokens[upstream])
        )
        wait_until(lambda: len(running.claimed) == 2, 20, "the dependant's claim")

    assert running.claimed[1][0] == waiting and running.claimed[1][1] > looked


# -- what the review of the woken claim found ------------------------------------------------------


def test_a_post_on_a_board_over_budget_sends_no_claim_and_the_fast_path_stays(board):
    board.service.set_budget(SetBudget(board="ps-spent", usd=0))  # reached at once: nothing is claimed there
    with Running(board, concurrency=4) as running:
        looked = running.queries.candidate_queries
        stopped = post(board, 1, ps_id="ps-spent")
        wait_until(lambda: running.service.claims or running.past(board.store.last_position()), 20, "a round")
        other = post(board, 2)
        wait_until(lambda: len(running.claimed) == 1, 20, "the claim on the other board")

    assert running.service.claims == [(other,)]  # none naming the stopped board's signal, which waits
    assert running.claimed == [(other, looked)] and stopped not in running.loop._view.candidates


class TextFits(FixedAgentRegistry):
    """The researcher fits a text about sources (`post --capability auto`)."""

    def text_scores(self, text: str) -> dict[str, float]:
        return {"ps-researcher": 0.95} if "sources" in text else {}


def test_a_notification_carries_no_text_and_the_worker_reads_an_auto_signal_s_row_by_id(pg_engine):
    board = SqlBoard(pg_engine)
    board.registry = TextFits(AGENTS)
    board.rewire()
    with psycopg.connect(pg_engine.url.set(drivername="postgresql").render_as_string(False)) as listener:
        listener.autocommit = True
        listener.execute(f"LISTEN {NOTIFY_CHANNEL}")
        with Running(board, concurrency=4) as running:
            looked = running.queries.candidate_queries
            secret = post(board, 1, capabilities=("auto",), prompt="find the sources of the leak")
            wait_until(lambda: len(running.claimed) == 1, 20, "the claim")
        heard = [n.payload for n in listener.notifies(timeout=1, stop_after=1)]

    assert heard and secret in heard[0] and "leak" not in heard[0] and "wake 1" not in heard[0]
    assert running.claimed == [(secret, looked)]  # from the notification, its text read by id
    assert running.queries.named == [(secret,)]


def test_a_look_at_rows_behind_the_log_is_not_taken_for_every_claimable_signal(board):
    with Running(board, concurrency=1) as running:
        held = post(board, 0)
        wait_until(lambda: len(running.claimed) == 1, 20, "the first claim")
        missed = post(board, 1)  # its slot taken: not claimed yet
        board.read_model.reset()  # a rebuild under way: the rows are behind the log
        board.service.complete_signal(
            CompleteSignal(signal_id=held, agent_id="ps-researcher", token=running.tokens[held])
        )
        looked = running.queries.candidate_queries
        end = board.store.last_position()  # the completion heard first: else the loop may decide on what it
        # heard of the posts alone (the notification is on its way), claim `missed` and never look
        wait_until(lambda: (running.notifier.seen() or 0) >= end, 20, "the completion heard")
        running.loop.release([held])  # it looks (a completion tells nothing): the rows have nothing
        wait_until(lambda: running.queries.candidate_queries >= looked + 2, 60, "the look")
        time.sleep(0.3)
        board.read_model.apply(board.store.read_all())  # the rebuild ends (it notifies nothing)
        post(board, 2, priority=3)  # wakes it
        wait_until(lambda: len(running.claimed) == 2, 20, "the second claim")

    assert running.ids() == [held, missed]  # the older, more urgent one the look missed: not forgotten


def test_a_notification_not_of_the_log_wakes_a_look_and_leaves_the_fast_path_on(board):
    with Running(board, concurrency=4) as running:
        looked = running.queries.candidate_queries
        with board.engine.connect() as conn:
            conn.exec_driver_sql(f"NOTIFY {NOTIFY_CHANNEL}, 'an operator was here'")
            conn.commit()
        wait_until(lambda: running.queries.candidate_queries >= looked + 2, 20, "a look on the stray")
        wait_until(running._idle, 20, "idle again")
        looked = running.queries.candidate_queries
        first = post(board, 1)
        wait_until(lambda: len(running.claimed) == 1, 20, "the claim")

    assert running.claimed == [(first, looked)]  # from the notification, as before the stray


def test_a_backlog_posted_while_busy_is_queried_and_a_claim_names_a_bounded_few(pg_engine):
    board = SqlBoard(pg_engine)
    board.clock = SystemClock()  # 40 posts on the test clock (a second each) would expire the first
    board.rewire()
    with Running(board, concurrency=1) as running:
        held = post(board, 0)
        wait_until(lambda: len(running.claimed) == 1, 20, "the first claim")
        looked = running.queries.candidate_queries
        backlog = [post(board, n) for n in range(1, 41)]  # 40 notifications while its slot is taken
        running.loop.release([held])
        wait_until(lambda: len(running.claimed) == 2, 20, "the second claim")
        view = running.loop._view

    assert running.claimed[1] == (backlog[0], running.claimed[1][1]) and running.claimed[1][1] > looked
    assert max(len(named) for named in running.service.claims) <= 8  # the search's limit, not 40
    assert view is None or len(view.candidates) <= 16
