"""Shared knowledge through the real executable, on a SQLite file and on PostgreSQL: write, read, entries,
resolve and summary, their rules and exit codes, time travel, and a completion's knowledge landing on the
board. Every test uses a board of its own."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator

import pytest

from tests.e2e.conftest import Cli, database_url

CONTRACT_FIELDS = {
    "blackboard_id",
    "key",
    "version",
    "value",
    "entry_type",
    "author",
    "section",
    "role",
    "label",
    "confidence",
    "depends_on",
    "topics",
    "meta",
    "signal_id",
    "written_at",
    "position",
    "conflict",
}


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def kcli(request, make_cli, tmp_path_factory) -> Iterator[Cli]:
    url = database_url(request, tmp_path_factory, "knowledge")
    made = make_cli(url, tmp_path_factory.mktemp("cwd"))
    yield made
    made.close()


@pytest.fixture
def board() -> str:
    return f"kb-{uuid.uuid4().hex[:8]}"


def write(cli: Cli, board: str, key: str, author: str, value: object, *more: str, code: int = 0):
    result = cli(
        "--json", "write", key, "--blackboard", board, "--author", author, "--value", json.dumps(value), *more
    )
    return result.expect(code)


def test_a_write_prints_the_entry_document_and_read_gives_it_back(kcli, board):
    written = write(
        kcli,
        board,
        "findings/store",
        "ps-researcher",
        {"pick": "log"},
        "--type",
        "finding",
        "--confidence",
        "0.8",
        "--topic",
        "storage",
        "--depends-on",
        "plan/outline",
        "--meta",
        '{"n": 1}',
        "--section",
        "research",
        "--role",
        "researcher",
        "--label",
        "step-1",
    ).json()

    read = kcli.ok("read", "findings/store", "--blackboard", board)

    assert set(written) >= CONTRACT_FIELDS and read == written
    assert (read["version"], read["value"], read["entry_type"], read["confidence"]) == (
        1,
        {"pick": "log"},
        "finding",
        0.8,
    )
    assert (read["topics"], read["depends_on"], read["meta"], read["conflict"]) == (
        ["storage"],
        ["plan/outline"],
        {"n": 1},
        None,
    )
    assert (read["section"], read["role"], read["label"]) == ("research", "researcher", "step-1")


def test_text_and_file_values_are_json_strings_and_text_output_is_readable(kcli, board, tmp_path):
    (tmp_path / "notes.md").write_text("# notes\nline two\n", encoding="utf-8")
    kcli("write", "a", "--blackboard", board, "--author", "ps-a", "--text", "plain words").expect(0)
    kcli(
        "write", "b", "--blackboard", board, "--author", "ps-a", "--file", str(tmp_path / "notes.md")
    ).expect(0)

    listed = kcli.ok("entries", "--blackboard", board)
    text = kcli("entries", "--blackboard", board).expect(0).stdout

    assert [e["value"] for e in listed] == ["plain words", "# notes\nline two\n"]
    assert "a  v1 note" in text and "by ps-a" in text


def test_a_second_author_with_a_different_value_is_a_conflict_exit_3_naming_the_holder(kcli, board):
    write(kcli, board, "plan", "ps-a", "x")
    refused = write(kcli, board, "plan", "ps-b", "y", code=3)

    read = kcli.ok("read", "plan", "--blackboard", board)

    assert "held by ps-a (version 1)" in refused.stderr and refused.json()["conflict"] is not None
    assert read["value"] == "x" and [
        (c["version"], c["author"], c["value"]) for c in read["conflict"]["candidates"]
    ] == [(1, "ps-a", "x"), (2, "ps-b", "y")]


def test_same_author_and_json_equal_values_make_the_next_version(kcli, board):
    write(kcli, board, "plan", "ps-a", {"a": 1})
    write(kcli, board, "plan", "ps-a", {"a": 2})
    agreed = write(kcli, board, "plan", "ps-b", {"a": 2.0}).json()

    history = kcli.ok("read", "plan", "--blackboard", board, "--history")

    assert (agreed["version"], agreed["author"], agreed["conflict"]) == (3, "ps-b", None)
    assert [(h["version"], h["author"], h["status"]) for h in history] == [
        (1, "ps-a", "accepted"),
        (2, "ps-a", "accepted"),
        (3, "ps-b", "accepted"),
    ]


def test_resolve_by_pick_or_merge_ends_the_conflict_with_a_new_version(kcli, board):
    write(kcli, board, "plan", "ps-a", "x")
    write(kcli, board, "plan", "ps-b", "y", code=3)
    write(kcli, board, "plan", "ps-c", "z", code=3)  # in conflict: another candidate
    in_conflict = kcli.ok("entries", "--blackboard", board, "--conflicts")

    picked = kcli.ok(
        "resolve", "plan", "--blackboard", board, "--author", "ps-lead", "--pick", "2", "--rationale", "cited"
    )
    write(kcli, board, "plan", "ps-a", "w", code=3)
    merged = kcli.ok(
        "resolve",
        "plan",
        "--blackboard",
        board,
        "--author",
        "ps-lead",
        "--value",
        '["y","w"]',
        "--rationale",
        "both",
    )
    history = kcli.ok("read", "plan", "--blackboard", board, "--history")

    assert [e["key"] for e in in_conflict] == ["plan"]
    assert (picked["version"], picked["value"], picked["author"], picked["conflict"]) == (
        4,
        "y",
        "ps-lead",
        None,
    )
    assert (merged["version"], merged["value"]) == (6, ["y", "w"])
    assert [h["status"] for h in history] == [
        "accepted",
        "candidate",
        "candidate",
        "resolution",
        "candidate",
        "resolution",
    ]
    assert history[3]["rationale"] == "cited" and history[3]["picked"] == 2


def test_a_resolution_keeps_the_key_s_topics_or_takes_the_resolve_s_own(kcli, board):
    """Issue 34, item 10: picking a candidate written without topics took the key off its topics (`entries
    --topic` no longer found it, its followers no longer heard of it). The resolution carries the key's
    topics and the pick's; `--topic` gives it its own instead."""
    write(kcli, board, "plan", "ps-a", "x", "--topic", "plans", "--topic", "weekly")
    write(kcli, board, "plan", "ps-b", "y", "--topic", "drafts", code=3)
    write(kcli, board, "plan", "ps-c", "z", code=3)

    picked = kcli.ok(
        "resolve", "plan", "--blackboard", board, "--author", "ps-lead", "--pick", "3", "--rationale", "r"
    )
    write(kcli, board, "plan", "ps-b", "y2", code=3)
    merged = kcli.ok(
        "resolve", "plan", "--blackboard", board, "--author", "ps-lead", "--value", '"m"', "--rationale", "r"
    )
    write(kcli, board, "plan", "ps-b", "y3", "--topic", "drafts", code=3)
    picked_with_topics = kcli.ok(
        "resolve", "plan", "--blackboard", board, "--author", "ps-lead", "--pick", "7", "--rationale", "r"
    )
    write(kcli, board, "plan", "ps-c", "z2", code=3)
    own = kcli.ok(
        *("resolve", "plan", "--blackboard", board, "--author", "ps-lead", "--pick", "9", "--rationale", "r"),
        *("--topic", "final"),
    )
    on_final = kcli.ok("entries", "--blackboard", board, "--topic", "final")

    assert (picked["value"], picked["topics"]) == ("z", ["plans", "weekly"])  # the pick had none
    assert (merged["value"], merged["topics"]) == ("m", ["plans", "weekly"])
    assert picked_with_topics["topics"] == ["plans", "weekly", "drafts"]  # the key's, then the pick's
    assert own["topics"] == ["final"] and [e["key"] for e in on_final] == ["plan"]


