"""The edge's own rules, without a process: JSON typed on the command line, terminal-safe text, artifact paths."""

from __future__ import annotations

import re

import pytest

from blackboard.domain.errors import InvalidInput
from blackboard.infrastructure.agents.outcome import MAX_OUTPUT_DEPTH, artifact_refusal, from_stdout, nesting
from blackboard.infrastructure.cli import terminal_safe
from blackboard.infrastructure.cli.json_input import MAX_DEPTH, parse_json


@pytest.mark.parametrize(
    ("raw", "rule"),
    [
        ('{"a": 1e400}', "numbers must be finite"),
        ('{"a": -1e400}', "numbers must be finite"),
        ('{"a": NaN}', "NaN is not JSON"),
        (f'{{"a": {2**63}}}', "integers must fit in 64 bits"),
        (f'{{"a": {-(2**63) - 1}}}', "integers must fit in 64 bits"),
        ("[" * 100_000 + "]" * 100_000, f"must nest at most {MAX_DEPTH} levels"),
        ("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), f"must nest at most {MAX_DEPTH} levels"),
        ('{"\\udc80": 1}', "lone surrogate"),
        ('["\\u0000"]', "U+0000"),
        ("{", "must be JSON"),
    ],
)
def test_json_that_cannot_be_stored_exactly_is_refused_naming_the_option(raw, rule):
    with pytest.raises(InvalidInput, match=re.escape(rule)) as refused:
        parse_json(raw, "--context")

    assert refused.value.field == "--context"


def test_json_at_the_limits_is_taken_as_it_is():
    deepest = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    assert parse_json(f'{{"big": {2**63 - 1}, "small": {-(2**63)}, "f": 1e308, "s": "é🧪"}}', "--value") == {
        "big": 2**63 - 1,
        "small": -(2**63),
        "f": 1e308,
        "s": "é🧪",
    }
    assert parse_json(deepest, "--value") is not None


def test_terminal_text_escapes_control_sequences_and_keeps_lines():
    assert terminal_safe("a\x1b[31mb\x07\rc\x9b\u202ed\ne\tf") == "a\\x1b[31mb\\x07\\x0dc\\x9b\\u202ed\ne\tf"


@pytest.mark.parametrize(
    ("path", "allowed"),
    [
        ("out/a.md", True),
        ("artifacts/a.md", True),
        ("a.md", True),
        ("/etc/passwd", False),
        ("../a.md", False),
        ("out/../../a.md", False),
    ],
)
def test_an_artifact_path_is_allowed_only_inside_the_agents_folder(tmp_path, path, allowed):
    folder = tmp_path / "agents"
    folder.mkdir()

    assert (artifact_refusal(path, folder, "artifacts") is None) is allowed


def test_an_artifacts_folder_set_elsewhere_is_allowed_too(tmp_path):
    folder, elsewhere = tmp_path / "agents", tmp_path / "out"
    folder.mkdir()

    assert artifact_refusal(str(elsewhere / "r.md"), folder, str(elsewhere)) is None
    assert "leads outside" in artifact_refusal(str(elsewhere / "r.md"), folder, "artifacts")


def test_commands_from_any_interface_refuse_json_that_cannot_be_stored():
    from blackboard.application.commands import PostSignal
    from blackboard.application.knowledge.commands import WriteEntry

    with pytest.raises(InvalidInput, match=r"^context: numbers must be finite, got inf at /a$"):
        PostSignal(
            signal_type="RESEARCH", ps_id="ps-1", entry_id="e-1", topic="t", context={"a": float("inf")}
        )
    deep: list = []
    for _ in range(5000):  # deeper than json.dumps can recurse: refused before the size is measured
        deep = [deep]
    with pytest.raises(InvalidInput, match=f"^value: must nest at most {MAX_DEPTH} levels"):
        WriteEntry(blackboard_id="b", key="k", value=deep, author="a")
    with pytest.raises(InvalidInput, match="^meta: .*lone surrogate"):
        WriteEntry(blackboard_id="b", key="k", value=1, author="a", meta={"m": "\udc80"})


@pytest.mark.parametrize(
    ("text", "levels"),
    [
        ('{"knowledge_items": ["a"]}', 2),
        ('["[[[", "\\"[[", {"k]": [1]}]', 3),  # brackets in strings, escaped quotes, are text
        ('["a\\\\", [[[1]]]]', 4),  # an escaped backslash ends no string
        ("[" * 100_000 + "]" * 100_000, 100_000),
        ("plain text", 0),
    ],
)
def test_nesting_counts_the_levels_json_would_have_without_parsing(text, levels):
    assert nesting(text) == levels


def test_output_at_the_nesting_bound_is_read_and_past_it_fails_saying_so():
    at = "[" * (MAX_OUTPUT_DEPTH - 1) + "]" * (MAX_OUTPUT_DEPTH - 1)
    assert from_stdout(f'{{"knowledge_items": ["x"], "extra": {at}}}').knowledge_items == ("x",)
    past = from_stdout(f'{{"knowledge_items": ["x"], "extra": [{at}]}}')
    assert not past.succeeded and past.error.startswith(
        f"handler output: nested deeper than {MAX_OUTPUT_DEPTH}"
    )
