"""The parser `main` builds (each command's grammar built once it is chosen, cli/lazy_parser.py) is the
whole parser's twin: the same help for the CLI and every command, the same parse of every command's
example, the same usage errors."""

from __future__ import annotations

import argparse
import contextlib
import io
import shlex

import pytest

from blackboard.infrastructure.cli.parser import build_parser


def _paths(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command's words (`("db", "upgrade")`), from the whole parser."""
    found = [path]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _paths(sub, (*path, name))
    return found


PATHS = _paths(build_parser())


def _parser_at(parser: argparse.ArgumentParser, path: tuple[str, ...]) -> argparse.ArgumentParser:
    for word in path:
        (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        parser = action.choices[word]
    return parser


def _outcome(argv: list[str]) -> tuple[object, str, str]:
    """What `main`'s parser and the whole one do with argv: the namespace or the exit, and what they print."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            result: object = vars(build_parser(lazy=True).parse_args(argv))
        except SystemExit as exited:
            result = ("exit", exited.code)
    return result, out.getvalue(), err.getvalue()


def _whole(argv: list[str]) -> tuple[object, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            result: object = vars(build_parser().parse_args(argv))
        except SystemExit as exited:
            result = ("exit", exited.code)
    return result, out.getvalue(), err.getvalue()


def test_there_are_commands_to_compare():
    assert len(PATHS) > 30 and ("db", "upgrade") in PATHS and ("projection", "rebuild") in PATHS


@pytest.mark.parametrize("path", PATHS, ids=lambda p: " ".join(p) or "blackboard")
def test_every_command_has_the_same_help(path):
    assert (
        _parser_at(build_parser(lazy=True), path).format_help()
        == _parser_at(build_parser(), path).format_help()
    )


# a group of commands (`db`, `projection`, `skill`) has no example of its own: its commands have
EXAMPLES = [p for p in PATHS if p and "example:" in (_parser_at(build_parser(), p).epilog or "")]


def test_every_command_but_the_groups_has_an_example():
    assert len(EXAMPLES) > 30 and ("db",) not in EXAMPLES and ("db", "upgrade") in EXAMPLES


@pytest.mark.parametrize("path", EXAMPLES, ids=" ".join)
def test_every_commands_example_parses_alike(path):
    epilog = _parser_at(build_parser(), path).epilog or ""
    line = epilog.split("example:", 1)[1].strip().splitlines()[0]
    if line.startswith("eval "):  # `eval "$(blackboard completion bash)"`
        line = line.removeprefix('eval "$(').removesuffix(')"')
    words = shlex.split(line, comments=True)[1:]

    assert _outcome(words) == _whole(words)
    assert _outcome(words)[0]["command"] == path[0]  # type: ignore[index]


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["--help"],
        ["--version"],
        ["shwo"],
        ["show"],
        ["show", "sig-1", "--jsn"],
        ["post", "--type", "NOPE"],
        ["signals", "--limit", "2", "--all"],
        ["db"],
        ["db", "upgrad"],
        ["--db", "sqlite:///b.db", "worker", "--agent", "a", "--runner", "claude-code", "--concurrency", "2"],
        ["write", "k", "--blackboard", "b", "--author", "a", "--value", "1", "--text", "t"],
    ],
    ids=lambda a: " ".join(a) or "nothing",
)
def test_usage_errors_help_and_odd_lines_come_out_alike(argv):
    assert _outcome(argv) == _whole(argv)
