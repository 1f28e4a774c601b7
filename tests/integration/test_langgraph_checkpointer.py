"""`blackboard.langgraph.BlackboardSaver` against LangGraph's own conformance suite
(langgraph-checkpoint-conformance: every base capability and the extended ones it takes on), on SQLite and
PostgreSQL, and what the board adds: checkpoints are events (export/import, rebuild, time travel), prune and
delete_thread hide from reads what the log keeps, bad arguments are InvalidInput naming the argument."""

from __future__ import annotations

import asyncio
import base64
import operator
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Annotated, TypedDict

import pytest
from dependency_injector import providers
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import BASE_CAPABILITIES
from langgraph.checkpoint.serde.types import ERROR
from langgraph.graph import END, START, StateGraph

from blackboard import Blackboard, Closed, InvalidInput, Refused
from blackboard.application.errors import StoreUnavailable
from blackboard.infrastructure.composition.container import Container
from blackboard.infrastructure.persistence.checkpoints import CATCH_UPS, SqlCheckpoints
from blackboard.infrastructure.persistence.event_store import SqlAlchemyEventStore
from blackboard.langgraph import BlackboardSaver
from tests.contract.stories import posts
from tests.e2e.conftest import empty_database

EXTENDED = {"prune", "delete_for_runs", "copy_thread"}  # the extended capabilities it takes on


@dataclass(frozen=True)
class Plan:
    """A type of the application's: LangGraph's serializer stores it as its module, name and fields."""

    steps: list[str]
    done: bool = False


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def url(request, tmp_path_factory) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path_factory.mktemp('langgraph') / 'blackboard.db'}"
    url = request.getfixturevalue("pg_database_url")
    empty_database(url)  # a test before may have left the log ahead of the read model on the run's database
    return url


@pytest.fixture(scope="module")
def bb(url):
    """One store per module and database; each test on a board of its own."""
    with Blackboard(url) as opened:
        yield opened


def board() -> str:
    return f"lg-{uuid.uuid4().hex[:8]}"


def test_every_base_and_extended_capability_of_the_conformance_suite_passes(bb):
    where = board()

    @checkpointer_test(name=f"BlackboardSaver-{where}")
    async def saver():
        yield BlackboardSaver(bb, board=where)

    report = asyncio.run(validate(saver))
    failures = {name: r.failures for name, r in report.results.items() if r.failures}
    assert not failures, failures
    assert report.passed_all_base()
    assert {c.value for c in BASE_CAPABILITIES} | EXTENDED <= {
        name for name, r in report.results.items() if r.detected and r.passed
    }


class State(TypedDict):
    said: Annotated[list[str], operator.add]


def graph(saver: BlackboardSaver):
    """A real LangGraph graph: each invocation appends a turn to the thread's state."""

    def speak(state: State) -> dict:
        return {"said": [f"turn {len(state['said'])}"]}

    return (
        StateGraph(State)
        .add_node("speak", speak)
        .add_edge(START, "speak")
        .add_edge("speak", END)
        .compile(checkpointer=saver)
    )


def thread(thread_id: str) -> dict:
    return {"configurable": {"thread_id": thread_id}}


def everything(saver: BlackboardSaver) -> list[tuple]:
    """Every checkpoint reads see, with its writes, in a comparable form."""
    return [
        (
            t.config,
            t.parent_config,
            t.checkpoint["id"],
            t.checkpoint["channel_values"],
            t.metadata,
            t.pending_writes,
        )
        for t in saver.list(None)
    ]


def container_on(bb: Blackboard) -> Container:
    on = Container()
    on.engine.override(providers.Object(bb._parts.engine))
    return on


