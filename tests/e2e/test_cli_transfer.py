"""Export and import through the real executable, on SQLite files and on PostgreSQL databases: a board
round-trips byte for byte through an empty store, keeps everything but its positions in a store with
other boards, is refused (exit 3) where it exists, and a malformed document is refused (exit 2);
neither refusal writes anything."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text

from tests.conftest import _own_pg_database
from tests.e2e.conftest import Cli, empty_database

pytestmark = pytest.mark.one_process  # its tests share a costly module fixture (tests/scheduling.py)


@pytest.fixture(scope="module")
def pg_second_url() -> Iterator[str]:
    """A PostgreSQL database of its own, beside the run's: the store a board is imported into."""
    yield from _own_pg_database()


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def stores(request, make_cli, tmp_path_factory) -> tuple[Cli, Cli]:
    """(the store a board is exported from, holding other boards too; an empty store to import into)."""
    cwd = tmp_path_factory.mktemp("transfer")
    if request.param == "sqlite":
        source, target = f"sqlite:///{cwd / 'source.db'}", f"sqlite:///{cwd / 'target.db'}"
    else:
        source, target = request.getfixturevalue("pg_database_url"), request.getfixturevalue("pg_second_url")
        empty_database(source)
    made = make_cli(source, cwd), make_cli(target, cwd)
    made[1]("db", "upgrade").expect(0)
    return made


@pytest.fixture
def target(stores) -> Cli:
    """The import store, emptied for each test."""
    cli = stores[1]
    if cli.db_url.startswith("postgresql"):
        empty_database(cli.db_url)
    else:
        cli.ok("db", "upgrade")
        _truncate_sqlite(cli.db_url)
    return cli


def _truncate_sqlite(url: str) -> None:
    from blackboard.infrastructure.persistence.knowledge.search import entry_index

    engine = create_engine(url)
    with engine.begin() as conn:
        for (table,) in conn.execute(
            text(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name <> 'alembic_version'"
                " AND name NOT LIKE 'entry\\_search%' ESCAPE '\\'"  # FTS5's own tables: cleared below
            )
        ):
            conn.execute(text(f'DELETE FROM "{table}"'))
        entry_index(conn).clear(conn)  # the search index (an FTS5 table and its words), as a rebuild does
    engine.dispose()


def a_board(cli: Cli) -> str:
    """A board with every kind of event: a signal posted, claimed and completed with knowledge (landing as
    entries), one still posted, an entry written twice, a conflict kept and resolved; and another board
    around it, so its positions have gaps."""
    board, other = f"ex-{uuid.uuid4().hex[:8]}", f"other-{uuid.uuid4().hex[:8]}"
    cli.post("--blackboard", other)
    signal = cli.post("--blackboard", board, "--correlation-id", "run-1")["signal_id"]
    cli.ok("claim", signal, "--agent", "ps-researcher", "--token", "t-1")
    cli.ok("complete", signal, "--agent", "ps-researcher", "--token", "t-1", "--knowledge", "logs keep facts")
    cli.post("--blackboard", board, "--type", "REVIEW", "--after", signal)
    cli.ok(
        "write",
        "plan",
        "--blackboard",
        board,
        "--author",
        "ps-a",
        "--value",
        '{"steps": [1, "ü"]}',
        "--meta",
        '{"why": "start"}',
        "--topic",
        "plans",
        "--confidence",
        "0.5",
    )
    cli.post("--blackboard", other, "--entry-id", "e-2")
    cli("write", "plan", "--blackboard", board, "--author", "ps-b", "--value", '"other"').expect(3)
    cli.ok(
        "resolve",
        "plan",
        "--blackboard",
        board,
        "--author",
        "ps-lead",
        "--pick",
        "2",
        "--rationale",
        "b is right",
    )
    return board


def export(cli: Cli, board: str, path: Path) -> bytes:
    cli("export", board, "--output", str(path)).expect(0)
    return path.read_bytes()


def sorted_keys(document: bytes) -> str:
    return json.dumps(json.loads(document), sort_keys=True)


