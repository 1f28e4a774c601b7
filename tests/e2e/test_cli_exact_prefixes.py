"""Prefixes match exactly, case included, on SQLite and on PostgreSQL, through the real executable: `entries --prefix
notes/` never lists `Notes/a`, and board `ps-1` is never board `PS-1` (SQLite's LIKE ignored ASCII case: `entries
--prefix` mixed the cases, an export of `ps-1` carried `PS-1`'s events, an import of `ps-1` beside `PS-1` was
refused as a board the store held already)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import _own_pg_database
from tests.e2e.conftest import Cli, database_url, empty_database


@pytest.fixture(scope="module")
def pg_other_url() -> Iterator[str]:
    """A PostgreSQL database of its own, beside the run's: the store a board is imported into."""
    yield from _own_pg_database()


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def stores(request, make_cli, tmp_path_factory) -> tuple[Cli, Cli]:
    """(a store, another store to import into), both on SQLite files or both on PostgreSQL."""
    cwd = tmp_path_factory.mktemp("exact")
    source = make_cli(database_url(request, tmp_path_factory, "exact"), cwd)
    if request.param == "sqlite":
        other = make_cli(f"sqlite:///{cwd / 'other.db'}", cwd)
    else:
        other = make_cli(request.getfixturevalue("pg_other_url"), cwd)
        empty_database(other.db_url)
    other("db", "upgrade").expect(0)
    return source, other


def boards() -> tuple[str, str]:
    name = uuid.uuid4().hex[:8]
    return f"ps-{name}", f"PS-{name}"


def write(cli: Cli, board: str, key: str) -> None:
    cli.ok("write", key, "--blackboard", board, "--author", "ps-a", "--value", json.dumps({"key": key}))


def keys(cli: Cli, board: str, *more: str) -> list[str]:
    return [e["key"] for e in cli.ok("entries", "--blackboard", board, *more)]


def test_entries_prefix_matches_case_and_every_character(stores):
    cli, _ = stores
    board, _ = boards()
    for key in ("notes/a", "Notes/b", "NOTES/c", "notes_x/d", "notesX", "notes/"):
        write(cli, board, key)

    assert keys(cli, board, "--prefix", "notes/") == ["notes/"] + ["notes/a"]
    assert keys(cli, board, "--prefix", "Notes/") == ["Notes/b"]
    assert keys(cli, board, "--prefix", "notes_") == ["notes_x/d"]  # `_` is no wildcard
    assert keys(cli, board, "--prefix", "notes") == ["notes/", "notes/a", "notesX", "notes_x/d"]
    hits = cli.ok("search", "notes", "--blackboard", board, "--prefix", "notes/")
    assert sorted(h["key"] for h in hits) == ["notes/", "notes/a"]


def test_an_export_of_ps_1_beside_PS_1_holds_ps_1_alone_and_imports_beside_PS_1(stores, tmp_path: Path):
    cli, other = stores
    board, twin = boards()
    write(cli, board, "plan")
    write(cli, twin, "plan")
    write(cli, twin, "other")
    cli.post("--blackboard", twin)
    document = tmp_path / "board.json"
    cli("export", board, "--output", str(document)).expect(0)

    exported = json.loads(document.read_text(encoding="utf-8"))
    streams = {e["stream_id"].split("\x1f")[0] for e in exported["events"]}
    assert streams == {board}, f"the export of {board} carries other boards' events: {streams}"

    write(other, twin, "held")  # the store it goes into holds the other board
    imported = other.ok("import", str(document))
    assert imported["events"] == len(exported["events"]) == 1
    assert keys(other, board) == ["plan"]
    assert keys(other, twin) == ["held"]