def test_a_graph_s_checkpoints_are_board_events_that_rebuild_export_import_and_time_travel_carry(
    bb, tmp_path
):
    where = board()
    saver = BlackboardSaver(bb, board=where)
    app = graph(saver)
    app.invoke({"said": ["hi"]}, thread("t-1"))
    after_first = bb.position()
    app.invoke({"said": ["again"]}, thread("t-1"))
    app.invoke({"said": ["other"]}, thread("t-2"))
    assert app.get_state(thread("t-1")).values == {"said": ["hi", "turn 1", "again", "turn 3"]}
    types = {e.event_type for e in bb.events(blackboard_id=where).root}
    assert {"CheckpointSaved", "CheckpointWritesSaved"} <= types
    live = everything(saver)
    assert len(live) == len(list(app.get_state_history(thread("t-1")))) + len(
        list(app.get_state_history(thread("t-2")))
    )

    # rebuild: the rows come back the same from the log
    container_on(bb).projector().rebuild()
    assert everything(saver) == live

    # time travel: the thread as it was after the first invocation
    past = saver.at(after_first)
    assert graph(past).get_state(thread("t-1")).values == {"said": ["hi", "turn 1"]}
    assert past.get_tuple(thread("t-2")) is None
    with pytest.raises(Refused):
        past.delete_thread("t-1")

    # export, then import into another store: the same checkpoints there
    exported = list(container_on(bb).transfer().export(where))
    with Blackboard(f"sqlite:///{tmp_path / 'other.db'}") as other:
        container_on(other).transfer().import_board(where, lambda: iter(exported))
        there = BlackboardSaver(other, board=where)
        assert everything(there) == live
        assert graph(there).get_state(thread("t-1")).values == app.get_state(thread("t-1")).values


def test_prune_and_delete_thread_hide_from_reads_what_the_log_keeps(bb):
    where = board()
    saver = BlackboardSaver(bb, board=where)
    app = graph(saver)
    for turn in range(3):
        app.invoke({"said": [f"say {turn}"]}, thread("long"))
    app.invoke({"said": ["keep me"]}, thread("kept"))
    history = [s.config["configurable"]["checkpoint_id"] for s in app.get_state_history(thread("long"))]
    before_prune = bb.position()
    kept_before = everything(saver.at(before_prune))

    saver.prune(["long"], keep_last=2)
    assert [t.checkpoint["id"] for t in saver.list(thread("long"))] == history[:2]
    assert app.get_state(thread("long")).values["said"][-1] == "turn 5"  # the newest still reads whole
    saver.prune(["long"])  # LangGraph's keep_latest
    assert [t.checkpoint["id"] for t in saver.list(thread("long"))] == history[:1]
    after_prune = bb.position()

    saver.delete_thread("long")
    assert saver.get_tuple(thread("long")) is None
    assert list(saver.list(thread("long"))) == []
    assert saver.list(thread("kept"))  # other threads untouched
    assert len(list(saver.list(thread("kept")))) == len(list(app.get_state_history(thread("kept"))))

    # the log keeps every fact: the past still reads them
    assert everything(saver.at(before_prune)) == kept_before
    assert [t.checkpoint["id"] for t in saver.at(after_prune).list(thread("long"))] == history[:1]
    types = [e.event_type for e in bb.events(blackboard_id=where).root]
    assert types.count("CheckpointsPruned") == 2 and types.count("CheckpointThreadDeleted") == 1
    saved = [e for e in bb.events(blackboard_id=where).root if e.event_type == "CheckpointSaved"]
    assert len(saved) == len(history) + len(list(app.get_state_history(thread("kept"))))

    # a thread started again after its deletion
    app.invoke({"said": ["anew"]}, thread("long"))
    assert app.get_state(thread("long")).values == {"said": ["anew", "turn 1"]}


def test_the_event_keeps_the_serializer_s_type_and_bytes_and_readable_json_metadata(bb):
    where = board()
    saver = BlackboardSaver(bb, board=where)
    stored = saver.put(
        {"configurable": {"thread_id": "t", "checkpoint_ns": ""}},
        {**empty_checkpoint(), "channel_values": {"blob": b"\x00\xff", "text": "é"}},
        {"source": "input", "step": -1, "parents": {}},
        {},
    )
    saver.put_writes(stored, [("blob", b"\x01")], "task-1")
    events = bb.events(blackboard_id=where).root
    saved = events[0].model_dump(mode="json")["data"]
    assert saved["checkpoint"]["type"] == "msgpack" and base64.b64decode(saved["checkpoint"]["base64"])
    assert saved["checkpoint_metadata"] == {"source": "input", "step": -1, "parents": {}}
    written = events[1].model_dump(mode="json")["data"]["writes"][0]
    assert written["value"] == {"type": "bytes", "base64": base64.b64encode(b"\x01").decode()}
    got = saver.get_tuple(stored)
    assert got.checkpoint["channel_values"] == {"blob": b"\x00\xff", "text": "é"}
    assert got.pending_writes == [("task-1", "blob", b"\x01")]


