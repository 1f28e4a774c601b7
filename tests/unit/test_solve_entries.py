"""The run's entries as a step's signal carries them (application/solve/entries.py): the problem and what the
run's steps left, newest first, never more than the budget of JSON, the entry that no longer fits cut and
marked, the others counted as left out."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from blackboard.application.solve.entries import BUDGET, SMALLEST_CUT, run_entries
from blackboard.domain.knowledge.entries import Entry, Version
from blackboard.domain.solve.run import SolveRun, Step

AT = datetime(2026, 1, 5, tzinfo=UTC)
RUN = SolveRun(
    "solve-0000000a",
    "bb-1",
    steps=(Step(1, signal_id="sig-00000001"), Step(2, error="refused"), Step(3, signal_id="sig-00000003")),
)


def entry(key: str, value: object, position: int, signal_id: str | None = None) -> Entry:
    version = Version("bb-1", key, 1, value, "finder", AT, position, "finding", signal_id=signal_id)
    return Entry("bb-1", key, 1, version)


def size(shown: list[dict]) -> int:
    return len(json.dumps(shown, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))


def test_the_problem_and_what_the_runs_steps_wrote_newest_first_and_nothing_else():
    board = [
        entry("solve/solve-0000000a/problem", "the problem", 1),
        entry("sig-00000001/knowledge/1", "found one", 5, "sig-00000001"),
        entry("notes/by-hand", "a person's note", 6),  # not the run's
        entry("solve/solve-0000000b/problem", "another run's problem", 7),
        entry("research/own-key", {"written": "under its signal"}, 9, "sig-00000003"),
        entry("sig-00000002/knowledge/1", "another signal's", 10, "sig-00000002"),
    ]

    shown, left_out = run_entries(RUN, board)

    assert [e["key"] for e in shown] == [
        "research/own-key",
        "sig-00000001/knowledge/1",
        "solve/solve-0000000a/problem",
    ]
    assert shown[0] == {
        "key": "research/own-key",
        "entry_type": "finding",
        "author": "finder",
        "signal_id": "sig-00000003",
        "value": {"written": "under its signal"},
    }
    assert left_out == 0


@pytest.mark.parametrize(
    "text",
    ["x" * 3000, "é" * 3000, "\n\u0001" * 1500, "日本" * 1500],
    ids=["ascii", "accented", "escaped", "cjk"],
)
def test_never_more_than_the_budget_the_entry_that_no_longer_fits_cut_and_marked(text):
    board = [entry(f"sig-00000001/knowledge/{n}", f"{n} {text}", n, "sig-00000001") for n in range(1, 40)]

    shown, left_out = run_entries(RUN, board)

    assert size(shown) <= BUDGET
    whole, [cut] = shown[:-1], shown[-1:]
    assert [e["key"] for e in whole] == [
        f"sig-00000001/knowledge/{n}" for n in range(39, 39 - len(whole), -1)
    ]
    assert all("cut" not in e for e in whole)
    assert cut["value"] == board[38 - len(whole)].current.value[: len(cut["value"])]
    assert cut["cut"] == len(board[38 - len(whole)].current.value) - len(cut["value"]) > 0
    assert left_out == 39 - len(shown)
    assert size(shown) > BUDGET - SMALLEST_CUT - 200  # the budget is used, not left mostly empty


def test_a_value_that_is_no_text_is_cut_as_its_json_and_too_little_room_leaves_an_entry_out():
    big = {"rows": list(range(10_000))}
    shown, left_out = run_entries(RUN, [entry("sig-00000001/knowledge/1", big, 1, "sig-00000001")])
    [cut] = shown
    assert json.dumps(big).startswith(cut["value"]) and size(shown) <= BUDGET and left_out == 0

    board = [
        entry("sig-00000001/knowledge/1", "a" * 100, 1, "sig-00000001"),
        entry("sig-00000001/knowledge/2", "b" * 300, 2, "sig-00000001"),
    ]
    shown, left_out = run_entries(RUN, board, budget=400)
    assert [e["key"] for e in shown] == ["sig-00000001/knowledge/2"] and left_out == 1
