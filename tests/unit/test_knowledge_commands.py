"""The knowledge commands refuse bad values at the boundary, naming the field and the rule."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from blackboard.application.knowledge.commands import ResolveEntry, WriteEntry
from blackboard.domain.knowledge.entries import MAX_VALUE_BYTES


def test_a_value_of_more_than_1_mib_of_json_is_refused():
    with pytest.raises(ValidationError, match="at most 1048576 bytes"):
        WriteEntry(blackboard_id="bb", key="k", author="a", value=["é" * (MAX_VALUE_BYTES // 2)])


def test_a_value_of_exactly_1_mib_of_json_is_accepted():
    assert WriteEntry(blackboard_id="bb", key="k", author="a", value="x" * (MAX_VALUE_BYTES - 2)).value


def test_resolve_needs_exactly_one_of_a_pick_and_a_value_and_null_is_a_value():
    with pytest.raises(ValidationError, match="exactly one"):
        ResolveEntry(blackboard_id="bb", key="k", author="a", rationale="r")
    with pytest.raises(ValidationError, match="exactly one"):
        ResolveEntry(blackboard_id="bb", key="k", author="a", rationale="r", pick=1, value=2)
    assert ResolveEntry(blackboard_id="bb", key="k", author="a", rationale="r", value=None).pick is None