CONFIG = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}


def with_(**configurable: str) -> dict:
    return {"configurable": {**CONFIG["configurable"], **configurable}}


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda s: s.put({}, empty_checkpoint(), {}, {}), "config.configurable"),
        (lambda s: s.put({"configurable": {}}, empty_checkpoint(), {}, {}), "config.configurable.thread_id"),
        (
            lambda s: s.put({"configurable": {"thread_id": ""}}, empty_checkpoint(), {}, {}),
            "config.configurable.thread_id",
        ),
        (
            lambda s: s.put({"configurable": {"thread_id": "a\x1fb"}}, empty_checkpoint(), {}, {}),
            "config.configurable.thread_id",
        ),
        (
            lambda s: s.put({"configurable": {"thread_id": "x" * 201}}, empty_checkpoint(), {}, {}),
            "config.configurable.thread_id",
        ),
        (
            lambda s: s.put(
                {"configurable": {"thread_id": "t", "checkpoint_ns": "a\x00"}}, empty_checkpoint(), {}, {}
            ),
            "config.configurable.checkpoint_ns",
        ),
        (lambda s: s.put(CONFIG, {"id": 7}, {}, {}), "checkpoint.id"),
        (lambda s: s.put(CONFIG, "not a checkpoint", {}, {}), "checkpoint"),
        (
            lambda s: s.put(CONFIG, {**empty_checkpoint(), "channel_values": {"x": object()}}, {}, {}),
            "checkpoint",
        ),
        (lambda s: s.put_writes(CONFIG, [("ch", 1)], "task"), "config.configurable.checkpoint_id"),
        (
            lambda s: s.put_writes(
                {"configurable": {**CONFIG["configurable"], "checkpoint_id": "c"}}, "ab", "task"
            ),
            "writes",
        ),
        (
            lambda s: s.put_writes(
                {"configurable": {**CONFIG["configurable"], "checkpoint_id": "c"}}, [("ch", 1)], ""
            ),
            "task_id",
        ),
        (lambda s: s.delete_thread(None), "thread_id"),
        (lambda s: s.prune("t"), "thread_ids"),
        (lambda s: s.prune(["t"], strategy="keep_some"), "strategy"),
        (lambda s: s.prune(["t"], keep_last=0), "keep_last"),
        (lambda s: s.delete_for_runs("run"), "run_ids"),
        (lambda s: s.copy_thread("t", ""), "target_thread_id"),
        (lambda s: list(s.list(CONFIG, limit=-1)), "limit"),
        (lambda s: list(s.list(CONFIG, filter=["source"])), "filter"),
        (lambda s: s.at(-1), "at"),
        # a lone surrogate (bytes that were not UTF-8) in any text that reaches the database
        (lambda s: s.put(thread("t\ud800"), empty_checkpoint(), {}, {}), "config.configurable.thread_id"),
        (lambda s: s.get_tuple(thread("\udfff")), "config.configurable.thread_id"),
        (lambda s: list(s.list(thread("t\ud800"))), "config.configurable.thread_id"),
        (lambda s: s.get_tuple(with_(checkpoint_ns="\ud800")), "config.configurable.checkpoint_ns"),
        (
            lambda s: s.put(with_(checkpoint_ns="\ud800"), empty_checkpoint(), {}, {}),
            "config.configurable.checkpoint_ns",
        ),
        (lambda s: s.get_tuple(with_(checkpoint_id="\ud800")), "config.configurable.checkpoint_id"),
        (lambda s: s.put(CONFIG, {**empty_checkpoint(), "id": "c\ud800"}, {}, {}), "checkpoint.id"),
        (
            lambda s: list(s.list(None, before=with_(checkpoint_id="\ud800"))),
            "before.configurable.checkpoint_id",
        ),
        (lambda s: s.put_writes(with_(checkpoint_id="c"), [("ch", 1)], "task\ud800"), "task_id"),
        (lambda s: s.put_writes(with_(checkpoint_id="c"), [("ch", 1)], "task", "p\ud800"), "task_path"),
        (lambda s: s.put_writes(with_(checkpoint_id="c"), [("ch\ud800", 1)], "task"), "writes[0].channel"),
        (lambda s: s.delete_thread("t\ud800"), "thread_id"),
        (lambda s: s.prune(["t\ud800"]), "thread_ids[0]"),
        (lambda s: s.delete_for_runs(["r\ud800"]), "run_ids[0]"),
        (lambda s: s.copy_thread("t\ud800", "u"), "source_thread_id"),
        # in the metadata, which the event keeps as JSON (its event could no longer be loaded)
        (lambda s: s.put(CONFIG, empty_checkpoint(), {"note": "a\ud800"}, {}), "metadata"),
        (lambda s: s.put(CONFIG, empty_checkpoint(), {"\udfff": 1}, {}), "metadata"),
        (
            lambda s: s.put(CONFIG, empty_checkpoint(), {"run_id": "r\ud800", "at": datetime.now(UTC)}, {}),
            "metadata",
        ),
        (
            lambda s: s.put(
                {"configurable": CONFIG["configurable"], "metadata": {"who": "\ud800"}},
                empty_checkpoint(),
                {},
                {},
            ),
            "metadata",
        ),
        # the saver's own serializer takes the allowed types; a serde given takes its own
        (lambda s: BlackboardSaver(s.blackboard, s.board, allowed_types="Plan"), "allowed_types"),
        (lambda s: BlackboardSaver(s.blackboard, s.board, allowed_types=[("m",)]), "allowed_types[0]"),
        (
            lambda s: BlackboardSaver(s.blackboard, s.board, serde=s.serde, allowed_types=[Plan]),
            "allowed_types",
        ),
    ],
)
def test_bad_arguments_are_invalid_input_naming_the_argument_and_write_nothing(bb, call, field):
    where = board()
    saver = BlackboardSaver(bb, board=where)
    before = bb.position()
    with pytest.raises(InvalidInput) as refused:
        call(saver)
    assert refused.value.field == field
    assert bb.position() == before