def test_a_board_imported_into_an_empty_store_exports_again_byte_for_byte_and_is_queryable(
    stores, target, tmp_path
):
    source = stores[0]
    board = a_board(source)
    first = export(source, board, tmp_path / "first.json")

    imported = target.ok("import", str(tmp_path / "first.json"))
    again = export(target, board, tmp_path / "again.json")

    assert again == first and sorted_keys(again) == sorted_keys(first)
    assert imported["kept_positions"] is True and imported["events"] == len(json.loads(first)["events"])
    for query in (
        ("signals", "--blackboard", board),
        ("entries", "--blackboard", board),
        ("read", "plan", "--blackboard", board, "--history"),
        ("summary", "--blackboard", board),
    ):
        assert target.ok(*query) == source.ok(*query), query
    assert [e["key"] for e in target.ok("entries", "--blackboard", board)][0] == "plan"
    assert len(target.ok("entries", "--blackboard", board)) == 2  # the landed finding and plan


def test_the_export_prints_the_same_document_without_output(stores, tmp_path):
    source = stores[0]
    board = a_board(source)

    printed = source("export", board).expect(0).stdout
    as_json = source("--json", "export", board).expect(0).stdout

    assert printed.encode() == export(source, board, tmp_path / "x.json")
    assert json.loads(as_json) == json.loads(printed)


def test_an_import_into_a_store_with_other_boards_keeps_everything_but_positions(stores, target, tmp_path):
    source = stores[0]
    board, later = a_board(source), a_board(source)
    first = json.loads(export(source, board, tmp_path / "first.json"))
    export(source, later, tmp_path / "later.json")
    target.ok("import", str(tmp_path / "later.json"))  # its positions are past the first board's
    target.post("--blackboard", "here")
    last_before = target.ok("events", "--all")[-1]["position"]

    imported = target.ok("import", str(tmp_path / "first.json"))
    again = json.loads(export(target, board, tmp_path / "again.json"))

    positions = [e["position"] for e in again["events"]]
    assert imported["kept_positions"] is False
    assert positions == list(range(last_before + 1, last_before + 1 + len(positions)))
    assert positions != [e["position"] for e in first["events"]]
    for event in (*first["events"], *again["events"]):
        del event["position"]
    assert again == first
    assert target.ok("read", "plan", "--blackboard", board)["value"] == "other"


def test_a_claim_with_a_token_and_one_without_import_as_they_were_each_keeping_its_protection(
    stores, target, tmp_path
):
    """`claim` without `--token` records a claim of today's schema without one (docs/cli.md): a board holding one
    must import, and the token of the other must still be asked for."""
    source = stores[0]
    board = f"tok-{uuid.uuid4().hex[:8]}"
    guarded, open_ = (source.post("--blackboard", board)["signal_id"] for _ in range(2))
    source.ok("claim", guarded, "--agent", "ps-researcher", "--token", "t-1")
    source.ok("claim", open_, "--agent", "ps-researcher")
    document = json.loads(export(source, board, tmp_path / "board.json"))
    claims = [e for e in document["events"] if e["event_type"] == "AgentSignalClaimed"]
    assert [(c["schema_version"], c["data"]["token"]) for c in claims] == [(5, "t-1"), (5, None)]

    target.ok("import", str(tmp_path / "board.json"))

    assert "token" in target("complete", guarded, "--agent", "ps-researcher").expect(3).stderr
    target.ok("complete", guarded, "--agent", "ps-researcher", "--token", "t-1")
    target.ok("complete", open_, "--agent", "ps-researcher")


def test_an_import_onto_a_store_that_holds_the_board_is_refused_with_exit_3_and_writes_nothing(
    stores, tmp_path
):
    source = stores[0]
    board = a_board(source)
    export(source, board, tmp_path / "first.json")
    before = source.ok("events")

    refused = source("import", str(tmp_path / "first.json")).expect(3)

    assert (
        f"board {board} cannot be imported: this store holds 3 of its streams already" in refused.stderr
    )  # the board, plan, the finding
    assert "nothing was written" in refused.stderr
    assert source.ok("events") == before


def test_export_of_a_board_the_store_does_not_hold_exits_4(stores, tmp_path):
    refused = stores[0]("export", "no-such-board", "--output", str(tmp_path / "x.json")).expect(4)

    assert "no blackboard no-such-board" in refused.stderr and not (tmp_path / "x.json").exists()


