"""Key permissions through the real executable, on a SQLite file and on PostgreSQL: a signal posted with
--read-key/--write-key lets only its claimer, while it holds the claim, read and write the keys it names."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator

import pytest

from tests.e2e.conftest import Cli, database_url


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def pcli(request, make_cli, tmp_path_factory) -> Iterator[Cli]:
    url = database_url(request, tmp_path_factory, "perms")
    made = make_cli(url, tmp_path_factory.mktemp("cwd"))
    yield made
    made.close()


@pytest.fixture
def board() -> str:
    return f"kp-{uuid.uuid4().hex[:8]}"


def claimed(cli: Cli, board: str, token: str = "tok-1") -> str:
    """A signal on `board` with key lists, claimed by ps-researcher with `token`."""
    signal = cli.post(
        "--blackboard", board, "--read-key", "brief", "--write-key", "draft/*", "--write-key", "final"
    )
    assert (signal["read_keys"], signal["write_keys"]) == (["brief"], ["draft/*", "final"])
    cli.ok("claim", signal["signal_id"], "--agent", "ps-researcher", "--token", token)
    return signal["signal_id"]


def write(cli: Cli, board: str, key: str, signal: str, author: str = "ps-researcher", *more: str):
    return cli(
        "--json",
        "write",
        key,
        "--blackboard",
        board,
        "--author",
        author,
        "--text",
        "words",
        "--signal",
        signal,
        *more,
    )


def keys(cli: Cli, board: str) -> list[str]:
    listed = cli("--json", "entries", "--blackboard", board)
    if listed.returncode == 4:  # the store holds nothing of the board: no signal, no entry
        return []
    return [e["key"] for e in listed.expect(0).json()]


def test_the_claimer_writes_and_reads_the_keys_its_signal_names(pcli, board):
    signal = claimed(pcli, board)
    pcli("write", "brief", "--blackboard", board, "--author", "ps-lead", "--text", "the brief").expect(0)

    written = write(pcli, board, "draft/intro", signal, "ps-researcher", "--token", "tok-1").expect(0).json()
    read = pcli.ok(
        "read",
        "brief",
        "--blackboard",
        board,
        "--signal",
        signal,
        "--token",
        "tok-1",
        "--author",
        "ps-researcher",
    )

    assert (written["key"], written["signal_id"], read["value"]) == ("draft/intro", signal, "the brief")


def test_a_key_outside_the_lists_is_refused_with_exit_3_and_nothing_is_written(pcli, board):
    signal = claimed(pcli, board)

    refused = write(pcli, board, "plan/outline", signal, "ps-researcher", "--token", "tok-1").expect(3)
    unread = pcli(
        "read",
        "secret",
        "--blackboard",
        board,
        "--signal",
        signal,
        "--token",
        "tok-1",
        "--author",
        "ps-researcher",
    ).expect(3)

    assert "plan/outline is not in its write keys (draft/*, final)" in refused.stderr
    assert "secret is not in its read keys" in unread.stderr
    assert keys(pcli, board) == []


def test_a_non_claimer_and_a_wrong_token_are_refused(pcli, board):
    signal = claimed(pcli, board)

    other = write(pcli, board, "draft/x", signal, "ps-analyst", "--token", "tok-1").expect(3)
    no_token = write(pcli, board, "draft/x", signal, "ps-researcher").expect(3)
    reader = pcli(
        "read", "brief", "--blackboard", board, "--signal", signal, "--author", "ps-analyst"
    ).expect(3)

    assert "only its claimer ps-researcher may, not ps-analyst" in other.stderr + reader.stderr
    assert "token was not presented" in no_token.stderr
    assert keys(pcli, board) == []


def test_once_the_claim_ended_the_claimer_is_refused_too(pcli, board):
    signal = claimed(pcli, board)
    write(pcli, board, "draft/1", signal, "ps-researcher", "--token", "tok-1").expect(0)
    pcli.ok("complete", signal, "--agent", "ps-researcher", "--token", "tok-1")

    late = write(pcli, board, "draft/2", signal, "ps-researcher", "--token", "tok-1").expect(3)

    assert "the signal is COMPLETED" in late.stderr
    assert keys(pcli, board) == ["draft/1"]


def test_a_claim_past_its_claim_timeout_is_lost_before_any_sweep_expires_it(pcli, board):
    signal = claimed(pcli, board)
    time.sleep(1.1)

    late = pcli(
        "write",
        "draft/1",
        "--blackboard",
        board,
        "--author",
        "ps-researcher",
        "--text",
        "x",
        "--signal",
        signal,
        "--token",
        "tok-1",
        env={"BLACKBOARD_CLAIM_TIMEOUT": "1"},
    ).expect(3)

    assert "ran past its claim timeout" in late.stderr
    assert (
        pcli.ok("show", signal)["status"] == "CLAIMED"
    )  # nothing swept it: the write itself saw the lease run out


def test_a_signal_without_key_lists_still_lets_anyone_name_it(pcli, board):
    signal = pcli.post("--blackboard", board)["signal_id"]

    write(pcli, board, "notes", signal, "ps-anyone").expect(0)

    assert keys(pcli, board) == ["notes"]


@pytest.mark.parametrize(
    ("argv", "option", "rule"),
    [
        (["--read-key", "bad key"], "--read-key", "pattern"),
        (["--write-key", "draft/**"], "--write-key", "pattern"),
        (["--write-key", ""], "--write-key", "pattern"),
    ],
)
def test_a_bad_key_pattern_is_refused_with_exit_2_naming_the_option(pcli, board, argv, option, rule):
    refused = pcli(
        "post", "--type", "RESEARCH", "--ps-id", board, "--entry-id", "e-1", "--topic", "t", *argv
    ).expect(2)

    assert option in refused.stderr and rule in refused.stderr
    assert "no blackboard" in pcli("signals", "--blackboard", board).expect(4).stderr  # nothing was posted


@pytest.mark.parametrize(
    ("argv", "option"),
    [
        (["read", "k", "--signal", "sig-0000000a"], "--author"),
        (["read", "k", "--author", "ps-a"], "--author"),
        (["read", "k", "--token", "t"], "--token"),
        (["read", "k", "--signal", "not-a-signal", "--author", "ps-a"], "SIG"),
        (["write", "k", "--text", "x", "--author", "ps-a", "--token", "t"], "--token"),
    ],
)
def test_signal_token_and_reader_options_out_of_place_are_refused_with_exit_2(pcli, board, argv, option):
    refused = pcli(*argv, "--blackboard", board).expect(2)

    assert option in refused.stderr
    assert keys(pcli, board) == []


def test_a_write_naming_a_signal_the_board_does_not_hold_is_not_found(pcli, board):
    missing = write(pcli, board, "k", "sig-ffffffff").expect(4)

    assert "sig-ffffffff" in missing.stderr and keys(pcli, board) == []


def plain_write(cli: Cli, board: str, key: str, author: str, env: dict[str, str] | None = None):
    """A write that names no signal (no --signal, no --token)."""
    return cli("--json", "write", key, "--blackboard", board, "--author", author, "--text", "words", env=env)


def test_a_claimer_that_leaves_signal_out_is_still_bound_by_its_claims_write_keys(pcli, board):
    claimed(pcli, board)

    refused = plain_write(pcli, board, "plan/outline", "ps-researcher").expect(3)
    also_refused = plain_write(pcli, board, "brief", "ps-researcher").expect(3)  # a read key: not writable
    allowed = plain_write(pcli, board, "draft/intro", "ps-researcher").expect(0).json()

    assert "ps-researcher holds key-restricted claims" in refused.stderr, refused.stderr
    assert "plan/outline is not in their write keys (draft/*, final)" in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stderr + also_refused.stderr
    assert allowed["key"] == "draft/intro"
    assert keys(pcli, board) == ["draft/intro"]


def test_naming_a_signal_without_key_lists_does_not_escape_the_claims_that_bind(pcli, board):
    claimed(pcli, board)
    open_signal = pcli.post("--blackboard", board)["signal_id"]

    refused = write(pcli, board, "plan/outline", open_signal, "ps-researcher").expect(3)

    assert "not in their write keys" in refused.stderr
    assert keys(pcli, board) == []


def test_the_union_of_every_restricting_claim_binds_and_only_on_that_board(pcli, board):
    claimed(pcli, board)
    second = pcli.post("--blackboard", board, "--write-key", "notes/*")["signal_id"]
    pcli.ok("claim", second, "--agent", "ps-researcher")

    plain_write(pcli, board, "final", "ps-researcher").expect(0)
    plain_write(pcli, board, "notes/a", "ps-researcher").expect(0)
    refused = plain_write(pcli, board, "other", "ps-researcher").expect(3)
    elsewhere = plain_write(pcli, f"{board}-other", "other", "ps-researcher").expect(0)

    assert "(draft/*, final, notes/*)" in refused.stderr, refused.stderr
    assert elsewhere.json()["key"] == "other"
    assert sorted(keys(pcli, board)) == ["final", "notes/a"]


def test_a_person_and_an_agent_between_claims_write_freely(pcli, board):
    signal = claimed(pcli, board)

    plain_write(pcli, board, "plan/outline", "ps-lead").expect(0)  # holds no claim: a person's own write
    pcli.ok("complete", signal, "--agent", "ps-researcher", "--token", "tok-1")
    plain_write(pcli, board, "plan/after", "ps-researcher").expect(0)  # the claim ended: free again

    assert sorted(keys(pcli, board)) == ["plan/after", "plan/outline"]


def test_a_claim_past_its_claim_timeout_binds_no_more(pcli, board):
    claimed(pcli, board)
    time.sleep(1.1)

    plain_write(pcli, board, "plan/late", "ps-researcher", env={"BLACKBOARD_CLAIM_TIMEOUT": "1"}).expect(0)

    assert keys(pcli, board) == ["plan/late"]


def test_a_resolve_is_bound_as_a_write_is(pcli, board):
    for author, value in (("ps-a", "one"), ("ps-b", "two")):
        pcli("write", "plan/x", "--blackboard", board, "--author", author, "--text", value)
    claimed(pcli, board)

    refused = pcli(
        "resolve",
        "plan/x",
        "--blackboard",
        board,
        "--author",
        "ps-researcher",
        "--pick",
        "1",
        "--rationale",
        "mine",
    ).expect(3)
    pcli.ok(
        "resolve",
        "plan/x",
        "--blackboard",
        board,
        "--author",
        "ps-lead",
        "--pick",
        "1",
        "--rationale",
        "first",
    )

    assert "not in their write keys" in refused.stderr
