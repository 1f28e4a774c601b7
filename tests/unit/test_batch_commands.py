"""A worker's batches: ClaimSignals and RecordOutcomes, each stored in one append, over in-memory adapters."""

from __future__ import annotations

import uuid

import pytest

from blackboard.application.bounds import MAX_NAME
from blackboard.application.commands import (
    CancelSignal,
    ClaimSignal,
    ClaimSignals,
    CompleteSignal,
    ExpireSignals,
    FailSignal,
    GetSignalById,
    PostSignal,
    RecordOutcomes,
)
from blackboard.domain.admission import admit
from blackboard.domain.blackboard import BlackboardAggregate
from blackboard.domain.errors import (
    AgentNotFound,
    AlreadyClaimed,
    DependenciesPending,
    InvalidTransition,
    StaleClaim,
)
from blackboard.domain.signals import AgentSignal, SignalStatus, SignalUsage
from tests.fakes import Board, agent

RESEARCHER = agent("ps-researcher", RESEARCH=0.9)
ANALYST = agent("ps-analyst", RESEARCH=0.85, REVIEW=0.9)


def token_of(signal_id: str) -> str:
    """The token the batch claims each signal with: one of its own (the worker draws a secret for each)."""
    return f"token-of-{signal_id}"


def research(n: int, **overrides) -> PostSignal:
    fields = dict(signal_type="RESEARCH", ps_id="ps-1", entry_id=f"e-{n}", topic=f"topic {n}")
    return PostSignal(**{**fields, **overrides})


def posted(board: Board, count: int) -> list[str]:
    return [board.service.post_signal(research(n)).signal_id for n in range(1, count + 1)]


def claim_batch(board: Board, signal_ids, limit: int, agent_id: str = "ps-researcher"):
    return board.service.claim_signals(
        ClaimSignals(
            blackboard_id="ps-1",
            signal_ids=tuple(signal_ids),
            agent_id=agent_id,
            tokens={signal_id: token_of(signal_id) for signal_id in signal_ids},
            limit=limit,
        )
    )


OWN = "its claim's own token"


def complete(signal_id: str, token: str | None = OWN, **result) -> CompleteSignal:
    token = token_of(signal_id) if token == OWN else token
    return CompleteSignal(signal_id=signal_id, agent_id="ps-researcher", token=token, **result)


def fail(signal_id: str, error: str, token: str | None = OWN) -> FailSignal:
    token = token_of(signal_id) if token == OWN else token
    return FailSignal(signal_id=signal_id, agent_id="ps-researcher", token=token, error=error)


def record(board: Board, *outcomes):
    return board.service.record_outcomes(
        RecordOutcomes(blackboard_id="ps-1", agent_id="ps-researcher", outcomes=outcomes)
    )


def count_appends(board: Board) -> list[int]:
    """Wrap the store's append: each call's number of events, in order."""
    calls: list[int] = []
    original = board.store.append

    def append(blackboard_id, expected_version, events, metadata=None):
        calls.append(len(events))
        return original(blackboard_id, expected_version, events, metadata)

    board.store.append = append
    return calls


def status(board: Board, signal_id: str) -> SignalStatus:
    return board.queries.get_signal(GetSignalById(signal_id=signal_id)).status


def new_records(board: Board, since: int):
    return [r for r in board.store.read_all() if r.position > since]


# -- ClaimSignals ------------------------------------------------------------------------------------------
def test_a_batch_claim_takes_the_signals_in_the_given_order_up_to_the_limit():
    board = Board(RESEARCHER)
    s1, s2, s3, s4 = posted(board, 4)

    claims = claim_batch(board, [s3, s1, s4, s2], limit=2)

    assert [c.signal_id for c in claims.claimed] == [s3, s1]
    assert claims.skipped == {}
    assert all(c.claimed_by == "ps-researcher" for c in claims.claimed)
    assert [c.claim_token for c in claims.claimed] == [token_of(s3), token_of(s1)]  # each claim its own
    assert [status(board, s) for s in (s1, s2, s3, s4)] == [
        SignalStatus.CLAIMED,
        SignalStatus.POSTED,
        SignalStatus.CLAIMED,
        SignalStatus.POSTED,
    ]