def test_resolve_refuses_a_key_not_in_conflict_and_a_version_that_is_no_candidate(kcli, board):
    write(kcli, board, "plan", "ps-a", "x")
    not_in_conflict = kcli(
        "resolve", "plan", "--blackboard", board, "--author", "l", "--pick", "1", "--rationale", "r"
    )
    write(kcli, board, "plan", "ps-b", "y", code=3)
    no_candidate = kcli(
        "resolve", "plan", "--blackboard", board, "--author", "l", "--pick", "9", "--rationale", "r"
    )
    unknown = kcli(
        "resolve", "nope", "--blackboard", board, "--author", "l", "--pick", "1", "--rationale", "r"
    )

    assert not_in_conflict.expect(3) and "not in conflict" in not_in_conflict.stderr
    assert no_candidate.expect(4) and "--pick" in no_candidate.stderr
    assert unknown.expect(4)


def test_replaces_is_compare_and_set_and_a_stale_one_writes_nothing(kcli, board):
    write(kcli, board, "plan", "ps-a", "x")
    taken_over = write(kcli, board, "plan", "ps-b", "y", "--replaces", "1").json()
    stale = write(kcli, board, "plan", "ps-c", "z", "--replaces", "1", code=3)

    history = kcli.ok("read", "plan", "--blackboard", board, "--history")

    assert (taken_over["version"], taken_over["author"], taken_over["conflict"]) == (2, "ps-b", None)
    assert "at version 2, not 1" in stale.stderr and [h["version"] for h in history] == [1, 2]


