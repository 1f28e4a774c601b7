"""`blackboard search` through the real executable: the Python API's document as --json, readable lines,
the index rebuilt with the read model and carried by an export into another store, and its refusals."""

from __future__ import annotations

import json

from blackboard import Blackboard
from tests.e2e.conftest import Cli


def test_search_prints_the_api_s_document_and_survives_a_rebuild_and_an_export_into_another_store(
    cli: Cli, make_cli, tmp_path
):
    board = "found-here"
    cli("write", "notes/cafe", "--blackboard", board, "--author", "ann", "--topic", "food",
        "--value", '{"text": "The Café opens at nine", "status": "open"}').expect(0)  # fmt: skip
    cli("write", "plan/x_y", "--blackboard", board, "--author", "bob", "--text", "cafe cafe cafe").expect(0)
    cli("write", "notes/bar", "--blackboard", board, "--author", "bob", "--text", "a pub").expect(0)
    cli("write", "notes/bar", "--blackboard", board, "--author", "bob", "--text", "now a cafe").expect(0)

    found = cli.ok("search", "Cafe", "--blackboard", board)
    with Blackboard(cli.db_url) as api:
        assert found == api.search("Cafe", blackboard_id=board).model_dump(mode="json")
    assert sorted(hit["key"] for hit in found) == ["notes/bar", "notes/cafe", "plan/x_y"]
    assert found[0]["key"] == "plan/x_y" and found[0]["score"] >= found[1]["score"] >= found[2]["score"]
    assert cli.ok("search", "pub", "--blackboard", board) == []  # notes/bar's first version is gone
    assert [h["key"] for h in cli.ok("search", "cafe", "--blackboard", board, "--prefix", "notes/",
                                     "--author", "ann", "--topic", "food", "--type", "note",
                                     "--filter", '{"status": "open"}')] == ["notes/cafe"]  # fmt: skip
    paged = cli.ok("search", "cafe", "--blackboard", board, "--limit", "1", "--offset", "1")
    assert paged == found[1:2]
    lines = cli("search", "cafe nine", "--blackboard", board).expect(0).stdout
    assert "notes/cafe" in lines and "plan/x_y" not in lines
    assert cli("search", "nowhere", "--blackboard", board).expect(0).stdout.strip() == "no entries found"

    cli("projection", "rebuild").expect(0)
    assert cli.ok("search", "Cafe", "--blackboard", board) == found

    exported = tmp_path / "board.json"
    cli("export", board, "--output", str(exported)).expect(0)
    other = make_cli(f"sqlite:///{tmp_path / 'other.db'}", tmp_path)
    other("import", str(exported)).expect(0)
    assert [h["key"] for h in other.ok("search", "Cafe", "--blackboard", board)] == [h["key"] for h in found]

    for args, field in (((" ",), "TEXT"), (("*&|!",), "TEXT"), (("x" * 1001,), "TEXT"),
                        (("cafe", "--limit", "0"), "--limit"), (("cafe", "--filter", "[1]"), "--filter")):  # fmt: skip
        refused = cli("search", *args, "--blackboard", board).expect(2)
        assert refused.stderr.startswith(f"blackboard: {field}: "), refused.stderr
    assert "no blackboard" in cli("search", "cafe", "--blackboard", "nowhere").expect(4).stderr
    assert json.loads(cli("--json", "search", "cafe", "--blackboard", board).stdout) == found
