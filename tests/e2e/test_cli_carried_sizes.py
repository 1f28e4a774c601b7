"""What the board accepts, it can carry (issue 33, item 6): through each write path (a signal's context, a
completion's knowledge items, an entry's value, a LangGraph checkpoint, a LangGraph store value) the largest event the
write accepts exports with `blackboard export` and imports into an empty store with `blackboard import`, on SQLite
and on PostgreSQL; the smallest step past it is refused at the write, naming the field, in the import reader's words,
with nothing written. Before, a 20 MB context or a 14 MB LangGraph state was written and exported, and the import
refused the document (16 MiB per event): the archive was unusable."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from blackboard import Blackboard, InvalidInput
from blackboard.application.carried import DEPTH_RULE, MAX_DEPTH, MAX_EVENT_CHARS, SIZE_RULE
from blackboard.domain.knowledge.entries import MAX_VALUE_BYTES
from blackboard.langgraph import BlackboardSaver, BlackboardStore
from tests.conftest import _own_pg_database
from tests.e2e.conftest import Cli, database_url, empty_database, write_agents

AGENT = "ps-researcher"
ITEM = (
    MAX_VALUE_BYTES - 2
)  # the longest knowledge item: an entry's value is at most 1 MiB of JSON, quotes included


@pytest.fixture(scope="module")
def pg_other_url() -> Iterator[str]:
    """A PostgreSQL database of its own, beside the run's: the store a board is imported into."""
    yield from _own_pg_database()


@pytest.fixture(params=["sqlite", "postgresql"])
def stores(request, make_cli, tmp_path_factory, tmp_path) -> tuple[Cli, Cli]:
    """(the store a board is written and exported from, an empty store it is imported into)."""
    source = make_cli(database_url(request, tmp_path_factory, "carried"), tmp_path)
    if request.param == "sqlite":
        target = make_cli(f"sqlite:///{tmp_path / 'target.db'}", tmp_path)
    else:
        target = make_cli(request.getfixturevalue("pg_other_url"), tmp_path)
        empty_database(target.db_url)
    target("db", "upgrade").expect(0)
    return source, target


def deep(zeros: int) -> dict[str, Any]:
    """A value well within an entry's 1 MiB that an export writes sixteen MiB long: its zeros, nested 25 arrays
    deep, each on a line of its own, indented 62 spaces."""
    value: Any = [0] * zeros
    for _ in range(25):
        value = [value]
    return {"deep": value}


@dataclass(frozen=True)
class WritePath:
    """A write of the board whose event grows with `n` (a number of characters or bytes); `largest(n, size)`: the
    largest n it accepts, from a refused n and the size its refusal says the event would be."""

    field: str
    event_type: str
    over: int  # an n surely refused
    write: Callable[[Blackboard, str, int], None]
    largest: Callable[[int, int], int] = lambda n, size: n - (size - MAX_EVENT_CHARS)


def post_context(bb: Blackboard, board: str, n: int) -> None:
    bb.post("RESEARCH", "ps-1", "e-1", "large context", blackboard_id=board, context={"pad": "x" * n})


CLAIMED: dict[str, str] = {}  # board -> the signal its completions are tried on


def complete_items(bb: Blackboard, board: str, n: int) -> None:
    """Fifteen items as long as an item may be, and one of `n` characters: the completion holds them all."""
    if board not in CLAIMED:
        CLAIMED[board] = bb.post("RESEARCH", "ps-1", "e-1", "many findings", blackboard_id=board).signal_id
        bb.claim(CLAIMED[board], agent=AGENT, token="t-1")
    bb.complete(CLAIMED[board], agent=AGENT, token="t-1", knowledge_items=["k" * ITEM] * 15 + ["k" * n])


ZEROS = 255_000  # 510 KB of the value; 16.6 MB of its event as exported


def write_value(bb: Blackboard, board: str, n: int) -> None:
    bb.write("report/deep", {**deep(ZEROS), "pad": "x" * n}, blackboard_id=board, author="ps-a")


def put_store_value(bb: Blackboard, board: str, n: int) -> None:
    BlackboardStore(bb, blackboard_id=board).put(("docs",), "deep", {**deep(ZEROS), "pad": "x" * n})


def checkpoint(n: int) -> dict[str, Any]:
    made = empty_checkpoint()
    return {**made, "id": f"1ef{n:012d}", "channel_values": {"state": "s" * n}}


def put_checkpoint(bb: Blackboard, board: str, n: int) -> None:
    saver = BlackboardSaver(bb, board=board)
    saver.put({"configurable": {"thread_id": "big", "checkpoint_ns": ""}}, checkpoint(n), {}, {})


