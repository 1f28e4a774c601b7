"""Bad input to the knowledge commands: exit 2, the option and its rule named, nothing written."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import Cli


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (("write", "bad key!", "--text", "v"), "KEY"),
        (("write", "k" * 201, "--text", "v"), "KEY"),
        (("write", "k", "--value", "{not json"), "--value"),
        (("write", "k", "--value", "NaN"), "--value"),
        (("write", "k", "--text", "v", "--confidence", "1.5"), "--confidence"),
        (("write", "k", "--text", "v", "--confidence", "-0.1"), "--confidence"),
        (("write", "k", "--text", "v", "--type", "rumour"), "--type"),
        (("write", "k", "--text", "v", "--topic", "no spaces"), "--topic"),
        (("write", "k", "--text", "v", "--depends-on", "a b"), "--depends-on"),
        (("write", "k", "--text", "v", "--meta", "[1]"), "--meta"),
        (("write", "k", "--text", "v", "--replaces", "-1"), "--replaces"),
        (("write", "k", "--text", "v", "--author", "a\tb"), "--author"),
        (("write", "k", "--file", "/nonexistent/file"), "--file"),
        (("read", "k", "--at", "-1"), "--at"),
        (("entries", "--at", "-3"), "--at"),
        (("entries", "--limit", "0"), "--limit"),
        (("entries", "--type", "rumour"), "--type"),
        (("resolve", "k", "--pick", "0", "--rationale", "r"), "--pick"),
        (("resolve", "k", "--value", "{", "--rationale", "r"), "--value"),
    ],
)
def test_a_bad_option_exits_2_naming_it_and_writes_nothing(cli: Cli, args, named):
    author = () if "--author" in args or args[0] in ("read", "entries") else ("--author", "ps-a")
    result = cli(*args, "--blackboard", "bb-1", *author)

    assert result.expect(2) and named in result.stderr
    assert cli.ok("events") == []


def test_a_value_over_1_mib_is_refused_and_one_of_exactly_1_mib_is_written(cli: Cli, tmp_path):
    """Through --file: an argument of a megabyte is more than a process may be given."""
    (tmp_path / "big.txt").write_text("x" * (1024 * 1024 + 1), encoding="utf-8")
    (tmp_path / "fits.txt").write_text(
        "x" * (1024 * 1024 - 2), encoding="utf-8"
    )  # with its quotes: 1 MiB of JSON
    too_big = cli("write", "k", "--blackboard", "bb-1", "--author", "a", "--file", str(tmp_path / "big.txt"))
    fits = cli(
        "--json", "write", "k", "--blackboard", "bb-1", "--author", "a", "--file", str(tmp_path / "fits.txt")
    )

    assert too_big.expect(2) and "--file" in too_big.stderr and "1 MiB" in too_big.stderr
    assert len(fits.expect(0).json()["value"]) == 1024 * 1024 - 2


def test_a_board_id_with_a_control_character_is_refused(cli: Cli):
    result = cli("write", "k", "--blackboard", "bb\x1f1", "--author", "a", "--text", "v")

    assert result.expect(2) and "--blackboard" in result.stderr and "control characters" in result.stderr


def test_write_needs_exactly_one_of_value_text_and_file(cli: Cli):
    assert cli("write", "k", "--blackboard", "bb-1", "--author", "a").expect(2)
    assert cli("write", "k", "--blackboard", "bb-1", "--author", "a", "--text", "v", "--value", "1").expect(2)
