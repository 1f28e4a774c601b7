"""The parts of a runner that read what the other side sends: lines read within a bound, a transcript within
its own, and figures read defensively (tests/runners/test_claude_code_output.py drives them through a worker)."""

from __future__ import annotations

import io
import json

import pytest

from blackboard.infrastructure.runners import transcript as transcripts
from blackboard.infrastructure.runners.lines import lines
from blackboard.infrastructure.runners.reported import MAX_COUNT, Reading
from blackboard.infrastructure.runners.transcript import Transcript


def test_a_line_over_the_bound_keeps_its_start_and_counts_its_size_and_the_next_line_is_whole():
    stream = io.BytesIO(b"short\n" + b"a" * 25 + b"\n" + b"b" * 10 + b"\n" + b"no end")

    read = list(lines(stream, limit=10))

    assert [(line.text, line.size, line.cut) for line in read] == [
        ("short", 5, False),
        ("a" * 10, 25, True),
        ("b" * 10, 10, False),  # exactly the bound: whole
        ("no end", 6, False),
    ]
    assert read[1].kept() == "a" * 10 + " [... cut: the line was 25 bytes]"


def test_bytes_that_are_not_utf8_are_replaced_not_raised():
    (line,) = lines(io.BytesIO(b"caf\xe9\n"))

    assert line.text == "caf\ufffd"


def test_a_transcript_past_its_bound_keeps_only_how_the_run_ended_and_says_so_once(tmp_path, monkeypatch):
    monkeypatch.setattr(transcripts, "MAX_BYTES", 100)
    kept = Transcript(str(tmp_path / "t.jsonl"))

    for n in range(20):
        kept.line(json.dumps({"n": n}))
    kept.record("result", succeeded=True)
    kept.close()

    records = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert [r.get("n") for r in records if "n" in r] == list(range(11))
    assert [r["type"] for r in records if "type" in r] == ["warning", "result"]
    assert records[-2]["warning"] == "the transcript reached 100 bytes: later lines of the run are not kept"


@pytest.mark.parametrize(
    "value, counted",
    [(7, 7), (7.0, 7), (0, 0), (MAX_COUNT, MAX_COUNT), (None, 0)]
    + [(v, 0) for v in (7.5, -1, True, "7", [7], {"n": 7}, MAX_COUNT + 1, 10**400, float("nan"))],
)
def test_a_count_is_a_whole_number_from_0_to_max_count_and_anything_else_counts_0_with_a_warning(
    value, counted
):
    said: list[str] = []

    assert Reading("the answer", said.append).count(value, "usage.input_tokens") == counted
    assert bool(said) == (counted == 0 and value not in (0, None))