def largest_checkpoint(n: int, size: int) -> int:
    """The checkpoint's bytes (LangGraph's serializer's) are written in base64: 4 characters for 3 bytes. The largest
    state whose bytes fill whole groups of 3 within the bound."""
    stored = len(JsonPlusSerializer().dumps_typed(checkpoint(n))[1])
    envelope = size - 4 * -(-stored // 3)  # everything but the base64
    fits = 3 * ((MAX_EVENT_CHARS - envelope) // 4)  # bytes whose base64 ends exactly within the bound
    return n - (stored - fits)


PATHS = {
    "signal context": WritePath("context", "AgentSignalPosted", MAX_EVENT_CHARS, post_context),
    "knowledge items": WritePath("knowledge_items", "AgentSignalCompleted", ITEM, complete_items),
    "entry value": WritePath("value", "EntryWritten", 400_000, write_value),
    "LangGraph store value": WritePath("value", "EntryWritten", 400_000, put_store_value),
    "LangGraph checkpoint": WritePath(
        "checkpoint", "CheckpointSaved", 13_000_000, put_checkpoint, largest_checkpoint
    ),
}


def refused(path: WritePath, bb: Blackboard, board: str, n: int) -> InvalidInput:
    with pytest.raises(InvalidInput) as refusal:
        path.write(bb, board, n)
    return refusal.value


def said_size(refusal: InvalidInput, path: WritePath) -> int:
    found = re.fullmatch(
        rf"{path.field}: {re.escape(SIZE_RULE)}; its {path.event_type} would be (\d+) characters",
        str(refusal),
    )
    assert found, str(refusal)
    return int(found[1])


@pytest.mark.parametrize("name", PATHS)
def test_the_largest_event_a_write_accepts_exports_and_imports_and_one_step_more_is_refused_at_the_write(
    stores, tmp_path: Path, name: str
):
    source, target = stores
    path, board = PATHS[name], f"carry-{uuid.uuid4().hex[:8]}"
    with Blackboard(source.db_url, agents_dir=source.agents_dir) as bb:
        bb.post("RESEARCH", "ps-1", "e-0", "the board", blackboard_id=board)
        largest = path.largest(path.over, said_size(refused(path, bb, board, path.over), path))

        one_more = refused(path, bb, board, largest + 1)
        path.write(bb, board, largest)

    assert one_more.field == path.field and said_size(one_more, path) > MAX_EVENT_CHARS
    document = tmp_path / "board.json"
    source("export", board, "--output", str(document)).expect(0)
    exported = json.loads(document.read_bytes())
    written = [e for e in exported["events"] if e["event_type"] == path.event_type]
    assert len(written) == (2 if path.event_type == "AgentSignalPosted" else 1)  # the refused wrote nothing
    assert target.ok("import", str(document))["events"] == len(exported["events"])
    again = tmp_path / "again.json"
    target("export", board, "--output", str(again)).expect(0)
    assert again.read_bytes() == document.read_bytes()


def test_an_import_refuses_a_document_written_compactly_whose_export_would_be_too_long_and_writes_nothing(
    stores, tmp_path: Path
):
    source, target = stores
    board = f"carry-{uuid.uuid4().hex[:8]}"
    source.ok("write", "report/deep", "--blackboard", board, "--author", "ps-a", "--value", '{"deep": []}')
    document = tmp_path / "board.json"
    source("export", board, "--output", str(document)).expect(0)
    edited = json.loads(document.read_bytes())
    at = next(i for i, e in enumerate(edited["events"]) if e["event_type"] == "EntryWritten")
    edited["events"][at]["data"]["value"] = deep(ZEROS + 10_000)  # 530 KB here; an export writes 17 MB of it
    compact = tmp_path / "compact.json"
    compact.write_text(json.dumps(edited, separators=(",", ":")))

    refusal = target("import", str(compact)).expect(2)

    assert re.fullmatch(
        rf"blackboard: events\[{at}\]: {re.escape(SIZE_RULE)}; its EntryWritten would be \d+ characters\n",
        refusal.stderr,
    ), refusal.stderr
    target("export", board).expect(4)  # nothing was written


HOARDER = """---
name: ps-hoarder
capabilities: {RESEARCH: 0.95}
command: python3 hoard.py
---
Hands back more knowledge than one completion carries.
"""
HOARD = f"""import json, sys
sys.stdin.read()
print(json.dumps({{"knowledge_items": ["k" * {ITEM}] * 17}}))
"""


def test_a_worker_whose_handler_returns_more_than_a_completion_carries_fails_the_signal_saying_why(
    make_cli, tmp_path: Path
):
    agents = write_agents(tmp_path / "agents", {"ps-hoarder.md": HOARDER})
    (agents / "hoard.py").write_text(HOARD)
    cli = make_cli(f"sqlite:///{tmp_path / 'board.db'}", tmp_path, agents)
    signal = cli.post("--blackboard", "hoard", "--capability", "RESEARCH")["signal_id"]

    cli("worker", "--agent", "ps-hoarder", "--once").expect(0)

    shown = cli.ok("show", signal)
    assert shown["status"] == "FAILED", shown
    assert re.fullmatch(
        rf"handler output refused: knowledge_items: {re.escape(SIZE_RULE)}; its AgentSignalCompleted would be "
        r"\d+ characters",
        shown["result"]["error"],
    ), shown["result"]


def test_checkpoint_metadata_nested_to_the_bound_exports_and_imports_and_one_level_more_is_refused_at_put(
    stores, tmp_path: Path
):
    """LangGraph's checkpoint metadata is any JSON (no 32-level rule of the board's holds it): the nesting bound
    is the import reader's, as an export writes the event."""
    source, target = stores
    board = f"carry-{uuid.uuid4().hex[:8]}"

    def put(levels: int) -> None:
        value: Any = []
        for _ in range(levels - 1):
            value = [value]
        saver.put(
            {"configurable": {"thread_id": "deep", "checkpoint_ns": ""}},
            checkpoint(levels),
            {"deep": value},
            {},
        )

    with Blackboard(source.db_url, agents_dir=source.agents_dir) as bb:
        saver = BlackboardSaver(bb, board=board)
        deepest, refusal = MAX_DEPTH, None
        while True:  # from the bound down: the first a put accepts is the deepest
            try:
                put(deepest)
                break
            except InvalidInput as refused:
                deepest, refusal = deepest - 1, refused

    assert refusal is not None and str(refusal) == (
        f"metadata: {DEPTH_RULE}; its CheckpointSaved would nest more than {MAX_DEPTH} levels"
    )
    document = tmp_path / "board.json"
    source("export", board, "--output", str(document)).expect(0)
    target.ok("import", str(document))
    again = tmp_path / "again.json"
    target("export", board, "--output", str(again)).expect(0)
    assert again.read_bytes() == document.read_bytes()
