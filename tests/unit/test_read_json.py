"""The board's JSON reader (msgspec, the standard library's reader for what msgspec refuses) reads every text
`json.dumps` writes as the standard library reads it."""

from __future__ import annotations

import json
import math

from hypothesis import given
from hypothesis import strategies as st

from blackboard.infrastructure.persistence.codec import read_json

VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=12,
)


@given(VALUES, st.booleans())
def test_what_json_dumps_writes_is_read_as_the_standard_library_reads_it(value, ascii_only):
    written = json.dumps(value, ensure_ascii=ascii_only, separators=(",", ":"))

    read = read_json(written)

    # NaN is not equal to itself: compared as their texts
    assert json.dumps(read) == json.dumps(json.loads(written))


def test_what_msgspec_refuses_is_read_by_the_standard_library():
    assert math.isnan(read_json('{"a":NaN}')["a"])
    assert read_json("[Infinity,-Infinity,1e400]") == [math.inf, -math.inf, math.inf]
    assert read_json('"\\ud800"') == "\ud800"  # a lone surrogate
    assert read_json("123456789012345678901234567890") == 123456789012345678901234567890
