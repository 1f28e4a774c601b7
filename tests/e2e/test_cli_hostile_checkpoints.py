"""An export edited to carry LangGraph checkpoints whose bytes name a call (`os.system`, `subprocess.call`, ... through
msgpack extension types, and a pickle) imports, rebuilds and reads back on SQLite and PostgreSQL without running
anything: the board's saver reads stored bytes only as LangGraph's safe types and those it was told to allow, any
other type as the data it carries (docs/langgraph.md, "Stored bytes are data"). Before, the first `get_tuple` of the
thread ran the command."""

from __future__ import annotations

import base64
import json
import pickle
import uuid
from collections.abc import Iterator
from pathlib import Path

import ormsgpack
import pytest
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from blackboard import Blackboard, Refused
from blackboard.langgraph import BlackboardSaver, UnreadableValue
from tests.conftest import _own_pg_database
from tests.e2e.conftest import Cli, database_url, empty_database
from tests.integration.test_langgraph_checkpointer import graph, thread

# LangGraph's msgpack extension codes (langgraph.checkpoint.serde.jsonplus)
SINGLE_ARG, POSITIONAL, KEYWORDS, METHOD, PYDANTIC = 0, 1, 2, 3, 5


@pytest.fixture(scope="module")
def pg_other_url() -> Iterator[str]:
    """A PostgreSQL database of its own, beside the run's: the store a board is imported into."""
    yield from _own_pg_database()


@pytest.fixture(params=["sqlite", "postgresql"])
def stores(request, make_cli, tmp_path_factory, tmp_path) -> tuple[Cli, Cli]:
    """(the store a board is exported from, an empty store it is imported into)."""
    source = make_cli(database_url(request, tmp_path_factory, "hostile"), tmp_path)
    if request.param == "sqlite":
        target = make_cli(f"sqlite:///{tmp_path / 'target.db'}", tmp_path)
    else:
        target = make_cli(request.getfixturevalue("pg_other_url"), tmp_path)
        empty_database(target.db_url)
    target("db", "upgrade").expect(0)
    return source, target


def ext(code: int, *parts: object) -> ormsgpack.Ext:
    return ormsgpack.Ext(code, ormsgpack.packb(parts))


def blob(value: object) -> dict[str, str]:
    return {"type": "msgpack", "base64": base64.b64encode(ormsgpack.packb(value)).decode("ascii")}


class Touch:
    """What a pickle of this runs when it is loaded: `os.system("touch <path>")`."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self):
        import os

        return (os.system, (f"touch {self.path}",))


def test_an_export_edited_to_carry_calls_imports_rebuilds_and_reads_back_as_data_running_nothing(
    stores, tmp_path: Path
):
    source, target = stores
    board = f"lg-{uuid.uuid4().hex[:8]}"
    with Blackboard(source.db_url) as bb:
        app = graph(BlackboardSaver(bb, board=board))
        app.invoke({"said": ["hi"]}, thread("chat"))
        app.invoke({"said": ["hello"]}, thread("pickled"))
    document = tmp_path / "board.json"
    source("export", board, "--output", str(document)).expect(0)

    marker = {
        name: tmp_path / f"ran-{name}"
        for name in ("system", "call", "kw", "method", "model", "meta", "pickle")
    }
    exported = json.loads(document.read_text(encoding="utf-8"))
    hostile = {
        "said": [
            ext(SINGLE_ARG, "os", "system", f"touch {marker['system']}"),
            ext(POSITIONAL, "subprocess", "call", [["touch", str(marker["call"])]]),
            ext(KEYWORDS, "subprocess", "run", {"args": ["touch", str(marker["kw"])]}),
            ext(METHOD, "os", "system", f"touch {marker['method']}", "__call__"),
            ext(PYDANTIC, "os", "system", {"command": f"touch {marker['model']}"}, "model_validate_json"),
        ]
    }
    for event in exported["events"]:
        data = event["data"]
        if event["event_type"] == "CheckpointSaved" and data["thread_id"] == "chat":
            checkpoint = JsonPlusSerializer(allowed_msgpack_modules=None).loads_typed(
                (data["checkpoint"]["type"], base64.b64decode(data["checkpoint"]["base64"]))
            )
            data["checkpoint"] = blob({**checkpoint, "channel_values": hostile})
            note = ext(SINGLE_ARG, "os", "system", f"touch {marker['meta']}")
            data["metadata_blob"] = blob({**data["checkpoint_metadata"], "note": note})
        if event["event_type"] == "CheckpointWritesSaved" and data["thread_id"] == "chat":
            for write in data["writes"]:
                write["value"] = blob(ext(POSITIONAL, "subprocess", "call", [["touch", str(marker["call"])]]))
        if event["event_type"] == "CheckpointSaved" and data["thread_id"] == "pickled":
            data["checkpoint"] = {
                "type": "pickle",
                "base64": base64.b64encode(pickle.dumps(Touch(marker["pickle"]))).decode("ascii"),
            }
    document.write_text(json.dumps(exported), encoding="utf-8")

    assert target.ok("import", str(document))["blackboard_id"] == board  # stored as the facts they are
    target("projection", "rebuild").expect(0)  # folded back into the rows: nothing read, nothing run
    with Blackboard(target.db_url) as bb:
        saver = BlackboardSaver(bb, board=board)
        newest = saver.get_tuple(thread("chat"))
        assert newest.checkpoint["channel_values"]["said"] == [  # each call's arguments, as data
            f"touch {marker['system']}",
            [["touch", str(marker["call"])]],
            {"args": ["touch", str(marker["kw"])]},
            f"touch {marker['method']}",
            {"command": f"touch {marker['model']}"},
        ]
        assert newest.metadata["note"] == f"touch {marker['meta']}"
        every = list(saver.list(thread("chat")))
        assert every and all(t.pending_writes is not None for t in every)
        assert all(
            value == [["touch", str(marker["call"])]] for t in every for _, _, value in t.pending_writes
        )
        assert (
            saver.at(bb.position()).get_tuple(thread("chat")).checkpoint == newest.checkpoint
        )  # time travel
        saver.copy_thread("chat", "copy")
        assert saver.get_tuple(thread("copy")).checkpoint == newest.checkpoint
        assert graph(saver).get_state(thread("chat")).values["said"][0] == f"touch {marker['system']}"
        with pytest.raises(
            UnreadableValue, match="stored as 'pickle', which this saver's serializer does not read"
        ):
            saver.get_tuple(thread("pickled"))
        assert issubclass(UnreadableValue, Refused)

    assert [name for name, path in marker.items() if path.exists()] == []  # no command ran

    # the bytes were no dud: LangGraph's default serializer runs the first of them
    JsonPlusSerializer().loads_typed(("msgpack", ormsgpack.packb(hostile["said"][0])))
    assert marker["system"].exists()
