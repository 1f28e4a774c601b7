"""The checks a read remembers (a plain read's request, a store key's escape) refuse again each time, and
answer each call as the unremembered check would."""

from __future__ import annotations

import pytest

from blackboard import Blackboard, InvalidInput, NotFound
from blackboard.infrastructure.langgraph.store import escape


def test_a_refused_read_is_refused_every_time_and_a_good_one_reads_what_is_there_now(sqlite_url):
    with Blackboard(sqlite_url) as bb:
        for _ in range(2):
            with pytest.raises(InvalidInput) as refused:
                bb.read("no spaces allowed here", blackboard_id="b")
            assert refused.value.field == "key"
            with pytest.raises(InvalidInput):
                bb.read("k", blackboard_id="b", at=-1)
        with pytest.raises(NotFound):
            bb.read("k", blackboard_id="b")
        bb.write("k", 1, blackboard_id="b", author="alice")
        assert bb.read("k", blackboard_id="b").value == 1  # the same request, remembered: a fresh answer
        bb.write("k", 2, blackboard_id="b", author="alice", replaces=1)
        assert bb.read("k", blackboard_id="b").value == 2


def test_an_escape_refused_is_refused_every_time():
    for _ in range(2):
        with pytest.raises(InvalidInput) as refused:
            escape("\ud800", "namespace")
        assert refused.value.field == "namespace"
    assert escape("a b") == escape("a b") == "a:20b"
