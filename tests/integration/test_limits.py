"""Limits (docs/control.md): concurrency keys across agents and boards, board budgets against runners' usage,
through the service on the in-memory adapters, SQLite and PostgreSQL alike."""

from __future__ import annotations

import math

import pytest
from sqlalchemy import event, select

from blackboard.application.commands import (
    CancelSignal,
    ClaimSignal,
    ClaimSignals,
    CompleteSignal,
    FailSignal,
    PostSignal,
    SetBudget,
)
from blackboard.application.projection import Projector
from blackboard.domain.capabilities import AgentCapability, AgentProfile
from blackboard.domain.errors import InvalidInput
from blackboard.domain.limits import BudgetReached, ConcurrencyLimit, ConcurrencyLimitReached
from blackboard.domain.signals import SignalStatus, SignalUsage
from blackboard.infrastructure.memory.agents import FixedAgentRegistry
from blackboard.infrastructure.persistence.tables import BOARD_BUDGETS
from tests.fakes import Board
from tests.integration.conftest import SqlBoard


def limited(name: str, key: str | None = None, most: int = 1) -> AgentProfile:
    return AgentProfile(
        agent_id=name,
        capabilities=(AgentCapability(type="RESEARCH", score=0.9),),
        concurrency=ConcurrencyLimit(key=key, max=most) if key else None,
    )


AGENTS = (limited("ps-a", "model-api"), limited("ps-b", "model-api"), limited("ps-wide", "wide", 2))
AGENTS += (limited("ps-free"),)


ENGINES = {"sqlite": "sqlite_engine", "postgresql": "pg_engine"}


def _board(request, kind: str) -> Board:
    made = Board(*AGENTS) if kind == "memory" else SqlBoard(request.getfixturevalue(ENGINES[kind]))
    made.registry = FixedAgentRegistry(AGENTS)
    made.rewire()
    return made


@pytest.fixture(params=["memory", "sqlite", "postgresql"])
def board(request) -> Board:
    return _board(request, request.param)


@pytest.fixture(params=["sqlite", "postgresql"])
def sql_limited(request) -> SqlBoard:
    made = _board(request, request.param)
    assert isinstance(made, SqlBoard)
    return made


def post(board: Board, ps: str, n: int = 1) -> list[str]:
    return [
        board.service.post_signal(
            PostSignal(signal_type="RESEARCH", ps_id=ps, entry_id=f"e-{i}", topic=f"t {i}")
        ).signal_id
        for i in range(n)
    ]


def claim(board: Board, signal_id: str, agent: str, ps: str):
    return board.service.claim_signal(ClaimSignal(signal_id=signal_id, agent_id=agent, blackboard_id=ps))


def test_a_key_of_max_1_holds_one_claim_across_agents_and_boards_until_it_ends(board):
    (one,), (two,) = post(board, "ps-1"), post(board, "ps-2")

    first = claim(board, one, "ps-a", "ps-1")
    with pytest.raises(ConcurrencyLimitReached, match="concurrency key model-api"):
        claim(board, two, "ps-b", "ps-2")  # another agent, another board, the same key
    claim(board, post(board, "ps-2")[0], "ps-free", "ps-2")  # an agent under no key is not held back

    assert first.concurrency_key == "model-api"
    assert board.read_model.get(two).status is SignalStatus.POSTED  # it waits, nothing was written
    board.service.complete_signal(CompleteSignal(signal_id=one, agent_id="ps-a", blackboard_id="ps-1"))
    assert claim(board, two, "ps-b", "ps-2").status is SignalStatus.CLAIMED


@pytest.mark.parametrize("ending", ["fail", "cancel"])
def test_a_claim_that_fails_or_is_cancelled_frees_its_key(board, ending):
    one, two = post(board, "ps-1", 2)
    claim(board, one, "ps-a", "ps-1")
    if ending == "fail":
        board.service.fail_signal(FailSignal(signal_id=one, agent_id="ps-a", error="x", blackboard_id="ps-1"))
    else:
        board.service.cancel_signal(CancelSignal(signal_id=one, reason="not needed", blackboard_id="ps-1"))

    assert claim(board, two, "ps-b", "ps-1").status is SignalStatus.CLAIMED