def test_a_signal_taken_meanwhile_is_skipped_naming_its_claimer_and_the_next_one_is_claimed():
    board = Board(RESEARCHER, ANALYST)
    s1, s2, s3, s4 = posted(board, 4)
    waiting = board.service.post_signal(research(5, after=(s4,))).signal_id
    board.service.claim_signal(
        ClaimSignal(signal_id=s1, agent_id="ps-analyst")
    )  # between the worker's look and its claim

    claims = claim_batch(board, [s1, waiting, s2, s3, s4], limit=2)

    assert [c.signal_id for c in claims.claimed] == [s2, s3]
    assert list(claims.skipped) == [s1, waiting]
    assert isinstance(claims.skipped[s1], AlreadyClaimed) and claims.skipped[s1].claimed_by == "ps-analyst"
    assert isinstance(claims.skipped[waiting], DependenciesPending)
    assert status(board, s4) is SignalStatus.POSTED  # past the limit: left for another worker
    assert board.queries.get_signal(GetSignalById(signal_id=s1)).claimed_by == "ps-analyst"


def test_a_batch_claim_stores_all_its_claims_in_one_append_as_one_command():
    board = Board(RESEARCHER, ANALYST)
    s1, s2, s3 = posted(board, 3)
    board.service.claim_signal(ClaimSignal(signal_id=s2, agent_id="ps-analyst"))
    before = board.store.last_position()
    appends = count_appends(board)

    claim_batch(board, [s1, s2, s3], limit=3)

    stored = new_records(board, before)
    assert appends == [2]
    assert [r.event.event_type for r in stored] == ["AgentSignalClaimed", "AgentSignalClaimed"]
    assert [r.event.signal_id for r in stored] == [s1, s3]
    assert [r.event.version for r in stored] == [stored[0].event.version, stored[0].event.version + 1]
    assert len({r.metadata["causation_id"] for r in stored}) == 1
    assert {r.metadata["command"] for r in stored} == {"ClaimSignals"}
    assert {r.metadata["actor"] for r in stored} == {"ps-researcher"}


def test_a_batch_claim_with_nothing_claimable_stores_nothing():
    board = Board(RESEARCHER, ANALYST)
    s1, s2 = posted(board, 2)
    for signal_id in (s1, s2):
        board.service.claim_signal(ClaimSignal(signal_id=signal_id, agent_id="ps-analyst"))
    before = board.store.last_position()
    appends = count_appends(board)

    claims = claim_batch(board, [s1, s2], limit=2)

    assert claims.claimed == [] and set(claims.skipped) == {s1, s2}
    assert appends == [] and board.store.last_position() == before


def test_a_batch_claim_by_an_unknown_agent_is_not_found_and_stores_nothing():
    board = Board(RESEARCHER)
    (s1,) = posted(board, 1)
    before = board.store.last_position()

    with pytest.raises(AgentNotFound):
        claim_batch(board, [s1], limit=1, agent_id="ps-ghost")
    assert board.store.last_position() == before


# -- RecordOutcomes ----------------------------------------------------------------------------------------
def test_completions_and_failures_of_one_batch_are_stored_in_one_append():
    board = Board(RESEARCHER)
    s1, s2, s3 = posted(board, 3)
    claim_batch(board, [s1, s2, s3], limit=3)
    before = board.store.last_position()
    appends = count_appends(board)

    results = record(
        board,
        complete(s1, artifact_path="out/1.md"),
        fail(s2, "no sources"),
        complete(s3, knowledge_items=("found",)),
    )

    assert [r.status for r in results] == [
        SignalStatus.COMPLETED,
        SignalStatus.FAILED,
        SignalStatus.COMPLETED,
    ]
    assert results[0].result.artifact_path == "out/1.md" and results[2].result.knowledge_items == ("found",)
    assert results[1].result.error == "no sources"
    stored = new_records(board, before)
    assert appends == [3]
    assert [r.event.event_type for r in stored] == [
        "AgentSignalCompleted",
        "AgentSignalFailed",
        "AgentSignalCompleted",
    ]
    assert len({r.metadata["causation_id"] for r in stored}) == 1
    assert {r.metadata["command"] for r in stored} == {"RecordOutcomes"}
    assert [status(board, s) for s in (s1, s2, s3)] == [
        SignalStatus.COMPLETED,
        SignalStatus.FAILED,
        SignalStatus.COMPLETED,
    ]