def _mutations() -> dict[str, tuple[object, str]]:
    """name -> (how the valid document is broken, what the message must say)."""

    def events(change):
        def apply(doc):
            change(doc["events"])
            return doc

        return apply

    return {
        "not JSON": (lambda doc: "{not json", "FILE: must be JSON"),
        "not an object": (lambda doc: [doc], "FILE: must be a JSON object"),
        "another format version": (lambda doc: {**doc, "format_version": 2}, "format_version: must be 1"),
        "no events array": (lambda doc: {**doc, "events": {}}, "events: must be an array"),
        "no events": (lambda doc: {**doc, "events": []}, "events: must hold at least one event"),
        "a missing field": (events(lambda e: e[1].pop("recorded_at")), "events[1].recorded_at: is required"),
        "a version gap": (
            events(lambda e: e[-1].update(version=e[-1]["version"] + 1)),
            "versions go 1, 2, ... without a gap",
        ),
        "an id twice": (
            events(lambda e: e[1].update(event_id=e[0]["event_id"])),
            "events[1].event_id: must be unique",
        ),
        "an unknown event type": (
            events(lambda e: e[0].update(event_type="SignalVanished")),
            "events[0].event_type: must be a known event type",
        ),
        "data that is no such event": (
            events(lambda e: e[0]["data"].pop("posted_by")),
            "events[0].data: must be a valid AgentSignalPosted",
        ),
        "a time without its zone": (
            events(lambda e: e[0].update(occurred_at="2026-01-01T10:00:00")),
            "events[0].occurred_at: must be an ISO 8601 date-time with its zone",
        ),
        "positions out of order": (
            events(lambda e: _swap_positions(e[1], e[2])),
            "events[2].position: must be above the one before",
        ),
        "another board's stream": (
            events(lambda e: e[0].update(stream_id="elsewhere")),
            "events[0].stream_id: must be the board",
        ),
        "an event longer than the reader's bound": (
            events(lambda e: e[0]["data"]["payload"].update(prompt="x" * (17 << 20))),
            "events[0]: must be at most 16 MiB of JSON as an export writes it (the import reader's bound",
        ),
        "an event nested deeper than the reader's bound": (
            events(lambda e: e[0]["metadata"].update(deep=_nested(60))),
            "events[0]: must be nested at most 40 levels deep as an export writes it (the import reader's bound)",
        ),
        "a claim before its post": (
            events(
                lambda e: (
                    e.pop(0)
                    and [x.update(version=x["version"] - 1) for x in e if "\x1f" not in x["stream_id"]]
                )
            ),
            "events[0]: the AgentSignalClaimed at position",
        ),
    }


def _nested(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


def _swap_positions(a: dict, b: dict) -> None:
    a["position"], b["position"] = b["position"], a["position"]


@pytest.fixture(scope="module")
def valid_document(make_cli, tmp_path_factory) -> dict:
    cwd = tmp_path_factory.mktemp("valid")
    cli = make_cli(f"sqlite:///{cwd / 'valid.db'}", cwd)
    board = a_board(cli)
    return json.loads(export(cli, board, cwd / "valid.json"))


@pytest.mark.parametrize("shape", list(_mutations()))
def test_a_malformed_document_is_refused_with_exit_2_naming_the_field_and_the_rule_and_writes_nothing(
    shape, valid_document, cli, tmp_path
):
    broken, says = _mutations()[shape]
    document = broken(copy.deepcopy(valid_document))
    (tmp_path / "broken.json").write_text(document if isinstance(document, str) else json.dumps(document))

    refused = cli("import", str(tmp_path / "broken.json")).expect(2)

    assert says in refused.stderr, refused.stderr
    assert cli.ok("events") == []


def test_an_unreadable_file_is_refused_with_exit_2(cli, tmp_path):
    refused = cli("import", str(tmp_path / "missing.json")).expect(2)

    assert "FILE: must be a readable UTF-8 file" in refused.stderr


def test_an_event_of_an_older_schema_version_is_upcast_to_load_and_kept_as_it_was(
    valid_document, cli, tmp_path
):
    document = copy.deepcopy(valid_document)
    posted = document["events"][0]
    posted["schema_version"] = 1  # AgentSignalPosted before retry_of
    del posted["data"]["retry_of"]
    (tmp_path / "old.json").write_text(json.dumps(document))

    cli.ok("import", str(tmp_path / "old.json"))

    assert cli.ok("show", posted["data"]["signal_id"])["retry_of"] is None
    assert json.loads(export(cli, document["blackboard_id"], tmp_path / "again.json")) == document


def test_an_import_from_standard_input_is_checked_then_written(valid_document, cli):
    """`import -` reads standard input once, into a spool on disk, and checks and writes from there."""
    done = subprocess.run(
        [str(Path(sys.executable).parent / "blackboard"), "--json", "import", "-"],
        input=json.dumps(valid_document),
        env=cli.environment(None),
        cwd=cli.cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["events"] == len(valid_document["events"])
    assert len(cli.ok("events", "--all")) == len(valid_document["events"])
