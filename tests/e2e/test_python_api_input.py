"""The Python API holds the rules the CLI holds (issue 27 item 2): a timeout that is no finite number of
seconds (nan and inf would never end, a string is no number), a position or a count past 64 bits, a
position that is not a number, and a value nested past the 32-level rule are each refused with
InvalidInput naming the argument and the rule, on SQLite and on PostgreSQL, and nothing is written."""

from __future__ import annotations

import math
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from blackboard import Blackboard, InvalidInput
from tests.e2e.conftest import database_url


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def api(request, agents_dir, tmp_path_factory) -> Iterator[Blackboard]:
    with Blackboard(database_url(request, tmp_path_factory, "api-input"), agents_dir=agents_dir) as made:
        yield made


def nested(levels: int, inner: Any = 1, make: Callable[[Any], Any] = lambda v: [v]) -> Any:
    value = inner
    for _ in range(levels):
        value = make(value)
    return value


BIG = 2**70
DEEP = nested(3000)

CASES: dict[str, tuple[Callable[[Blackboard, str, str], Any], str, str]] = {
    "wait(timeout=nan)": (lambda a, b, s: a.wait(s, timeout=math.nan), "timeout", "finite number"),
    "wait(timeout=inf)": (lambda a, b, s: a.wait(s, timeout=math.inf), "timeout", "finite number"),
    "wait(timeout='x')": (lambda a, b, s: a.wait(s, timeout="x"), "timeout", "valid number"),
    "wait(timeout=-1)": (lambda a, b, s: a.wait(s, timeout=-1), "timeout", "greater than or equal to 0"),
    "poll_topic(timeout=nan)": (
        lambda a, b, s: a.poll_topic("t", blackboard_id=b, timeout=math.nan),
        "timeout",
        "finite number",
    ),
    "watch(since=2**70)": (
        lambda a, b, s: a.watch(["RESEARCH"], since=BIG, timeout=0),
        "since",
        "less than or equal to",
    ),
    "watch_topic(since='x')": (  # numeric text ("1") is a number on every interface, as on the CLI
        lambda a, b, s: a.watch_topic("t", blackboard_id=b, since="x", timeout=0),
        "since",
        "valid integer",
    ),
    "events(since=None)": (lambda a, b, s: a.events(since=None), "since", "integer"),
    "events(since=2**70)": (lambda a, b, s: a.events(since=BIG), "since", "less than or equal to"),
    "events(limit=2**64)": (lambda a, b, s: a.events(limit=2**64), "limit", "less than or equal to"),
    "signals(limit=2**64)": (lambda a, b, s: a.signals(limit=2**64), "limit", "less than or equal to"),
    "signals(at=2**70)": (lambda a, b, s: a.signals(at=BIG), "at", "less than or equal to"),
    "show(at=2**70)": (lambda a, b, s: a.show(s, at=BIG), "at", "less than or equal to"),
    "read(at=2**70)": (lambda a, b, s: a.read("k", blackboard_id=b, at=BIG), "at", "less than or equal to"),
    "entries(limit=2**64)": (
        lambda a, b, s: a.entries(blackboard_id=b, limit=2**64),
        "limit",
        "less than or equal to",
    ),
    "write(replaces=2**70)": (
        lambda a, b, s: a.write("k", blackboard_id=b, author="ana", value=1, replaces=BIG),
        "replaces",
        "less than or equal to",
    ),
    "write(value=3000 deep)": (
        lambda a, b, s: a.write("k", blackboard_id=b, author="ana", value=DEEP),
        "value",
        "at most 32 levels",
    ),
    "write(value=3000 deep tuples)": (
        lambda a, b, s: a.write("k", blackboard_id=b, author="ana", value=nested(3000, make=lambda v: (v,))),
        "value",
        "at most 32 levels",
    ),
    "write(meta=3000 deep)": (
        lambda a, b, s: a.write("k", blackboard_id=b, author="ana", value=1, meta={"m": DEEP}),
        "meta",
        "at most 32 levels",
    ),
    "post(context=3000 deep)": (
        lambda a, b, s: a.post("RESEARCH", ps_id=b, entry_id="e-2", topic="t", context={"c": DEEP}),
        "context",
        "at most 32 levels",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_argument_is_invalid_input_naming_it_and_nothing_is_written(api: Blackboard, case: str):
    board = f"ps-{uuid.uuid4().hex[:8]}"
    signal_id = api.post("RESEARCH", ps_id=board, entry_id="e-1", topic="t").signal_id
    before = api.position()
    call, field, rule = CASES[case]

    with pytest.raises(InvalidInput) as refused:
        call(api, board, signal_id)

    assert refused.value.field == field, (case, str(refused.value))
    assert rule in str(refused.value), (case, str(refused.value))
    assert api.position() == before  # nothing written