def test_a_saver_needs_a_board_name_and_an_open_blackboard(bb):
    with pytest.raises(InvalidInput) as refused:
        BlackboardSaver(bb, board="bad\nboard")
    assert refused.value.field == "board"
    with pytest.raises(InvalidInput) as refused:
        BlackboardSaver(object(), board="b")
    assert refused.value.field == "blackboard"


def test_a_saver_of_a_closed_blackboard_raises_closed(url):
    with Blackboard(url) as opened:
        saver = BlackboardSaver(opened, board=board())
    with pytest.raises(Closed):
        saver.get_tuple(CONFIG)


def test_the_past_replayed_from_the_log_reads_as_the_rows_do_after_every_kind_of_write(bb):
    """Time travel folds the events with the domain's rules (domain/checkpoints.py), the rows with SQL: after
    repeated and special writes, a copy, a run's deletion, a prune and a thread's deletion, both read alike."""
    where = board()
    saver = BlackboardSaver(bb, board=where)
    parent = None
    for step, run in enumerate(["run-a", "run-a", "run-b", "run-c"]):
        config = {"configurable": {"thread_id": "t", "checkpoint_ns": "", **(parent or {})}}
        stored = saver.put(config, empty_checkpoint(), {"source": "loop", "step": step, "run_id": run}, {})
        parent = {"checkpoint_id": stored["configurable"]["checkpoint_id"]}
        saver.put_writes(stored, [("a", step), ("b", "x")], "task-1", "path")
        saver.put_writes(stored, [("a", "again"), ("b", "again")], "task-1", "path")  # kept as it was
        saver.put_writes(stored, [(ERROR, f"error {step}")], "task-2")
        saver.put_writes(stored, [(ERROR, f"error {step}, replaced")], "task-2")  # a special channel replaces
    child = saver.put(
        {"configurable": {"thread_id": "t", "checkpoint_ns": "child:1"}}, empty_checkpoint(), {}, {}
    )
    saver.put_writes(child, [("c", 1)], "task-3")
    saver.copy_thread("t", "copy")
    saver.delete_for_runs(["run-a"])
    saver.prune(["copy"], keep_last=2)
    saver.put({"configurable": {"thread_id": "gone", "checkpoint_ns": ""}}, empty_checkpoint(), {}, {})
    saver.delete_thread("gone")

    def by_thread(of: BlackboardSaver) -> dict[str, list[tuple]]:
        return {t: everything_of(of, t) for t in ("t", "copy", "gone")}

    def everything_of(of: BlackboardSaver, thread_id: str) -> list[tuple]:
        return [
            (t.config, t.parent_config, t.metadata, t.pending_writes)
            for t in of.list({"configurable": {"thread_id": thread_id}})
        ]

    live = by_thread(saver)
    assert live == by_thread(saver.at(bb.position()))
    newest = saver.get_tuple({"configurable": {"thread_id": "t", "checkpoint_ns": ""}})
    assert newest.pending_writes == [
        ("task-2", ERROR, "error 3, replaced"),
        ("task-1", "a", 3),
        ("task-1", "b", "x"),
    ]
    assert {m["run_id"] for _, _, m, _ in live["t"] if "run_id" in m} == {"run-b", "run-c"}
    assert len(live["copy"]) == 3  # 2 of the root namespace, 1 of child:1
    assert live["gone"] == []