def test_entries_filters_and_keeps_key_order(kcli, board):
    write(kcli, board, "b/2", "ps-a", 1, "--type", "finding", "--topic", "t1")
    write(kcli, board, "b/1", "ps-b", 2, "--section", "s", "--role", "r", "--label", "l", "--topic", "t1")
    write(kcli, board, "a", "ps-a", 3, "--type", "plan")

    def keys(*criteria: str) -> list[str]:
        return [e["key"] for e in kcli.ok("entries", "--blackboard", board, *criteria)]

    assert keys() == ["a", "b/1", "b/2"]
    assert keys("--author", "ps-a") == ["a", "b/2"] and keys("--topic", "t1") == ["b/1", "b/2"]
    assert keys("--type", "finding") == ["b/2"] and keys("--prefix", "b/", "--limit", "1") == ["b/1"]
    assert keys("--section", "s", "--role", "r", "--label", "l") == ["b/1"]


def test_read_and_entries_at_a_position_answer_as_the_board_was_then(kcli, board):
    first = write(kcli, board, "plan", "ps-a", "x").json()["position"]
    write(kcli, board, "other", "ps-a", 1)
    write(kcli, board, "plan", "ps-b", "y", code=3)

    then = kcli.ok("read", "plan", "--blackboard", board, "--at", str(first))
    listed_then = kcli.ok("entries", "--blackboard", board, "--at", str(first))
    before = kcli("read", "plan", "--blackboard", board, "--at", str(first - 1))

    assert (then["version"], then["conflict"]) == (1, None)
    assert [e["key"] for e in listed_then] == ["plan"]
    assert before.expect(4) and "at position" in before.stderr


def test_summary_counts_entries_signals_and_open_conflicts(kcli, board):
    write(kcli, board, "a", "ps-a", 1, "--type", "finding")
    write(kcli, board, "b", "ps-a", 2)
    write(kcli, board, "b", "ps-b", 3, code=3)
    kcli.post(ps=board)

    summary = kcli.ok("summary", "--blackboard", board)

    assert summary["entries_by_type"] == {"finding": 1, "note": 1}
    assert summary["entries_by_author"] == {"ps-a": 2} and summary["open_conflicts"] == ["b"]
    assert summary["signals_by_status"] == {"POSTED": 1} and summary["latest_entry"]["key"] == "b"


def test_a_completions_knowledge_lands_on_the_board_as_entries_linked_to_the_signal(kcli, board):
    signal = kcli.post(ps=board)["signal_id"]
    kcli.ok("claim", signal, "--agent", "ps-researcher")
    kcli.ok(
        "complete",
        signal,
        "--agent",
        "ps-researcher",
        "--knowledge",
        "logs are enough",
        "--knowledge",
        "use WAL",
    )

    landed = kcli.ok("entries", "--blackboard", board, "--prefix", f"{signal}/")

    assert [(e["key"], e["value"], e["author"], e["signal_id"], e["entry_type"]) for e in landed] == [
        (f"{signal}/knowledge/1", "logs are enough", "ps-researcher", signal, "finding"),
        (f"{signal}/knowledge/2", "use WAL", "ps-researcher", signal, "finding"),
    ]


def test_unknown_keys_and_boards_are_not_found(kcli, board):
    assert kcli("read", "nope", "--blackboard", board).expect(4)
    assert kcli("summary", "--blackboard", board).expect(4)


def test_every_write_is_an_event_with_the_commands_metadata_and_a_rebuild_restores_the_entries(kcli, board):
    write(kcli, board, "plan", "ps-a", "x", "--correlation-id", "run-7")
    write(kcli, board, "plan", "ps-b", "y", code=3)
    before = kcli.ok("entries", "--blackboard", board)

    kcli.ok("projection", "rebuild")
    events = [e for e in kcli.ok("events", "--blackboard", board)]

    assert kcli.ok("entries", "--blackboard", board) == before
    assert [e["event_type"] for e in events] == ["EntryWritten", "EntryCandidateKept"]
    assert events[0]["metadata"]["actor"] == "ps-a" and events[0]["metadata"]["command"] == "WriteEntry"
    assert events[0]["metadata"]["correlation_id"] == "run-7" and events[0]["metadata"]["causation_id"]


def test_show_and_signals_at_a_position_answer_as_the_board_was_then(kcli, board):
    signal = kcli.post("--capability", "RESEARCH", ps=board)["signal_id"]
    posted_at = max(e["position"] for e in kcli.ok("events", "--blackboard", board))
    kcli.ok("claim", signal, "--agent", "ps-researcher")

    now, then = kcli.ok("show", signal), kcli.ok("show", signal, "--at", str(posted_at))
    listed_then = kcli.ok("signals", "--blackboard", board, "--status", "POSTED", "--at", str(posted_at))
    before = kcli("show", signal, "--at", str(posted_at - 1))
    negative = kcli("show", signal, "--at", "-1")

    assert (now["status"], then["status"]) == ("CLAIMED", "POSTED")
    assert [s["signal_id"] for s in listed_then] == [signal]
    assert kcli.ok("signals", "--blackboard", board, "--status", "POSTED") == []
    assert before.expect(4) and signal in before.stderr
    assert negative.expect(2) and "--at" in negative.stderr
