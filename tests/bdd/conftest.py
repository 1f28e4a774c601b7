"""Shared steps for the blackboard features, run on the in-memory `Board` of tests/fakes.py and on the real
container over a SQLite file (tests/bdd/sqlite_board.py).

Values travel between steps through `target_fixture`: `entry` (a PostSignal the PS skill is about to
send), `signal` (the signal last posted or touched), `outcome` (what a command returned, or the
BlackboardError it raised), `ended` (signals an expiry run ended), `watched` / `watched_again`.
A signal is named either as "the signal" (the last one posted) or by its type, "the "REVIEW" signal".
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from datetime import timedelta

import pytest
from pytest_bdd import given, parsers, then, when

import blackboard.domain.errors
from blackboard.application.commands import (
    ClaimSignal,
    CompleteSignal,
    ExpireSignals,
    FailSignal,
    GetSignalById,
    ListSignals,
    PostSignal,
    WatchSignals,
)
from blackboard.application.queries import WatchResult
from blackboard.domain.capabilities import AgentCapability, AgentProfile
from blackboard.domain.errors import BlackboardError
from blackboard.domain.events import AgentSignalCompleted, AgentSignalPosted, BlackboardEvent
from blackboard.domain.presence import WorkerPresence
from blackboard.domain.signals import AgentSignal, SignalStatus, SignalType
from tests.bdd.sqlite_board import SqliteBoard
from tests.fakes import Board

PS_ID = "PROJ-001"


@pytest.fixture(autouse=True, params=["memory", "sqlite"])
def core(request) -> str:
    """Every scenario runs twice: on the in-memory core, and on the real container over a SQLite file.
    (Autouse, as pytest-bdd asks for the steps' fixtures only while it runs them.)"""
    return request.param


@pytest.fixture
def board(core, tmp_path) -> Iterator[Board]:
    """A fresh board with no agents; `Given an agent ...` steps register them."""
    if core == "memory":
        yield Board()
        return
    made = SqliteBoard(f"sqlite:///{tmp_path / 'bdd.db'}")
    yield made
    made.close()


@pytest.fixture
def notifications() -> list[tuple[str, AgentSignal]]:
    """What listeners were told, in order: (listener, the signal as it read it when notified)."""
    return []


# ---------------------------------------------------------------- helpers
def _post(board: Board, signal_type: str, *, after: tuple[str, ...] = ()) -> AgentSignal:
    return board.service.post_signal(
        PostSignal(
            signal_type=SignalType(signal_type),
            ps_id=PS_ID,
            entry_id="e-1",
            topic=f"{signal_type.lower()} on event sourcing for agents",
            after=after,
        )
    )


def _read(board: Board, signal_id: str) -> AgentSignal:
    return board.queries.get_signal(GetSignalById(signal_id=signal_id))


def _of_type(board: Board, signal_type: str) -> AgentSignal:
    found = board.queries.list_signals(ListSignals(signal_type=SignalType(signal_type)))
    assert len(found) == 1, f"expected one {signal_type} signal, found {[s.signal_id for s in found]}"
    return found[0]


def _attempt(command):
    """Run a command that may be refused; hand back its result or the refusal."""
    try:
        return command()
    except BlackboardError as refusal:
        return refusal


def _claim(board: Board, name: str, signal_id: str) -> AgentSignal | BlackboardError:
    return _attempt(lambda: board.service.claim_signal(ClaimSignal(signal_id=signal_id, agent_id=name)))


def _complete(board: Board, name: str, signal_id: str, artifact: str) -> AgentSignal | BlackboardError:
    return _attempt(
        lambda: board.service.complete_signal(
            CompleteSignal(signal_id=signal_id, agent_id=name, artifact_path=artifact)
        )
    )


def _fail(board: Board, name: str, signal_id: str, error: str) -> AgentSignal | BlackboardError:
    return _attempt(
        lambda: board.service.fail_signal(FailSignal(signal_id=signal_id, agent_id=name, error=error))
    )


def _succeeded(outcome: object) -> AgentSignal:
    assert not isinstance(outcome, BaseException), f"refused: {outcome!r}"
    assert isinstance(outcome, AgentSignal)
    return outcome


# ------------------------------------------------------------------ agents
@given(parsers.parse('an agent "{name}" able to do "{capability}" at {score:f}'))
def an_agent(board: Board, name: str, capability: str, score: float) -> None:
    _register(board, name, capability, score, threshold=None)


@given(
    parsers.parse(
        'an agent "{name}" able to do "{capability}" at {score:f} with its own threshold {threshold:f}'
    )
)
def an_agent_with_threshold(board: Board, name: str, capability: str, score: float, threshold: float) -> None:
    _register(board, name, capability, score, threshold)


def _register(board: Board, name: str, capability: str, score: float, threshold: float | None) -> None:
    known = board.registry.get(name)
    capabilities = (*(known.capabilities if known else ()), AgentCapability(type=capability, score=score))
    board.registry.add(AgentProfile(agent_id=name, capabilities=capabilities, threshold=threshold))


# --------------------------------------------------------------- listeners
@given(parsers.parse('"{name}" listens for posted signals it is able to do'))
def listens_for_posted(board: Board, notifications: list, name: str) -> None:
    def on_posted(event: BlackboardEvent) -> None:
        signal, profile = _read(board, event.signal_id), board.registry.get(name)
        if profile and profile.may_claim(signal, board.settings.claim_threshold):
            notifications.append((name, signal))

    board.dispatcher.register(AgentSignalPosted, on_posted)


@given(parsers.parse('a watcher listens for "{signal_type}" completions'))
def watcher_listens(board: Board, notifications: list, signal_type: str) -> None:
    def on_completed(event: BlackboardEvent) -> None:
        signal = _read(board, event.signal_id)
        if signal.signal_type is SignalType(signal_type):
            notifications.append(("the watcher", signal))

    board.dispatcher.register(AgentSignalCompleted, on_completed)


# ----------------------------------------------------------------- posting
@given(
    parsers.parse('the PS skill has created exploration entry "{entry_id}" of type "{signal_type}"'),
    target_fixture="entry",
)
def an_entry(entry_id: str, signal_type: str) -> PostSignal:
    return PostSignal(
        signal_type=SignalType(signal_type),
        ps_id=PS_ID,
        entry_id=entry_id,
        topic=f"{signal_type.lower()} for {entry_id}",
    )


@given(
    parsers.parse(
        'the PS skill has created exploration entry "{entry_id}" of type "{signal_type}" with dedupe key "{key}"'
    ),
    target_fixture="entry",
)
def an_entry_with_key(entry_id: str, signal_type: str, key: str) -> PostSignal:
    return an_entry(entry_id, signal_type).model_copy(update={"dedupe_key": key})


@given("the PS skill has posted a signal for the entry", target_fixture="signal")
@when("the PS skill posts a signal for the entry", target_fixture="signal")
def post_the_entry(board: Board, entry: PostSignal) -> AgentSignal:
    return board.service.post_signal(entry)


@when("the PS skill posts a signal for the entry again", target_fixture="repost")
def post_the_entry_again(board: Board, entry: PostSignal) -> AgentSignal:
    return board.service.post_signal(entry)


@given(parsers.parse('a "{signal_type}" signal has been posted'), target_fixture="signal")
def a_signal_posted(board: Board, signal_type: str) -> AgentSignal:
    return _post(board, signal_type)


@given(
    parsers.parse('a "{signal_type}" signal has been posted after the "{upstream}" signal'),
    target_fixture="signal",
)
def a_signal_posted_after(board: Board, signal_type: str, upstream: str) -> AgentSignal:
    return _post(board, signal_type, after=(_of_type(board, upstream).signal_id,))


@when(
    parsers.parse('a "{signal_type}" signal is posted after the "{upstream}" signal'),
    target_fixture="outcome",
)
def post_after(board: Board, signal_type: str, upstream: str) -> AgentSignal | BlackboardError:
    return _attempt(lambda: _post(board, signal_type, after=(_of_type(board, upstream).signal_id,)))


@when(parsers.parse('a "{signal_type}" signal is posted after "{upstream_id}"'), target_fixture="outcome")
def post_after_id(board: Board, signal_type: str, upstream_id: str) -> AgentSignal | BlackboardError:
    return _attempt(lambda: _post(board, signal_type, after=(upstream_id,)))


# ---------------------------------------------------------------- claiming
@when(parsers.parse('"{name}" weighs up the signal'), target_fixture="fit")
def weigh_up(board: Board, signal: AgentSignal, name: str):
    ranking = board.queries.match(GetSignalById(signal_id=signal.signal_id))
    return next(v for v in ranking if v.agent.agent_id == name)


@given(parsers.parse('"{name}" has claimed the signal'), target_fixture="signal")
def has_claimed(board: Board, signal: AgentSignal, name: str) -> AgentSignal:
    return _succeeded(_claim(board, name, signal.signal_id))


@given(parsers.parse('"{name}" has claimed the "{signal_type}" signal'))
def has_claimed_type(board: Board, name: str, signal_type: str) -> None:
    _succeeded(_claim(board, name, _of_type(board, signal_type).signal_id))


@when(parsers.parse('"{name}" claims the signal'), target_fixture="outcome")
def claims(board: Board, signal: AgentSignal, name: str) -> AgentSignal | BlackboardError:
    return _claim(board, name, signal.signal_id)


@when(parsers.parse('"{name}" claims the "{signal_type}" signal'), target_fixture="outcome")
def claims_type(board: Board, name: str, signal_type: str) -> AgentSignal | BlackboardError:
    return _claim(board, name, _of_type(board, signal_type).signal_id)


# -------------------------------------------------------------- completing
@given(parsers.parse('"{name}" has completed the signal with artifact "{artifact}"'), target_fixture="signal")
def has_completed(board: Board, signal: AgentSignal, name: str, artifact: str) -> AgentSignal:
    return _succeeded(_complete(board, name, signal.signal_id, artifact))


@given(parsers.parse('"{name}" has completed the "{signal_type}" signal'))
def has_completed_type(board: Board, name: str, signal_type: str) -> None:
    _succeeded(
        _complete(board, name, _of_type(board, signal_type).signal_id, f"docs/{signal_type.lower()}.md")
    )


@given(parsers.parse('"{name}" has failed the "{signal_type}" signal because "{error}"'))
def has_failed_type(board: Board, name: str, signal_type: str, error: str) -> None:
    _succeeded(_fail(board, name, _of_type(board, signal_type).signal_id, error))


@when(parsers.parse('"{name}" completes the signal with artifact "{artifact}"'), target_fixture="outcome")
def completes(board: Board, signal: AgentSignal, name: str, artifact: str) -> AgentSignal | BlackboardError:
    return _complete(board, name, signal.signal_id, artifact)


@when(parsers.parse('"{name}" fails the signal because "{error}"'), target_fixture="outcome")
def fails(board: Board, signal: AgentSignal, name: str, error: str) -> AgentSignal | BlackboardError:
    return _fail(board, name, signal.signal_id, error)


@when(parsers.parse('"{name}" fails the "{signal_type}" signal because "{error}"'), target_fixture="outcome")
def fails_type(board: Board, name: str, signal_type: str, error: str) -> AgentSignal | BlackboardError:
    return _fail(board, name, _of_type(board, signal_type).signal_id, error)


# ------------------------------------------------------------- time passing
@given(parsers.parse("{seconds:d} seconds pass"))
def seconds_pass(board: Board, seconds: int) -> None:
    board.clock.advance(seconds)


@given(parsers.parse("the post timeout is {seconds:d} seconds"))
def the_post_timeout_is(board: Board, seconds: int) -> None:
    """BLACKBOARD_POST_TIMEOUT: off unless set (work waits for its worker); seed 003's rule with 30."""
    board.settings = dataclasses.replace(board.settings, post_timeout=timedelta(seconds=seconds))
    board.rewire()


# ------------------------------------------------------------- live workers
@given(parsers.parse('a worker of "{name}" beats'), target_fixture="live_worker")
def a_worker_beats(board: Board, name: str) -> WorkerPresence:
    profile = board.registry.get(name)
    assert profile is not None, f"no agent {name} registered"
    now = board.clock.now()
    resolved = profile.model_copy(update={"threshold": profile.threshold_or(0.8)})
    me = WorkerPresence(f"{name}/bdd", resolved, "bdd-host", 4242, now, now, timedelta(seconds=2))
    board.presence.beat(me)
    return me


@given("the worker beats again")
def beats_again(board: Board, live_worker: WorkerPresence) -> None:
    board.presence.beat(dataclasses.replace(live_worker, last_beat=board.clock.now()))


@given("the worker stops")
def worker_stops(board: Board, live_worker: WorkerPresence) -> None:
    board.presence.stopped(live_worker.worker_id, board.clock.now())


@when("the overdue signals are expired", target_fixture="ended")
def expire_overdue(board: Board) -> list[AgentSignal]:
    return board.service.expire_signals(ExpireSignals())


# ----------------------------------------------------------------- watching
@given(parsers.parse('the watcher has caught up on "{signal_type}" completions'), target_fixture="position")
def caught_up(board: Board, signal_type: str) -> int:
    return board.queries.watch(WatchSignals(signal_types=(SignalType(signal_type),))).position


@when(
    parsers.parse('the watcher asks for "{signal_type}" completions since its position'),
    target_fixture="watched",
)
def watch_since(board: Board, position: int, signal_type: str) -> WatchResult:
    return board.queries.watch(WatchSignals(signal_types=(SignalType(signal_type),), since=position))


@when(
    parsers.parse('the watcher asks for "{signal_type}" completions again from the position it was given'),
    target_fixture="watched_again",
)
def watch_again(board: Board, watched: WatchResult, signal_type: str) -> WatchResult:
    return board.queries.watch(WatchSignals(signal_types=(SignalType(signal_type),), since=watched.position))


# ------------------------------------------------------------------ outcomes
@then(parsers.re(r"the (?P<action>claim|completion|failure|post) succeeds"))
def it_succeeds(outcome: object, action: str) -> None:
    _succeeded(outcome)


@then(parsers.re(r"the (?P<action>claim|completion|failure|post) is refused with (?P<error>\w+)"))
def it_is_refused(outcome: object, action: str, error: str) -> None:
    expected = getattr(blackboard.domain.errors, error)
    assert isinstance(outcome, expected), f"expected the {action} to be refused with {error}, got {outcome!r}"


@then(parsers.parse('the refusal says "{text}"'))
def refusal_says(outcome: object, text: str) -> None:
    assert isinstance(outcome, BlackboardError), f"not refused: {outcome!r}"
    assert text in str(outcome), f"{text!r} not in {str(outcome)!r}"


@then(parsers.parse('the refusal names the "{signal_type}" signal as the one it waits for'))
def refusal_names_upstream(board: Board, outcome: object, signal_type: str) -> None:
    upstream = _of_type(board, signal_type).signal_id
    assert isinstance(outcome, blackboard.domain.errors.DependenciesPending), f"got {outcome!r}"
    assert outcome.pending == (upstream,)
    assert f"waits for {upstream}" in str(outcome)


# ------------------------------------------------------------- signal state
@then(parsers.parse("the signal is {status:w}"))
def the_signal_is(board: Board, signal: AgentSignal, status: str) -> None:
    assert _read(board, signal.signal_id).status is SignalStatus(status)


@then(parsers.parse('the "{signal_type}" signal is {status:w}'))
def the_typed_signal_is(board: Board, signal_type: str, status: str) -> None:
    assert _of_type(board, signal_type).status is SignalStatus(status)


@then(parsers.parse('the signal is CLAIMED by "{name}"'))
def claimed_by(board: Board, signal: AgentSignal, name: str) -> None:
    current = _read(board, signal.signal_id)
    assert (current.status, current.claimed_by) == (SignalStatus.CLAIMED, name)


@then(parsers.parse('the "{signal_type}" signal is CLAIMED by "{name}"'))
def typed_claimed_by(board: Board, signal_type: str, name: str) -> None:
    current = _of_type(board, signal_type)
    assert (current.status, current.claimed_by) == (SignalStatus.CLAIMED, name)


@then(parsers.parse('the signal\'s artifact is "{artifact}"'))
def artifact_is(board: Board, signal: AgentSignal, artifact: str) -> None:
    result = _read(board, signal.signal_id).result
    assert result is not None and result.artifact_path == artifact


@then(parsers.parse('the signal\'s reason is "{reason}"'))
def reason_is(board: Board, signal: AgentSignal, reason: str) -> None:
    result = _read(board, signal.signal_id).result
    assert result is not None and result.error == reason, f"reason was {result and result.error!r}"


@then(parsers.parse('the signal\'s reason begins "{reason}"'))
def reason_begins(board: Board, signal: AgentSignal, reason: str) -> None:
    result = _read(board, signal.signal_id).result
    assert result is not None and (result.error or "").startswith(reason), (
        f"reason was {result and result.error!r}"
    )


@then(
    parsers.parse(
        'the "{signal_type}" signal expired because the "{upstream}" signal ended {status:w} with "{error}"'
    )
)
def expired_because_upstream(board: Board, signal_type: str, upstream: str, status: str, error: str) -> None:
    dependant, upstream_id = _of_type(board, signal_type), _of_type(board, upstream).signal_id
    assert dependant.status is SignalStatus.EXPIRED
    assert dependant.result is not None
    assert dependant.result.error == f"upstream {upstream_id} ended {status}: {error}"


@then(parsers.parse("the recorded events are {event_types}"))
def recorded_events(board: Board, event_types: str) -> None:
    assert board.event_types() == [t.strip() for t in event_types.split(",")]


@then("no signal was expired")
def nothing_expired(ended: list[AgentSignal]) -> None:
    assert ended == []


# ------------------------------------------------------------ notifications
@then(parsers.parse('"{name}" is notified of the signal'))
def is_notified(notifications: list, signal: AgentSignal, name: str) -> None:
    assert [s.signal_id for who, s in notifications if who == name] == [signal.signal_id]


@then(parsers.parse('"{name}" is not notified'))
def is_not_notified(notifications: list, name: str) -> None:
    assert [s.signal_id for who, s in notifications if who == name] == []


@then("the watcher is notified of the signal")
def watcher_notified(notifications: list, signal: AgentSignal) -> None:
    is_notified(notifications, signal, "the watcher")


@then("the watcher is not notified")
def watcher_not_notified(notifications: list) -> None:
    is_not_notified(notifications, "the watcher")


@then(parsers.parse('the watcher can read the result "{artifact}"'))
def watcher_reads_result(notifications: list, artifact: str) -> None:
    (told,) = [s for who, s in notifications if who == "the watcher"]
    assert told.status is SignalStatus.COMPLETED
    assert told.result is not None and told.result.artifact_path == artifact


@then(parsers.parse('the watch returns the signal, COMPLETED with artifact "{artifact}"'))
def watch_returns_signal(watched: WatchResult, signal: AgentSignal, artifact: str) -> None:
    assert [s.signal_id for s in watched.signals] == [signal.signal_id]
    (found,) = watched.signals
    assert found.status is SignalStatus.COMPLETED
    assert found.result is not None and found.result.artifact_path == artifact


@then("the watch returns nothing")
def watch_returns_nothing(watched: WatchResult, position: int) -> None:
    assert watched.signals == []
    assert watched.position > position  # it still moved past the completion it skipped


@then("the second watch returns nothing new")
def second_watch_empty(watched: WatchResult, watched_again: WatchResult) -> None:
    assert watched_again.signals == []
    assert watched_again.position == watched.position


# ------------------------------------------------------------------ fitting
@then(parsers.parse("its score is {score:f}, above its threshold of {threshold:f}"))
def score_above(fit, score: float, threshold: float) -> None:
    assert (fit.score, fit.threshold) == (score, threshold)
    assert fit.passes


# ------------------------------------------------------------------ reposts
@then("the same signal comes back")
def same_signal(signal: AgentSignal, repost: AgentSignal) -> None:
    assert repost.signal_id == signal.signal_id


@then("a different signal comes back")
def different_signal(signal: AgentSignal, repost: AgentSignal) -> None:
    assert repost.signal_id != signal.signal_id