@pytest.mark.parametrize("keep_last", [4, 5])
def test_prune_keeping_as_many_or_more_than_a_namespace_holds_hides_nothing(bb, keep_last):
    where = board()
    saver = BlackboardSaver(bb, board=where)
    parent: dict = {}
    for step in range(4):
        config = {"configurable": {"thread_id": "t", "checkpoint_ns": "", **parent}}
        stored = saver.put(config, empty_checkpoint(), {"step": step}, {})
        parent = {"checkpoint_id": stored["configurable"]["checkpoint_id"]}
    before = [t.checkpoint["id"] for t in saver.list(thread("t"))]
    assert len(before) == 4
    position = bb.position()
    saver.prune(["t"], keep_last=keep_last)
    assert [t.checkpoint["id"] for t in saver.list(thread("t"))] == before
    assert bb.position() == position  # nothing to hide: no event


def test_delete_for_runs_finds_a_checkpoint_whose_metadata_is_kept_as_a_blob(bb):
    where = board()
    saver = BlackboardSaver(bb, board=where)
    when = datetime.now(UTC)  # not JSON: the metadata goes in metadata_blob
    stored = saver.put(CONFIG, empty_checkpoint(), {"run_id": "r1", "when": when}, {})
    other = saver.put(CONFIG, empty_checkpoint(), {"run_id": "r2", "when": when}, {})
    saved = bb.events(blackboard_id=where).root[0].model_dump(mode="json")["data"]
    assert saved["metadata_blob"] and saved["checkpoint_metadata"] == {"run_id": "r1"}
    assert saver.get_tuple(stored).metadata["when"] == when  # reads still get the whole metadata
    saver.copy_thread("t", "copy")
    saver.delete_for_runs(["r1"])
    assert saver.get_tuple(stored) is None
    assert saver.get_tuple({"configurable": {**stored["configurable"], "thread_id": "copy"}}) is None
    assert saver.get_tuple(other).metadata == {"run_id": "r2", "when": when}


def test_a_thread_id_fits_the_stream_id_on_both_databases_and_a_longer_one_is_refused(bb):
    where = "b" * 200  # the longest board name
    saver = BlackboardSaver(bb, board=where)
    longest = {"configurable": {"thread_id": "x" * 200, "checkpoint_ns": "n" * 1000}}
    stored = saver.put(longest, empty_checkpoint(), {"run_id": "r" * 1000}, {})
    assert saver.get_tuple(stored).config == stored
    before = bb.position()
    for call, field in [
        (lambda: saver.put(thread("y" * 201), empty_checkpoint(), {}, {}), "config.configurable.thread_id"),
        (lambda: saver.copy_thread("x" * 200, "y" * 201), "target_thread_id"),
        (lambda: saver.prune(["y" * 201]), "thread_ids[0]"),
    ]:
        with pytest.raises(InvalidInput) as refused:
            call()
        assert refused.value.field == field and "at most 200 characters" in str(refused.value)
    assert bb.position() == before
    saver.delete_for_runs(["r" * 1000])  # a run id is not in a stream id: up to 1000 characters
    assert saver.get_tuple(stored) is None


def behind(bb: Blackboard) -> int:
    """Leave the read model behind the log, as an import or a bare append does (test_log_ordering): a post
    appended by the event store alone, which never folds. Returns the log position it reached."""
    other, signal = f"bare-{uuid.uuid4().hex[:8]}", uuid.uuid4().int % 2**31  # a signal id of its own
    recorded = SqlAlchemyEventStore(bb._parts.engine).append(other, 0, posts(other, 1, first=signal))
    assert container_on(bb).read_model().position() < recorded[-1].position
    return recorded[-1].position


