"""A worker's look at the claimable signals, on both databases: the candidates with the position the rows
were folded up to (read in the same statement) and the boards whose budget is reached (left out), and
the rows of signals named by id (what a notification leaves out: a signal's text)."""

from __future__ import annotations

from blackboard.application.commands import GetOpenSignals, PostSignal, SetBudget
from tests.integration.conftest import SqlBoard

RESEARCH = GetOpenSignals(capabilities=("RESEARCH",), limit=8, catch_up=False)


def post(board: SqlBoard, n: int, ps_id: str = "ps-1", **more) -> str:
    return board.service.post_signal(
        PostSignal(signal_type="RESEARCH", ps_id=ps_id, entry_id=f"e-{n}", topic=f"t{n}", **more)
    ).signal_id


def test_a_look_says_how_far_its_rows_were_folded_and_which_boards_are_over_budget(sql_engine):
    board = SqlBoard(sql_engine)
    first = post(board, 1)
    post(board, 2, ps_id="ps-spent")
    board.service.set_budget(SetBudget(board="ps-spent", usd=0))

    look = board.queries.look(RESEARCH)

    assert [c.signal_id for c in look.candidates] == [first]
    assert look.folded == board.store.last_position() and look.stopped == {"ps-spent"}


def test_a_look_at_rows_behind_the_log_says_so_even_when_it_finds_nothing(sql_engine):
    board = SqlBoard(sql_engine)
    post(board, 1)
    board.read_model.reset()  # a rebuild under way

    look = board.queries.look(RESEARCH)

    assert look.candidates == () and look.folded == 0 < board.store.last_position()


def test_the_rows_named_by_id_carry_the_text_of_a_signal_targeting_auto(sql_engine):
    board = SqlBoard(sql_engine)
    plain = post(board, 1)
    scored = post(board, 2, target_capabilities=("auto", "RESEARCH"), prompt="find the sources")

    found = {c.signal_id: c for c in board.queries.candidates_named([plain, scored, "sig-absent"])}

    assert set(found) == {plain, scored}
    assert found[plain].text == "" and found[scored].text == "t2\nfind the sources"