def test_a_refused_outcome_is_returned_as_its_error_and_does_not_stop_the_others():
    board = Board(RESEARCHER)
    s1, s2, s3, unclaimed = posted(board, 4)
    claim_batch(board, [s1, s2, s3], limit=3)
    before = board.store.last_position()

    results = record(
        board,
        complete(s1, token="someone-elses-token"),
        fail(unclaimed, "gave up"),
        complete(s2, artifact_path="out/2.md"),
        fail(s3, "timeout"),
    )

    assert isinstance(results[0], StaleClaim) and results[0].signal_id == s1
    assert isinstance(results[1], InvalidTransition) and results[1].signal_id == unclaimed
    assert isinstance(results[2], AgentSignal) and results[2].status is SignalStatus.COMPLETED
    assert isinstance(results[3], AgentSignal) and results[3].status is SignalStatus.FAILED
    assert [r.event.signal_id for r in new_records(board, before)] == [s2, s3]
    assert status(board, s1) is SignalStatus.CLAIMED and status(board, unclaimed) is SignalStatus.POSTED


def test_a_batch_whose_every_outcome_is_refused_stores_nothing():
    board = Board(RESEARCHER)
    (s1,) = posted(board, 1)
    claim_batch(board, [s1], limit=1)
    before = board.store.last_position()

    results = record(board, complete(s1, token="stale"), fail(s1, "x", token=None))

    assert [type(r) for r in results] == [StaleClaim, StaleClaim]
    assert board.store.last_position() == before


def test_an_upstream_completed_in_a_batch_releases_its_dependant_and_one_failed_expires_its_own():
    board = Board(RESEARCHER, ANALYST)
    up1, up2, up3 = posted(board, 3)
    both = board.service.post_signal(research(4, signal_type="REVIEW", after=(up1, up2))).signal_id
    doomed = board.service.post_signal(research(5, signal_type="REVIEW", after=(up3,))).signal_id
    claim_batch(board, [up1, up2, up3], limit=3)
    assert board.queries.get_signal(GetSignalById(signal_id=both)).waiting_for == {up1, up2}

    record(board, complete(up1), complete(up2), fail(up3, "no sources"))

    released = board.queries.get_signal(GetSignalById(signal_id=both))
    assert released.status is SignalStatus.POSTED and released.waiting_for == frozenset()
    assert status(board, doomed) is SignalStatus.EXPIRED
    claimed = board.service.claim_signal(ClaimSignal(signal_id=both, agent_id="ps-analyst"))
    assert claimed.status is SignalStatus.CLAIMED


def test_a_batch_of_outcomes_is_one_agent_s_and_naming_another_is_refused_before_anything_runs():
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="every outcome must be ps-researcher's, not ps-analyst's"):
        RecordOutcomes(
            blackboard_id="ps-1",
            agent_id="ps-researcher",
            outcomes=(
                CompleteSignal(signal_id="sig-0000000a", agent_id="ps-researcher"),
                FailSignal(signal_id="sig-0000000b", agent_id="ps-analyst", error="not mine to fail"),
            ),
        )


def test_a_batch_claim_takes_a_token_of_its_own_for_each_signal_and_refuses_one_shared_or_astray():
    board = Board(RESEARCHER)
    s1, s2 = posted(board, 2)
    common = dict(blackboard_id="ps-1", signal_ids=(s1, s2), agent_id="ps-researcher", limit=2)

    with pytest.raises(ValueError, match="tokens must differ: every claim has a token of its own"):
        ClaimSignals(**common, tokens={s1: "same", s2: "same"})
    with pytest.raises(ValueError, match="tokens names signals not claimed here: sig-0000beef"):
        ClaimSignals(**common, tokens={s1: "a", "sig-0000beef": "b"})
    claim_batch(board, [s1, s2], limit=2)

    mine = record(board, complete(s2, token=token_of(s1)))  # the sibling claim's token: not this claim's
    assert isinstance(mine[0], StaleClaim)
    assert status(board, s2) is SignalStatus.CLAIMED