def checkpoint(n: int) -> dict:
    return {**empty_checkpoint(), "id": f"1ef{n:05d}", "channel_values": {"said": [f"turn {n}"]}}


def test_a_listed_page_carries_each_checkpoint_s_own_writes_across_threads_and_namespaces(bb):
    """`list` reads the writes of a whole page in one statement per thread's namespace: each listed checkpoint
    has the writes `get_tuple` gives it (none for one without), in their order, whatever the page mixes,
    with `before` and `limit` too."""
    where = board()
    saver = BlackboardSaver(bb, board=where)
    n = 0
    for name in ("a", "b"):
        for ns in ("", "child"):
            config = {"configurable": {"thread_id": name, "checkpoint_ns": ns}}
            for _ in range(3):
                n += 1
                config = saver.put(config, checkpoint(n), {"step": n}, {})
                if n % 3:  # every third checkpoint has no writes
                    saver.put_writes(config, [("said", f"w{n}"), ("other", n)], task_id=f"task-{n}")
                    saver.put_writes(config, [("said", f"x{n}")], task_id=f"a-task-{n}")

    def own(t) -> list:
        return saver.get_tuple(t.config).pending_writes

    pages = [
        list(saver.list(None)),
        list(saver.list(thread("a"))),
        list(saver.list({"configurable": {"thread_id": "b", "checkpoint_ns": "child"}}, limit=2)),
        list(saver.list(thread("a"), before={"configurable": {"checkpoint_id": "1ef00005"}}, limit=3)),
    ]
    assert [len(p) for p in pages] == [12, 6, 2, 3]
    assert [t.checkpoint["id"] for t in pages[3]] == ["1ef00004", "1ef00003", "1ef00002"]
    for page in pages:
        for t in page:
            assert t.pending_writes == own(t)
            i = int(t.checkpoint["id"][3:])
            expected = {
                (f"task-{i}", "said", f"w{i}"),
                (f"task-{i}", "other", i),
                (f"a-task-{i}", "said", f"x{i}"),
            }
            assert set(t.pending_writes) == (expected if i % 3 else set())


def test_every_read_and_write_sees_what_was_recorded_while_the_read_model_was_behind_the_log(bb):
    """A put while the log is ahead of the read model (which its commit then leaves to the projector) is
    read back at once, sync and async, and deciding writes (put_writes, prune, delete_thread, copy_thread)
    see the rows as the log has them: the saver catches the read model up, as the board's queries do."""
    where = board()
    saver = BlackboardSaver(bb, board=where)
    try:
        behind(bb)
        first = saver.put(thread("t"), checkpoint(1), {"step": 1}, {})
        found = saver.get_tuple(thread("t"))
        assert found is not None and found.checkpoint["channel_values"] == {"said": ["turn 1"]}
        assert [t.checkpoint["id"] for t in saver.list(thread("t"))] == ["1ef00001"]

        behind(bb)
        saver.put_writes(first, [("said", "pending")], task_id="task-1")
        behind(bb)
        second = saver.put(first, checkpoint(2), {"step": 2}, {})
        behind(bb)
        assert saver.get_tuple(first).pending_writes == [("task-1", "said", "pending")]
        assert saver.get_tuple(thread("t")).config == second
        behind(bb)
        assert asyncio.run(saver.aget_tuple(thread("t"))).config == second

        async def listed() -> list[str]:
            return [t.checkpoint["id"] async for t in saver.alist(thread("t"))]

        behind(bb)
        assert asyncio.run(listed()) == ["1ef00002", "1ef00001"]

        behind(bb)
        saver.copy_thread("t", "copy")  # reads the source's rows
        assert [t.checkpoint["id"] for t in saver.list(thread("copy"))] == ["1ef00002", "1ef00001"]
        behind(bb)
        saver.prune(["t"])  # decides on the thread's rows: the older one goes
        assert [t.checkpoint["id"] for t in saver.list(thread("t"))] == ["1ef00002"]
        behind(bb)
        saver.delete_thread("copy")  # the thread's rows, as the log has them now, are deleted
        assert saver.get_tuple(thread("copy")) is None and list(saver.list(thread("copy"))) == []
    finally:
        container_on(bb).projector().catch_up()  # the module's other tests start from a live read model


