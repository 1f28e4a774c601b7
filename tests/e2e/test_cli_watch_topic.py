"""`watch --topic` and the position `watch` stops at, with real processes on a SQLite file and on PostgreSQL:
a watcher process wakes up for an entry a writer process publishes, `--follow` prints one JSON line per
entry, and looping with the printed position misses nothing."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator

import pytest

from tests.e2e.conftest import Cli, database_url


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def wcli(request, make_cli, tmp_path_factory) -> Iterator[Cli]:
    url = database_url(request, tmp_path_factory, "topics")
    made = make_cli(url, tmp_path_factory.mktemp("cwd"))
    made.ok("events", "--limit", "1")  # the schema exists before a watcher starts
    yield made
    made.close()


@pytest.fixture
def board() -> str:
    return f"tp-{uuid.uuid4().hex[:8]}"


def publish(cli: Cli, board: str, key: str, value: str, *topics: str) -> dict:
    return cli.ok(
        "write",
        key,
        "--blackboard",
        board,
        "--author",
        "ps-writer",
        "--text",
        value,
        *[a for t in topics for a in ("--topic", t)],
    )


def test_a_watcher_process_wakes_for_an_entry_another_process_publishes_to_its_topic(wcli, board):
    publish(wcli, board, "before", "too early", "news")  # before the watch began: not printed
    watch = wcli.start("--json", "watch", "--topic", "news", "--blackboard", board, "--timeout", "30")

    publish(wcli, board, "elsewhere", "other topic", "sports")
    written = publish(wcli, board, "headline", "stores compared", "news", "sports")
    published_at = time.monotonic()
    result = wcli.finish(watch, timeout=40).expect(0)

    assert time.monotonic() - published_at < 10, "watch did not wake up promptly"
    printed = result.json()
    assert (printed["key"], printed["value"], printed["position"]) == (
        "headline",
        "stores compared",
        written["position"],
    )
    assert f"position {written['position']}" in result.stderr


def test_follow_prints_one_json_line_per_entry_until_its_timeout(wcli, board):
    follow = wcli.start("watch", "--topic", "news", "--blackboard", board, "--follow", "--timeout", "8")

    for n in range(3):
        publish(wcli, board, f"item/{n}", f"news {n}", "news")
    publish(wcli, board, "noise", "not news", "weather")
    result = wcli.finish(follow, timeout=40).expect(0)

    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(d["key"], d["value"]) for d in lines] == [
        ("item/0", "news 0"),
        ("item/1", "news 1"),
        ("item/2", "news 2"),
    ]
    assert f"position {lines[-1]['position']}" in result.stderr


def test_looping_with_the_printed_position_misses_no_entry(wcli, board):
    mark = int(
        wcli.ok("write", "mark", "--blackboard", board, "--author", "ps-writer", "--text", "m")["position"]
    )
    for n in range(3):  # published before the loop reads them: all land between two watches
        publish(wcli, board, f"item/{n}", f"news {n}", "news")

    seen, position = [], mark
    for _ in range(3):
        result = wcli(
            "--json",
            "watch",
            "--topic",
            "news",
            "--blackboard",
            board,
            "--since",
            str(position),
            "--timeout",
            "5",
        ).expect(0)
        seen.append(result.json()["key"])
        position = int(result.stderr.split("position ")[1].split()[0])

    assert seen == ["item/0", "item/1", "item/2"]
    wcli(
        "watch", "--topic", "news", "--blackboard", board, "--since", str(position), "--timeout", "0.3"
    ).expect(5)


def test_a_signal_watch_prints_its_position_so_a_loop_sees_two_quick_completions(wcli, board):
    start = wcli.ok("write", "mark", "--blackboard", board, "--author", "ps-writer", "--text", "m")[
        "position"
    ]
    signals = [wcli.post("--blackboard", board)["signal_id"] for _ in range(2)]
    for signal in signals:
        wcli.ok("claim", signal, "--agent", "ps-researcher")
        wcli.ok("complete", signal, "--agent", "ps-researcher")

    first = wcli.ok(
        "watch", "--type", "RESEARCH", "--blackboard", board, "--since", str(start), "--timeout", "5"
    )
    second = wcli(
        "watch",
        "--type",
        "RESEARCH",
        "--blackboard",
        board,
        "--since",
        str(first["position"]),
        "--timeout",
        "5",
    ).expect(0)

    assert first["signal_id"] == signals[0]
    assert second.stdout.startswith(signals[1]) and "position " in second.stderr


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (["--topic", "bad topic", "--blackboard", "b"], "--topic"),
        (["--topic", "news"], "--blackboard"),
        (["--topic", "news", "--type", "RESEARCH", "--blackboard", "b"], "--topic"),
        (["--blackboard", "b"], "--type"),
        (["--type", "RESEARCH", "--follow"], "--follow"),
        (["--topic", "news", "--blackboard", "b", "--since", "-1"], "--since"),
        (["--topic", "news", "--blackboard", "b", "--timeout", "-1"], "--timeout"),
    ],
)
def test_bad_watch_options_are_refused_with_exit_2_naming_the_option(wcli, argv, option):
    refused = wcli("watch", *argv).expect(2)

    assert f"blackboard: {option}" in refused.stderr