def test_a_worker_id_holds_the_longest_agent_name_the_rules_allow():
    """A worker's id is its agent's name, "/" and a UUID: before, an agent name of 164 characters or more
    (names may have 200) made the worker's first batch claim invalid, and the worker exit 2."""
    longest = "a" * MAX_NAME
    claim = ClaimSignals(
        blackboard_id="b",
        signal_ids=("sig-00000001",),
        agent_id=longest,
        worker_id=f"{longest}/{uuid.uuid4()}",
    )

    assert claim.worker_id is not None and claim.worker_id.startswith(longest)


# -- a run whose claim ended by another hand: its spend is charged all the same ---------------------------------
SPENT = SignalUsage(runner="anthropic", input_tokens=5000, output_tokens=50, cost_usd=0.0105)


def test_a_lapsed_claim_s_refused_outcome_charges_what_its_run_spent():
    board = Board(RESEARCHER)
    (s1,) = posted(board, 1)
    claim_batch(board, [s1], limit=1)
    board.clock.advance(board.settings.claim_timeout.total_seconds() + 60)  # no renewal: the claim lapsed
    before = board.store.last_position()

    [refused] = record(board, fail(s1, "stopped: its claim lapsed").model_copy(update={"usage": SPENT}))

    assert not isinstance(refused, AgentSignal)  # the outcome itself is refused: the signal expired
    kinds = [r.event.event_type for r in new_records(board, before)]
    assert kinds == ["AgentSignalExpired", "AgentSignalRunCharged"]  # before: the spend was lost
    shown = board.queries.get_signal(GetSignalById(signal_id=s1))
    assert shown.status is SignalStatus.EXPIRED and shown.usage.input_tokens == 5000


def test_an_outcome_refused_to_a_run_that_never_held_the_claim_or_still_holds_it_charges_nothing():
    board = Board(RESEARCHER)
    s1, unclaimed = posted(board, 2)
    claim_batch(board, [s1], limit=1)
    before = board.store.last_position()

    results = record(
        board,
        complete(s1, token="someone-elses-token").model_copy(update={"usage": SPENT}),
        fail(unclaimed, "gave up").model_copy(update={"usage": SPENT}),
    )

    assert all(not isinstance(r, AgentSignal) for r in results)
    assert new_records(board, before) == []


def charged(board: Board, since: int) -> list:
    return [r.event for r in new_records(board, since) if r.event.event_type == "AgentSignalRunCharged"]


def retried_after_a_lapse(board: Board) -> str:
    """A signal of two attempts whose first claim, ps-researcher's, lapsed: POSTED again, claimable now."""
    s1 = board.service.post_signal(research(1, max_attempts=2)).signal_id
    claim_batch(board, [s1], limit=1)
    board.clock.advance(board.settings.claim_timeout.total_seconds() + 60)  # no renewal: the claim lapsed
    board.service.expire_signals(ExpireSignals())
    again = board.queries.get_signal(GetSignalById(signal_id=s1))
    assert (again.status, again.attempt) == (SignalStatus.POSTED, 2)
    board.clock.advance(3600)  # past its backoff
    return s1


def test_a_cancelled_run_s_outcome_sent_again_after_a_lost_acknowledgement_is_charged_once():
    board = Board(RESEARCHER)
    (s1,) = posted(board, 1)
    claim_batch(board, [s1], limit=1)
    board.service.cancel_signal(CancelSignal(signal_id=s1, cancelled_by="alice", reason="not needed"))
    before = board.store.last_position()
    outcome = complete(s1).model_copy(update={"usage": SPENT, "attempt": 1})

    record(board, outcome)  # stored, but (say) its acknowledgement was lost in an outage:
    record(board, outcome)  # the recorder sends it again

    [once] = charged(board, before)  # before: charged twice
    assert once.attempt == 1
    shown = board.queries.get_signal(GetSignalById(signal_id=s1))
    assert shown.usage.input_tokens == 5000 and shown.charged_attempts == (1,)