def test_a_batch_claims_only_the_room_its_key_has_left_and_says_why_it_skipped_the_rest(board):
    ids = post(board, "ps-1", 4)

    claims = board.service.claim_signals(
        ClaimSignals(blackboard_id="ps-1", signal_ids=tuple(ids), agent_id="ps-wide", limit=4)
    )

    assert [s.signal_id for s in claims.claimed] == ids[:2]
    assert {type(e) for e in claims.skipped.values()} == {ConcurrencyLimitReached}
    assert set(claims.skipped) == set(ids[2:])


def spend(board: Board, ps: str, agent: str, usd: float, tokens: int = 0) -> None:
    (signal_id,) = post(board, ps)
    claim(board, signal_id, agent, ps)
    usage = SignalUsage(runner="anthropic", input_tokens=tokens, cost_usd=usd)
    board.service.complete_signal(
        CompleteSignal(signal_id=signal_id, agent_id=agent, blackboard_id=ps, usage=usage)
    )


def test_a_board_over_its_budget_takes_no_claim_until_the_budget_is_raised(board):
    board.service.set_budget(SetBudget(board="ps-1", usd=1.0, set_by="alice", reason="a day"))
    spend(board, "ps-1", "ps-free", 0.6)
    spend(board, "ps-1", "ps-free", 0.5)  # claimed while 0.6 < 1.0; now 1.1 is spent
    (waiting,) = post(board, "ps-1")

    with pytest.raises(BudgetReached, match="budget reached: 1.1000 of 1 USD"):
        claim(board, waiting, "ps-free", "ps-1")
    claim(board, post(board, "ps-2")[0], "ps-free", "ps-2")  # another board is not held back

    board.service.set_budget(SetBudget(board="ps-1", usd=2.0, set_by="alice", reason="more"))
    assert claim(board, waiting, "ps-free", "ps-1").status is SignalStatus.CLAIMED
    budget_events = [r for r in board.store.read_all() if r.event.event_type == "BoardBudgetSet"]
    assert [(r.event.usd, r.event.set_by, r.event.reason) for r in budget_events] == [
        (1.0, "alice", "a day"),
        (2.0, "alice", "more"),
    ]
    assert budget_events[0].metadata["actor"] == "alice"


def test_a_token_budget_counts_input_and_output_tokens_and_keeps_the_usd_limit(board):
    board.service.set_budget(SetBudget(board="ps-1", usd=5.0, set_by="alice"))
    spend(board, "ps-1", "ps-free", 0.1, tokens=900)

    budget = board.service.set_budget(SetBudget(board="ps-1", tokens=900, set_by="alice"))

    assert (budget.usd, budget.tokens) == (5.0, 900)
    with pytest.raises(BudgetReached, match="900 of 900 tokens"):
        claim(board, post(board, "ps-1")[0], "ps-free", "ps-1")


@pytest.mark.parametrize(
    ("values", "field", "rule"),
    [
        ({"usd": 0.5}, "usd", "must not be below what the board has already spent"),
        ({"tokens": 10}, "tokens", "must not be below what the board has already spent"),
        ({"usd": -1.0}, "usd", "0 or more"),
        ({"usd": math.nan}, "usd", "finite"),
        ({"usd": math.inf}, "usd", "finite"),
        ({"tokens": -3}, "tokens", "0 or more"),
        ({}, "usd", "give --usd or --tokens"),
    ],
)
def test_a_budget_below_what_was_spent_or_not_a_number_is_refused_and_nothing_written(
    board, values, field, rule
):
    spend(board, "ps-1", "ps-free", 0.75, tokens=100)
    before = len(board.store.read_all())

    with pytest.raises(InvalidInput, match=rule) as refused:
        board.service.set_budget(SetBudget(board="ps-1", set_by="alice", **values))

    assert refused.value.field == field
    assert len(board.store.read_all()) == before


