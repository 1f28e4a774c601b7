"""Hostile text through the real executable, on SQLite and on PostgreSQL: SQL in topics, ids, keys and
entry values is stored and read back exactly (every statement is parameterised), and terminal escape
sequences in stored text are shown escaped in text output, never replayed raw."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from tests.e2e.conftest import Cli, database_url

SQL = (
    "'; DROP TABLE events; --",
    '" OR 1=1 --',
    "x'); DELETE FROM signals; --",
    "%_\\",
    "Robert'); DROP TABLE entries;--",
)
ESCAPES = "\x1b[2J\x1b[31mred\x07\x08\r\x9b6n\u202eevil"


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def hcli(request, make_cli, tmp_path_factory) -> Iterator[Cli]:
    made = make_cli(database_url(request, tmp_path_factory, "hostile"), tmp_path_factory.mktemp("cwd"))
    yield made
    made.close()


@pytest.mark.parametrize("hostile", SQL)
def test_sql_in_every_field_of_a_signal_is_stored_and_read_back_intact(hcli, hostile):
    context = {hostile: hostile, "nested": [hostile, {"k": hostile}]}
    posted = hcli.ok(
        "post",
        "--type",
        "RESEARCH",
        "--ps-id",
        hostile,
        "--entry-id",
        "e-1",
        "--topic",
        hostile,
        "--prompt",
        hostile,
        "--context",
        json.dumps(context),
        "--posted-by",
        hostile,
        "--key",
        hostile,
        "--correlation-id",
        hostile,
    )

    shown = hcli.ok("show", posted["signal_id"])

    assert (
        shown["blackboard_id"] == hostile and shown["posted_by"] == hostile and shown["dedupe_key"] == hostile
    )
    assert (shown["payload"]["ps_id"], shown["payload"]["topic"], shown["payload"]["prompt"]) == (
        hostile,
    ) * 3
    assert shown["payload"]["context"] == context
    assert [s["signal_id"] for s in hcli.ok("signals", "--blackboard", hostile)] == [posted["signal_id"]]
    events = hcli.ok("events", "--blackboard", hostile)
    assert [e["event_type"] for e in events] == ["AgentSignalPosted"] and events[0]["metadata"][
        "correlation_id"
    ] == hostile


@pytest.mark.parametrize("hostile", SQL)
def test_sql_in_entry_values_boards_authors_and_meta_is_stored_and_read_back_intact(hcli, hostile):
    value = {hostile: [hostile, 1]}
    hcli.ok(
        "write",
        "notes/sql",
        "--blackboard",
        hostile,
        "--author",
        hostile,
        "--value",
        json.dumps(value),
        "--label",
        hostile,
        "--topic",
        "sql/t",
        "--meta",
        json.dumps({"why": hostile}),
    )

    read = hcli.ok("read", "notes/sql", "--blackboard", hostile)

    assert (read["value"], read["author"], read["label"], read["meta"]) == (
        value,
        hostile,
        hostile,
        {"why": hostile},
    )
    assert [e["key"] for e in hcli.ok("entries", "--blackboard", hostile, "--topic", "sql/t")] == [
        "notes/sql"
    ]


@pytest.mark.parametrize("key", ["a'; DROP TABLE entries; --", "k\x1b[2J", "../../etc/passwd\\x"])
def test_a_hostile_key_is_refused_and_writes_nothing(hcli, key):
    board = f"keys-{abs(hash(key)) % 10**8}"

    refused = hcli("write", key, "--blackboard", board, "--author", "a", "--value", "1").expect(2)

    assert "KEY" in refused.stderr and "\x1b" not in refused.stderr
    assert (
        "no blackboard" in hcli("events", "--blackboard", board).expect(4).stderr
    )  # the store holds nothing of it


def test_escape_sequences_in_stored_text_are_shown_escaped_not_replayed(hcli):
    posted = hcli.ok(
        "post",
        "--type",
        "RESEARCH",
        "--ps-id",
        "esc-1",
        "--entry-id",
        "e-1",
        "--topic",
        f"t{ESCAPES}",
        "--posted-by",
        f"p{ESCAPES}",
    )
    hcli.ok("claim", posted["signal_id"], "--agent", "ps-researcher")
    hcli.ok("fail", posted["signal_id"], "--agent", "ps-researcher", "--error", f"boom{ESCAPES}")

    outputs = [
        hcli("show", posted["signal_id"]).expect(0).stdout,
        hcli("signals", "--blackboard", "esc-1").expect(0).stdout,
        hcli("events", "--blackboard", "esc-1").expect(0).stdout,
        hcli("claim", posted["signal_id"], "--agent", "ps-researcher").expect(3).stderr,
    ]

    for output in outputs:
        assert not any(c in output for c in "\x1b\x07\x08\r\x9b\u202e"), repr(output)
    assert "t\\x1b[2J\\x1b[31mred\\x07\\x08\\x0d\\x9b6n\\u202eevil" in outputs[0]
    assert "boom\\x1b[2J" in outputs[0]
    assert hcli.ok("show", posted["signal_id"])["payload"]["topic"] == f"t{ESCAPES}"  # stored as given