def test_a_run_refused_on_a_completed_signal_is_not_charged_for_an_attempt_that_never_lapsed():
    board = Board(RESEARCHER)
    s1 = retried_after_a_lapse(board)
    claim_batch(board, [s1], limit=1)  # attempt 2, its own token
    done = complete(s1).model_copy(update={"usage": SPENT, "attempt": 2})
    assert isinstance(record(board, done)[0], AgentSignal)
    before = board.store.last_position()

    [refused] = record(board, done)  # sent again (its acknowledgement lost): refused, COMPLETED

    assert not isinstance(refused, AgentSignal)
    assert charged(board, before) == []  # before: charged, as attempt 1 had lapsed once


def test_a_lapsed_attempt_s_run_is_charged_once_for_that_attempt_while_a_later_claim_runs():
    board = Board(RESEARCHER)
    s1 = retried_after_a_lapse(board)
    board.service.claim_signals(  # attempt 2, a new token
        ClaimSignals(blackboard_id="ps-1", signal_ids=(s1,), agent_id="ps-researcher", tokens={s1: "t2"})
    )
    before = board.store.last_position()
    late = complete(s1).model_copy(update={"usage": SPENT, "attempt": 1})  # attempt 1's run, its token

    record(board, late)
    record(board, late)

    [once] = charged(board, before)  # before: charged twice
    assert once.attempt == 1
    shown = board.queries.get_signal(GetSignalById(signal_id=s1))
    assert (shown.status, shown.claimed_by, shown.charged_attempts) == (
        SignalStatus.CLAIMED,
        "ps-researcher",
        (1,),
    )
    # the same events pass the admission of an import (before: refused, the later claim's token standing in)
    imported = BlackboardAggregate("ps-1")
    for event in [r.event for r in board.store.read_all() if r.event.blackboard_id == "ps-1"]:
        admit(imported, event)
    assert imported.signal(s1).charged_attempts == (1,)


def test_the_recorder_s_retry_after_a_lost_acknowledgement_does_not_charge_a_cancelled_run_again():
    """The worker's recorder: its first RecordOutcomes is stored (the outcome refused, the run charged) and
    the database goes away before the commit is acknowledged; the retry is refused again and charges nothing."""
    import threading

    from blackboard.application.ports import StoreUnavailable
    from blackboard.infrastructure.worker.recorder import Done, Recorder

    board = Board(RESEARCHER)
    (s1,) = posted(board, 1)
    [claim] = claim_batch(board, [s1], limit=1).claimed
    board.service.cancel_signal(CancelSignal(signal_id=s1, cancelled_by="alice", reason="not needed"))
    before = board.store.last_position()
    service = board.service

    class LosesTheFirstAcknowledgement:
        calls = 0

        def record_outcomes(self, command: RecordOutcomes):
            self.calls += 1
            if self.calls == 1:
                service.record_outcomes(command)  # stored ...
                raise StoreUnavailable("server closed the connection unexpectedly")  # ... unacknowledged
            return service.record_outcomes(command)

        def __getattr__(self, name: str):
            return getattr(service, name)

    flaky = LosesTheFirstAcknowledgement()
    recorder = Recorder(flaky, "ps-researcher", threading.Event(), lambda batch: None)  # type: ignore[arg-type]
    recorder.start()
    outcome = complete(s1).model_copy(update={"usage": SPENT, "attempt": claim.attempt})
    recorder.hand_over(Done(claimed=claim, command=outcome, took=0.1))
    recorder.close()

    assert flaky.calls == 2
    assert len(charged(board, before)) == 1  # before: 2, the same run charged twice
    assert board.queries.get_signal(GetSignalById(signal_id=s1)).usage.input_tokens == 5000


def test_a_worker_s_claim_tokens_differ_and_never_read_as_an_option():
    """Before: url-safe base64, which starts with '-' one time in 64; `complete --token -x...` then failed
    with argparse's "expected one argument" (seen in CI)."""
    from blackboard.infrastructure.worker.loop import new_token

    tokens = [new_token() for _ in range(2000)]

    assert len(set(tokens)) == len(tokens)
    assert not [t for t in tokens if t.startswith("-")] and all(len(t) == 48 for t in tokens)