def test_a_rebuilt_read_model_keeps_the_budget_and_the_keys_of_live_claims(sql_limited):
    board = sql_limited
    board.service.set_budget(SetBudget(board="ps-1", usd=3.0, set_by="alice"))
    (one,) = post(board, "ps-1")
    claim(board, one, "ps-a", "ps-1")

    Projector(board.store, board.read_model).rebuild()

    with board.engine.connect() as conn:
        assert conn.execute(select(BOARD_BUDGETS.c.blackboard_id, BOARD_BUDGETS.c.usd)).all() == [
            ("ps-1", 3.0)
        ]
    assert board.read_model.get(one).concurrency_key == "model-api"
    with pytest.raises(ConcurrencyLimitReached):
        claim(board, post(board, "ps-2")[0], "ps-b", "ps-2")


def test_a_board_over_its_budget_is_left_out_of_workers_candidates_so_it_crowds_out_no_other(board):
    from blackboard.application.commands import GetOpenSignals

    board.service.set_budget(SetBudget(board="ps-1", usd=0.5, set_by="alice"))
    spend(board, "ps-1", "ps-free", 0.5)
    stopped = post(board, "ps-1", 10)  # older than the other board's, and more than a worker reads
    (other,) = post(board, "ps-2")
    read = GetOpenSignals(capabilities=("RESEARCH",), limit=8, catch_up=False)

    assert [c.signal_id for c in board.queries.open_candidates(read)] == [other]

    board.service.set_budget(SetBudget(board="ps-1", usd=1.0, set_by="alice"))
    assert [c.signal_id for c in board.queries.open_candidates(read)] == stopped[:8]


def test_a_claim_without_a_key_reads_its_budget_in_the_log_s_statement(sql_limited):
    """One round trip fewer a worker's batch claim: an agent without a concurrency key needs only the board's
    budget, which is read with the log's state (the board's version, the log's end, the checkpoint); one with
    a key holds it first and then reads its count and the budget, as before; a claim of one signal, which
    may wait on that signal's row lock, reads the budget after it. Refused over budget either way."""
    board = sql_limited
    engine = board.on_engine.engine()
    board.service.set_budget(SetBudget(board="ps-1", usd=1.0, set_by="alice", reason="a day"))
    free, keyed = post(board, "ps-1", 2)
    statements: list[str] = []

    def seen(conn, cursor, statement, parameters, context, executemany):
        statements.append(" ".join(statement.split()).lower())

    def budget_reads() -> list[str]:
        return [s for s in statements if s.startswith("select") and "board_budgets" in s]

    event.listen(engine, "before_cursor_execute", seen)
    try:
        claimed = board.service.claim_signals(
            ClaimSignals(blackboard_id="ps-1", signal_ids=(free,), agent_id="ps-free", limit=1)
        )
        assert [s.signal_id for s in claimed.claimed] == [free]
        (read,) = budget_reads()
        assert "events" in read and "projection_checkpoints" in read  # the state's statement
        statements.clear()
        claim(board, keyed, "ps-a", "ps-1")
        assert len(budget_reads()) == 1 and "events" not in budget_reads()[0]  # after the key's hold
        statements.clear()
        (single,) = post(board, "ps-1")
        statements.clear()
        claim(board, single, "ps-free", "ps-1")
        # one signal's claim may wait on its row's lock: the budget is read after it, not before
        assert len(budget_reads()) == 1 and "events" not in budget_reads()[0]
    finally:
        event.remove(engine, "before_cursor_execute", seen)
    spend(board, "ps-1", "ps-free", 1.5)
    (waiting,) = post(board, "ps-1")
    with pytest.raises(BudgetReached):
        claim(board, waiting, "ps-free", "ps-1")
