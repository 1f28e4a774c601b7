"""The codec's rows match the statements that bind them."""

from __future__ import annotations

from datetime import timedelta

from blackboard.domain.blackboard import BlackboardAggregate
from blackboard.domain.signals import SignalResult
from blackboard.infrastructure.persistence import projection
from blackboard.infrastructure.persistence.codec import changing_row, signal_row
from tests.contract.stories import RESEARCHER, post
from tests.fakes import T0

COLUMNS = ("signal_id", *projection.CHANGING)


def signals():
    """A completed signal (result, times, token), one claimed and renewed, and one waiting for it."""
    board = BlackboardAggregate("bb-1")
    post(board, 1)
    post(board, 2)
    post(board, 3, after=("sig-00000002",))
    board.claim_signal("sig-00000001", RESEARCHER, T0, token="tok-1")
    board.complete_signal(
        "sig-00000001", "ps-researcher", SignalResult(artifact_path="r.md"), T0, token="tok-1"
    )
    board.claim_signal("sig-00000002", RESEARCHER, T0, token="tok-2")
    board.renew_claim("sig-00000002", "ps-researcher", T0 + timedelta(seconds=5), token="tok-2")
    return list(board.signals.values())


def test_changing_row_binds_exactly_the_names_the_update_statement_expects():
    for signal in signals():
        row = changing_row(signal)

        assert set(row) == {"b_signal_id", *("b_" + column for column in projection.CHANGING)}


def test_changing_row_holds_the_values_the_full_row_has_for_those_columns():
    for signal in signals():
        full, changing = signal_row(signal), changing_row(signal)

        assert {column: changing[f"b_{column}"] for column in COLUMNS} == {
            column: full[column] for column in COLUMNS
        }