def test_after_the_read_model_was_reset_reads_and_writes_see_every_checkpoint_of_the_log(bb):
    """An interrupted rebuild (the rows cleared, none folded back yet): the checkpoints are read from the
    rows folded again, and a run's deletion, a prune and a thread's deletion decide on them, not on the
    empty tables (which found nothing to delete)."""
    where = board()
    saver = BlackboardSaver(bb, board=where)
    try:
        config = thread("t")
        for n in range(1, 4):
            config = saver.put(config, checkpoint(n), {"run_id": f"run-{n}"}, {})
        live = everything(saver)
        container_on(bb).read_model().reset()
        assert everything(saver) == live
        container_on(bb).read_model().reset()
        saver.delete_for_runs(["run-3"])
        container_on(bb).read_model().reset()
        saver.prune(["t"])
        assert [t.checkpoint["id"] for t in saver.list(None)] == ["1ef00002"]
        container_on(bb).read_model().reset()
        saver.delete_thread("t")
        assert saver.get_tuple(thread("t")) is None and list(saver.list(None)) == []
    finally:
        container_on(bb).projector().catch_up()


def test_a_write_deciding_on_rows_the_log_keeps_outrunning_decides_nothing_and_says_try_again(bb):
    """Each catch-up found behind again (as if a rebuild started over each time): no decision on the rows,
    nothing recorded, StoreUnavailable (try again) after a few rounds; a put, which reads no rows, records."""
    where = board()
    BlackboardSaver(bb, board=where).put(thread("t"), checkpoint(1), {}, {})
    rounds = []
    log = SqlCheckpoints(bb._parts.engine, where, catch_up=lambda: rounds.append(1))  # never catches up
    try:
        container_on(bb).read_model().reset()
        position = bb.position()
        with pytest.raises(StoreUnavailable, match="nothing was recorded, try again"):
            log.append("t", lambda _version, _conn: pytest.fail("decided on rows behind the log"), {})
        assert len(rounds) == CATCH_UPS and bb.position() == position
        assert log.append("t", lambda _version, _conn: [], {}, reads_rows=False) == []
    finally:
        container_on(bb).projector().catch_up()


def test_a_value_of_a_type_the_saver_was_not_told_to_allow_reads_back_as_its_data(bb):
    """Strict by default: LangGraph's safe types come back as themselves, another type as its fields, and as
    itself only once allowed (by class, by name, or by LangGraph's own `with_allowlist`), time travel too."""
    where = board()
    value = {"plan": Plan(["read", "write"]), "when": datetime(2026, 1, 2, tzinfo=UTC), "ids": {1, 2}}
    stored = BlackboardSaver(bb, board=where).put(
        CONFIG, {**empty_checkpoint(), "channel_values": value}, {}, {}
    )

    def read(saver: BlackboardSaver) -> dict:
        return saver.get_tuple(stored).checkpoint["channel_values"]

    strict = read(BlackboardSaver(bb, board=where))
    assert strict == {**value, "plan": {"steps": ["read", "write"], "done": False}}
    assert isinstance(strict["when"], datetime) and strict["ids"] == {1, 2}
    for allowed in (
        BlackboardSaver(bb, board=where, allowed_types=[Plan]),
        BlackboardSaver(bb, board=where, allowed_types=[(Plan.__module__, "Plan")]),
        BlackboardSaver(bb, board=where).with_allowlist({(Plan.__module__, "Plan")}),
        BlackboardSaver(bb, board=where, allowed_types=[Plan]).at(bb.position()),
    ):
        assert read(allowed) == value and isinstance(read(allowed)["plan"], Plan)


def test_a_board_s_threads_are_its_own_beside_a_board_whose_name_differs_only_in_case(bb):
    """Time travel reads the board's threads by the prefix of their streams, exact on both databases (SQLite's
    LIKE ignored case: `saver.at()` of `lg-x` listed the threads of `LG-x`)."""
    name = uuid.uuid4().hex[:8]
    mine, theirs = BlackboardSaver(bb, board=f"lg-{name}"), BlackboardSaver(bb, board=f"LG-{name}")
    theirs.put(thread("theirs"), checkpoint(1), {}, {})
    mine.put(thread("mine"), checkpoint(2), {}, {})

    for saver in (mine, mine.at(bb.position())):
        assert [t.config["configurable"]["thread_id"] for t in saver.list(None)] == ["mine"]
        assert saver.get_tuple(thread("theirs")) is None
