"""Reservations (docs/control.md, "Limits"): a claim reserves what its run may spend against its board's
budget, the run's end settles it with what it recorded, an unpriced model waits under a USD budget, and a
lapsed claim counts no more, through the service on the in-memory adapters, SQLite and PostgreSQL alike."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

import pytest

from blackboard.application.commands import (
    CancelSignal,
    ClaimSignal,
    ClaimSignals,
    CompleteSignal,
    FailSignal,
    PostSignal,
    RenewClaim,
    SetBudget,
)
from blackboard.application.projection import Projector
from blackboard.application.service import Settings
from blackboard.domain.capabilities import AgentCapability, AgentProfile
from blackboard.domain.limits import BudgetReserved, ConcurrencyLimit, ConcurrencyLimitReached, UnpricedModel
from blackboard.domain.reservations import Reservation, Spending
from blackboard.domain.signals import SignalStatus, SignalUsage
from blackboard.infrastructure.memory.agents import FixedAgentRegistry
from tests.fakes import Board
from tests.integration.conftest import SqlBoard


def spender(name: str, spending: Spending | None, key: str | None = None) -> AgentProfile:
    return AgentProfile(
        agent_id=name,
        capabilities=(AgentCapability(type="RESEARCH", score=0.9),),
        spending=spending,
        concurrency=ConcurrencyLimit(key=key, max=1) if key else None,
    )


AGENTS = (
    spender("ps-est", Spending(estimate_tokens=100_000)),
    spender("ps-usd", Spending(max_usd=2.0)),
    spender("ps-open", Spending()),  # a runner's run with no estimate nor bound
    spender("ps-handler", None),  # a command handler: records no usage, reserves nothing
    spender("ps-local", Spending(estimate_tokens=10, unpriced_model="my-local-model")),
    spender("ps-keyed", Spending(estimate_tokens=10), key="api"),
)
ENGINES = {"sqlite": "sqlite_engine", "postgresql": "pg_engine"}
# a signal waiting for room does not expire meanwhile (no live worker is registered in these tests)
SETTINGS = Settings(claim_threshold=0.8, post_timeout=timedelta(days=1), claim_timeout=timedelta(seconds=300))


def _board(request, kind: str) -> Board:
    if kind == "memory":
        made = Board(*AGENTS, settings=SETTINGS)
    else:
        made = SqlBoard(request.getfixturevalue(ENGINES[kind]), SETTINGS)
    made.registry = FixedAgentRegistry(AGENTS)
    made.rewire()
    return made


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def board(request) -> Board:
    return _board(request, request.param)


def post(board: Board, n: int = 1, ps: str = "ps-1", **fields) -> list[str]:
    return [
        board.service.post_signal(
            PostSignal(signal_type="RESEARCH", ps_id=ps, entry_id=f"e-{i}", topic=f"t {i}", **fields)
        ).signal_id
        for i in range(n)
    ]


def claim(board: Board, signal_id: str, agent: str, ps: str = "ps-1"):
    return board.service.claim_signal(ClaimSignal(signal_id=signal_id, agent_id=agent, blackboard_id=ps))


def complete(board: Board, signal_id: str, agent: str, tokens: int = 0, usd: float | None = None) -> None:
    usage = SignalUsage(runner="anthropic", input_tokens=tokens, cost_usd=usd)
    board.service.complete_signal(
        CompleteSignal(signal_id=signal_id, agent_id=agent, blackboard_id="ps-1", usage=usage)
    )


def test_claims_reserve_their_estimate_and_one_that_does_not_fit_waits_saying_why(board):
    board.service.set_budget(SetBudget(board="ps-1", tokens=250_000, set_by="alice"))
    one, two, three = post(board, 3)

    assert claim(board, one, "ps-est").reserved == Reservation(tokens=100_000)
    claim(board, two, "ps-est")
    with pytest.raises(BudgetReserved) as refused:
        claim(board, three, "ps-est")

    assert str(refused.value) == (
        f"{three} waits for budget: 200,000 of 250,000 tokens spent or reserved on ps-1, this run reserves "
        "100,000 tokens (agent ps-est's estimate); it is claimed once runs end and leave room, or raise the "
        "budget with blackboard budget ps-1"
    )
    assert board.read_model.get(three).status is SignalStatus.POSTED  # it waits, nothing was written


@pytest.mark.parametrize("ending", ["complete", "fail", "cancel"])
def test_the_end_of_a_run_settles_its_reservation_with_what_it_recorded(board, ending):
    board.service.set_budget(SetBudget(board="ps-1", tokens=250_000, set_by="alice"))
    one, two, three = post(board, 3)
    claim(board, one, "ps-est")
    claim(board, two, "ps-est")

    usage = SignalUsage(runner="anthropic", input_tokens=30_000)
    if ending == "complete":
        board.service.complete_signal(
            CompleteSignal(signal_id=one, agent_id="ps-est", blackboard_id="ps-1", usage=usage)
        )
    elif ending == "fail":
        board.service.fail_signal(
            FailSignal(signal_id=one, agent_id="ps-est", error="x", blackboard_id="ps-1", usage=usage)
        )
    else:
        board.service.cancel_signal(CancelSignal(signal_id=one, reason="not needed", blackboard_id="ps-1"))

    # 30,000 spent (nothing, cancelled) and 100,000 still reserved: room for one more
    assert claim(board, three, "ps-est").status is SignalStatus.CLAIMED


def test_a_batch_claims_only_what_fits_in_the_budget_and_says_why_it_skipped_the_rest(board):
    board.service.set_budget(SetBudget(board="ps-1", tokens=250_000, set_by="alice"))
    ids = post(board, 4)

    claims = board.service.claim_signals(
        ClaimSignals(blackboard_id="ps-1", signal_ids=tuple(ids), agent_id="ps-est", limit=4)
    )

    assert [s.signal_id for s in claims.claimed] == ids[:2]
    assert {type(e) for e in claims.skipped.values()} == {BudgetReserved}


def test_a_run_without_an_estimate_reserves_its_bound_and_without_one_what_is_left(board):
    board.service.set_budget(SetBudget(board="ps-1", usd=5.0, set_by="alice"))
    bounded, small, rest, after = post(board, 4)
    (capped,) = post(board, budget_usd=0.5)

    assert claim(board, bounded, "ps-usd").reserved == Reservation(usd=2.0)  # its max_budget_usd
    assert claim(board, capped, "ps-usd").reserved == Reservation(usd=0.5)  # the signal's, smaller
    assert claim(board, rest, "ps-open").reserved == Reservation(usd=2.5)  # all that is left: it runs alone
    with pytest.raises(BudgetReserved, match=r"\$5 of \$5 spent or reserved on ps-1, and agent ps-open has"):
        claim(board, after, "ps-open")
    with pytest.raises(BudgetReserved, match=r"this run reserves \$2 \(agent ps-usd's max_budget_usd\)"):
        claim(board, small, "ps-usd")
    assert claim(board, small, "ps-handler").reserved is None  # a handler records no usage: not held


def test_an_unpriced_model_waits_on_a_board_with_a_usd_budget_only(board):
    (one,) = post(board)
    (other,) = post(board, ps="ps-2")
    board.service.set_budget(SetBudget(board="ps-1", usd=5.0, set_by="alice"))
    board.service.set_budget(SetBudget(board="ps-2", tokens=1000, set_by="alice"))

    with pytest.raises(UnpricedModel) as refused:
        claim(board, one, "ps-local")

    assert "agent ps-local's runner has no price for its model my-local-model" in str(refused.value)
    assert "BLACKBOARD_PRICES='{\"my-local-model\": [3, 15]}'" in str(refused.value)
    assert claim(board, other, "ps-local", "ps-2").status is SignalStatus.CLAIMED  # tokens it can count


def test_a_lapsed_claim_frees_its_key_and_its_reservation_for_the_next_decision_without_a_sweep(board):
    board.service.set_budget(SetBudget(board="ps-1", tokens=150_000, set_by="alice"))
    one, two = post(board, 2)
    (three,) = post(board, ps="ps-2")
    claim(board, one, "ps-est")
    claim(board, three, "ps-keyed", "ps-2")
    with pytest.raises(BudgetReserved):
        claim(board, two, "ps-est")
    with pytest.raises(ConcurrencyLimitReached):
        claim(board, post(board, ps="ps-2")[0], "ps-keyed", "ps-2")

    board.clock.advance(board.settings.claim_timeout.total_seconds())  # no renewal: both claims lapse

    assert claim(board, two, "ps-est").status is SignalStatus.CLAIMED
    assert claim(board, post(board, ps="ps-2")[0], "ps-keyed", "ps-2").status is SignalStatus.CLAIMED
    assert (
        board.read_model.get(one).status is SignalStatus.CLAIMED
    )  # nothing swept it: it just counts no more


def test_a_renewed_claim_keeps_its_reservation(board):
    board.service.set_budget(SetBudget(board="ps-1", tokens=150_000, set_by="alice"))
    one, two = post(board, 2)
    claim(board, one, "ps-est")
    board.clock.advance(board.settings.claim_timeout.total_seconds() - 10)
    board.service.renew_claim(RenewClaim(signal_id=one, agent_id="ps-est", blackboard_id="ps-1"))
    board.clock.advance(20)  # past the claim's first lease, within its renewed one

    with pytest.raises(BudgetReserved):
        claim(board, two, "ps-est")


@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_a_rebuild_keeps_the_reservations_of_open_claims(request, kind):
    board = _board(request, kind)
    board.service.set_budget(SetBudget(board="ps-1", tokens=150_000, set_by="alice"))
    one, two = post(board, 2)
    claim(board, one, "ps-est")

    Projector(board.store, board.read_model).rebuild()

    assert board.read_model.get(one).reserved == Reservation(tokens=100_000)
    with pytest.raises(BudgetReserved):
        claim(board, two, "ps-est")


def test_claims_racing_on_one_board_never_reserve_past_its_budget_on_postgresql(request):
    """PostgreSQL commits claims of one board side by side: each that reserved checks again under the log's
    lock, its own rows written, and one that lost the room is decided again (and then waits)."""
    board = _board(request, "postgresql")
    rounds, room = 6, 3
    for n in range(rounds):
        ps = f"ps-race-{n}"
        board.service.set_budget(SetBudget(board=ps, tokens=room * 100_000, set_by="alice"))
        ids = post(board, 8, ps=ps)
        services = [board.fresh_service() for _ in range(4)]
        start = threading.Barrier(len(services))

        def race(service, ids=ids, ps=ps, start=start) -> int:
            start.wait()
            taken = 0
            for signal_id in ids:
                claims = service.claim_signals(
                    ClaimSignals(blackboard_id=ps, signal_ids=(signal_id,), agent_id="ps-est", limit=1)
                )
                taken += len(claims.claimed)
            return taken

        with ThreadPoolExecutor(len(services)) as pool:
            taken = sum(pool.map(race, services))

        assert taken == room, f"round {n}: {taken} claims reserved 100,000 tokens each on a budget of {room}"


def test_a_claim_reserves_only_in_the_limits_its_board_has(board):
    (free,) = post(board)
    (tokens_only,) = post(board, ps="ps-2")
    board.service.set_budget(SetBudget(board="ps-2", tokens=250_000, set_by="alice"))

    # before: Reservation(tokens=100_000) on a board with no budget, and the USD bound beside a token limit
    assert claim(board, free, "ps-est").reserved is None
    assert board.read_model.get(free).reserved is None
    assert claim(board, tokens_only, "ps-usd", "ps-2").reserved == Reservation(tokens=250_000)
