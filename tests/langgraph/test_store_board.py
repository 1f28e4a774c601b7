"""What only the board gives a LangGraph store: every version with its author, compare-and-set, reads as of
a log position; the entry keys items map to (escaped, never colliding); and bad arguments refused with
LangGraph's exception where it has one, the board's otherwise, nothing written."""

from __future__ import annotations

import asyncio
import uuid

import pytest
from dependency_injector import providers
from langgraph.store.base import InvalidNamespaceError, PutOp, SearchOp

from blackboard import Closed, Conflict, InvalidInput, Refused
from blackboard.infrastructure.composition.container import Container
from blackboard.infrastructure.langgraph import store as store_module
from blackboard.infrastructure.langgraph.store import entry_key, item_of
from blackboard.infrastructure.persistence.event_store import SqlAlchemyEventStore
from blackboard.langgraph import BlackboardStore, ItemInConflict, VersionConflict
from tests.contract.stories import posts

NS = ("users", "alice")


def _deep(levels: int) -> dict:
    value: dict = {}
    for _ in range(levels):
        value = {"v": value}
    return value


def other(store: BlackboardStore, author: str) -> BlackboardStore:
    """Another agent's store on the same board."""
    return BlackboardStore(store.board, blackboard_id=store.blackboard_id, author=author)


def test_every_version_is_kept_with_its_author_a_deletion_too(store):
    bob = other(store, "ps-bob")
    store.put(NS, "prefs", {"theme": "dark"})
    bob.put(NS, "prefs", {"theme": "light"})  # another author overwrites: a new version, no conflict
    store.delete(NS, "prefs")
    bob.put(NS, "prefs", {"theme": "blue"}, author="ps-carol")

    history = store.history(NS, "prefs")

    assert [(v.version, v.author, v.value) for v in history] == [
        (1, "ps-agent", {"theme": "dark"}),
        (2, "ps-bob", {"theme": "light"}),
        (3, "ps-agent", None),
        (4, "ps-carol", {"theme": "blue"}),
    ]
    assert [v.status for v in history] == ["accepted"] * 4
    assert [v.position for v in history] == sorted(v.position for v in history)
    assert store.get(NS, "prefs").value == {"theme": "blue"}
    # the board's own view of the same key: the entry's history names the same authors
    board = store.board.history("users/alice/prefs", blackboard_id=store.blackboard_id)
    assert [v.author for v in board] == ["ps-agent", "ps-bob", "ps-agent", "ps-carol"]
    assert store.history(NS, "never-written") == []
    assert asyncio.run(store.ahistory(NS, "prefs")) == history


def test_compare_and_set_writes_only_over_the_version_it_names(store):
    store.put(NS, "plan", {"step": 1}, expected_version=0)  # 0: only if never written
    assert store.version(NS, "plan") == 1
    with pytest.raises(VersionConflict) as refused:
        store.put(NS, "plan", {"step": "again"}, expected_version=0)
    assert isinstance(refused.value, Refused)  # blackboard.Refused: exit code 3 on every interface
    assert "expected_version" in str(refused.value) and "at version 1, not 0" in str(refused.value)

    other(store, "ps-bob").put(NS, "plan", {"step": 2}, expected_version=1)
    with pytest.raises(VersionConflict):  # a stale version: someone wrote in between
        store.put(NS, "plan", {"step": "mine"}, expected_version=1)
    with pytest.raises(VersionConflict):
        asyncio.run(store.aput(NS, "plan", {"step": "mine"}, expected_version=1))

    assert [v.value for v in store.history(NS, "plan")] == [{"step": 1}, {"step": 2}]  # nothing written
    store.put(NS, "plan", {"step": 3}, expected_version=2)
    assert store.get(NS, "plan").value == {"step": 3}
    assert asyncio.run(store.aversion(NS, "plan")) == 3


def test_get_and_search_see_the_board_as_it_was_at_a_log_position(store):
    store.put(NS, "prefs", {"theme": "dark"})
    store.put(NS, "notes", {"n": 1})
    then = store.position()
    store.put(NS, "prefs", {"theme": "light"})
    store.delete(NS, "notes")
    store.put(("users", "bob"), "prefs", {"theme": "dark"})

    assert store.get(NS, "prefs", at=then).value == {"theme": "dark"}
    assert store.get(NS, "notes", at=then).value == {"n": 1}
    assert store.get(NS, "notes") is None
    assert store.get(("users", "bob"), "prefs", at=then) is None
    assert [(i.key, i.value) for i in store.search(("users",), at=then)] == [
        ("notes", {"n": 1}),
        ("prefs", {"theme": "dark"}),
    ]
    assert [i.key for i in store.search(("users",), filter={"theme": "dark"})] == ["prefs"]
    first = store.history(NS, "prefs")[0]
    assert asyncio.run(store.aget(NS, "prefs", at=first.position)).value == {"theme": "dark"}
    assert len(asyncio.run(store.asearch(("users",), at=then))) == 2


def test_created_at_starts_again_after_a_delete(store):
    store.put(NS, "k", {"v": 1})
    created = store.get(NS, "k").created_at
    store.put(NS, "k", {"v": 2})
    assert store.get(NS, "k").created_at == created
    store.delete(NS, "k")
    store.put(NS, "k", {"v": 3})
    again = store.get(NS, "k")
    assert again.created_at == again.updated_at > created


@pytest.mark.parametrize(
    ("namespace", "key", "board_key"),
    [
        (("users", "alice"), "prefs", "users/alice/prefs"),
        (("a/b",), "c", "a:2Fb/c"),
        (("a", "b"), "c", "a/b/c"),
        (("a",), "b/c", "a/b:2Fc"),
        (("a:2Fb",), "c", "a:3A2Fb/c"),  # an escape's own spelling is escaped in turn
        (("zoë", "x y"), "k.v1", "zo:C3:AB/x:20y/k.v1"),
        (("n",), "", "n/"),
        (("*", "%_"), "🙂", ":2A/:25_/:F0:9F:99:82"),
    ],
)
def test_each_item_has_one_entry_key_and_reads_back_from_it(namespace, key, board_key):
    assert entry_key(namespace, key) == board_key
    assert item_of(board_key) == (namespace, key)


def test_items_with_reserved_characters_never_collide_and_round_trip(store):
    items = [(("a/b",), "c"), (("a", "b"), "c"), (("a",), "b/c"), (("a:2Fb",), "c"), (("a",), "b:2Fc")]
    for n, (namespace, key) in enumerate(items):
        store.put(namespace, key, {"n": n})

    assert [store.get(ns, key).value for ns, key in items] == [{"n": n} for n in range(len(items))]
    assert {(i.namespace, i.key) for i in store.search((), limit=100)} == set(items)
    assert sorted(store.list_namespaces()) == [("a",), ("a", "b"), ("a/b",), ("a:2Fb",)]


def test_entries_written_through_other_interfaces_are_items_when_their_key_spells_one(store):
    board, bid = store.board, store.blackboard_id
    board.write("research_findings", {"x": 1}, blackboard_id=bid, author="ps-cli")  # no namespace
    board.write("findings/store", "an append-only log", blackboard_id=bid, author="ps-cli")
    board.write("a.b/c", {"x": 1}, blackboard_id=bid, author="ps-cli")  # "." in a label
    board.write("x/:41", {"x": 1}, blackboard_id=bid, author="ps-cli")  # not the one spelling of "A"
    board.write("x/:zz", {"x": 1}, blackboard_id=bid, author="ps-cli")  # no escape
    board.write("x//k", {"x": 1}, blackboard_id=bid, author="ps-cli")  # an empty label

    assert [(i.namespace, i.key, i.value) for i in store.search((), limit=100)] == [
        (("findings",), "store", {"value": "an append-only log"})
    ]
    assert store.list_namespaces() == [("findings",)]


def test_a_key_in_conflict_on_the_board_refuses_a_put_and_writes_nothing(store):
    board, bid = store.board, store.blackboard_id
    board.write("team/plan", {"by": "ana"}, blackboard_id=bid, author="ps-ana")
    with pytest.raises(Conflict):
        board.write("team/plan", {"by": "ben"}, blackboard_id=bid, author="ps-ben")

    with pytest.raises(ItemInConflict, match="team/plan is in conflict on the board .held by ps-ana."):
        store.put(("team",), "plan", {"by": "store"})
    assert isinstance(ItemInConflict("k", "x"), Refused)
    assert len(store.history(("team",), "plan")) == 2
    assert store.get(("team",), "plan").value == {"by": "ana"}  # the holder's value


def test_bad_arguments_raise_langgraphs_errors_or_the_boards_and_write_nothing(store):
    before = store.position()
    with pytest.raises(InvalidNamespaceError):
        store.put(("a.b",), "k", {"v": 1})
    with pytest.raises(InvalidNamespaceError):
        store.put((), "k", {"v": 1})
    with pytest.raises(InvalidNamespaceError):
        store.put(("langgraph",), "k", {"v": 1})
    with pytest.raises(InvalidNamespaceError):
        store.put(("langgraph",), "k", {"v": 1}, expected_version=0)
    with pytest.raises(InvalidNamespaceError):
        store.put(("a", ""), "k", {"v": 1}, expected_version=0)
    with pytest.raises(InvalidNamespaceError):
        store.batch([SearchOp(("a.b",))])
    with pytest.raises(InvalidNamespaceError):
        store.batch([PutOp((), "k", {"v": 1})])
    with pytest.raises(InvalidNamespaceError):
        store.get(("a.b",), "k", at=1)
    with pytest.raises(InvalidNamespaceError):
        store.history((1,), "k")  # type: ignore[arg-type]
    with pytest.raises(NotImplementedError, match="TTL is not supported"):
        store.put(NS, "k", {"v": 1}, ttl=5)
    with pytest.raises(NotImplementedError, match="TTL is not supported"):
        store.batch([PutOp(NS, "k", {"v": 1}, ttl=5)])

    with pytest.raises(InvalidInput, match="key: .* the board's keys hold at most 200"):
        store.put(NS, "é" * 40, {"v": 1})  # 40 characters, 240 once escaped
    with pytest.raises(InvalidInput, match="value: must be a mapping"):  # the good put before it: not written
        store.batch([PutOp(NS, "good", {"v": 1}), PutOp(NS, "k", ["not", "a", "mapping"])])  # type: ignore[list-item]
    with pytest.raises(InvalidInput, match="value: must be JSON"):
        store.put(NS, "k", {"v": {1, 2}})
    with pytest.raises(InvalidInput, match="limit: must be a whole number"):
        store.search(NS, limit=-1)
    with pytest.raises(InvalidInput, match="offset: must be a whole number"):
        store.list_namespaces(offset=-1)
    with pytest.raises(InvalidInput, match="max_depth: must be at least 1"):
        store.list_namespaces(max_depth=0)
    with pytest.raises(InvalidInput, match=r"filter: unsupported operator \$in"):
        store.search(NS, filter={"v": {"$in": [1]}})
    with pytest.raises(InvalidInput, match=r"filter: \$gt compares numbers"):
        store.search(NS, filter={"v": {"$gt": "a"}})
    with pytest.raises(InvalidInput, match="at: "):
        store.get(NS, "k", at=-1)
    with pytest.raises(InvalidInput, match="expected_version: "):
        store.put(NS, "k", {"v": 1}, expected_version=-1)
    with pytest.raises(InvalidInput, match="author: "):
        store.put(NS, "k", {"v": 1}, author="")

    with pytest.raises(InvalidInput, match="entry_type: must be one of query, finding"):
        BlackboardStore(store.board, blackboard_id=store.blackboard_id, entry_type="memo")

    assert store.position() == before  # nothing was written
    assert store.get(NS, "é" * 40) is None  # no item can be there: none, rather than an error
    assert store.search(("é" * 60,)) == []


@pytest.mark.parametrize(
    ("bad", "rule"),
    [
        ({"v": "a\x00b"}, "U\\+0000"),
        ({"v": "x" * (1024 * 1024)}, "at most 1048576 bytes"),
        ({"v": _deep(40)}, "at most 32 levels"),
        ({"v": {1, 2}}, "must be JSON"),
        ({"v": float("nan")}, "finite"),
    ],
)
def test_a_batch_whose_later_put_breaks_the_boards_value_rules_writes_none_of_its_puts(store, bad, rule):
    before = store.position()
    with pytest.raises(InvalidInput, match=f"value: .*{rule}"):
        store.batch([PutOp(NS, "first", {"v": 1}), PutOp(NS, "second", {"v": 2}), PutOp(NS, "bad", bad)])
    assert store.position() == before
    assert store.get(NS, "first") is None and store.get(NS, "second") is None


@pytest.mark.parametrize("page", [1, 100])
def test_query_is_the_boards_text_search_within_the_prefix_best_first(store, page, monkeypatch):
    monkeypatch.setattr(store_module, "SEARCH_PAGE", page)  # 1: every hit a read of its own
    store.put(
        ("docs", "a"), "log", {"title": "An append-only log", "body": "every write is an event", "n": 1}
    )
    store.put(("docs", "a"), "doc", {"title": "A document store", "body": "one row per key", "n": 2})
    store.put(("docs", "b"), "both", {"title": "Log or document?", "body": "an append log", "n": 3})
    store.put(("docs", "b"), "gone", {"title": "append log, deleted"})
    store.delete(("docs", "b"), "gone")
    store.put(("other",), "log", {"title": "append log elsewhere"})
    store.board.write("docs/plain", "append log", blackboard_id=store.blackboard_id, author="ps-cli")
    store.board.write("docsnotes", {"t": "append log"}, blackboard_id=store.blackboard_id, author="ps-cli")

    found = store.search(("docs",), query="append log")

    assert {(i.namespace, i.key) for i in found} == {
        (("docs", "a"), "log"),
        (("docs", "b"), "both"),
        (("docs",), "plain"),
    }
    assert all(isinstance(i.score, float) for i in found)
    assert [i.score for i in found] == sorted((i.score for i in found), reverse=True)
    assert [i.key for i in store.search(("docs",), query="append log", filter={"n": {"$gte": 2}})] == ["both"]
    assert [i.key for i in store.search(("docs", "a"), query="DOCUMENT")] == ["doc"]  # case aside
    assert store.search(("docs",), query="nowhere") == []
    pages = [i.key for o in range(3) for i in store.search(("docs",), query="append log", limit=1, offset=o)]
    assert pages == [i.key for i in found]
    assert [i.key for i in asyncio.run(store.asearch(("docs",), query="row key"))] == ["doc"]
    assert len(store.search(("docs",), query="")) == 4  # no text: every item, in entry key order

    everything = [i.key for i in store.search(("docs",))]
    for wordless in ("*", '" - ( ) : &|!', "\x00"):  # no word: no query, as InMemoryStore takes any text
        assert [i.key for i in store.search(("docs",), query=wordless)] == everything
    hits = {"log", "both", "plain"}
    wordy = "log append " + "? " * 600  # 1,211 characters, 2 words
    assert {i.key for i in store.search(("docs",), query=wordy)} == hits
    long = "append " + "log " * 300  # 1,207 characters: its first words up to 1,000, and no more
    assert {i.key for i in store.search(("docs",), query=long + "nowhere")} == hits
    assert store.search(("docs",), query="nowhere " + long) == []
    with pytest.raises(InvalidInput, match="at: text search reads the board as it is now"):
        store.search(("docs",), query="log", at=1)


def test_a_store_opened_from_a_url_closes_its_board_and_a_shared_board_stays_open(store, tmp_path):
    url = f"sqlite:///{tmp_path / 'own.db'}"
    with BlackboardStore(url, blackboard_id="own") as own:
        own.put(NS, "k", {"v": 1})
    with pytest.raises(Closed):
        own.get(NS, "k")
    with BlackboardStore(url, blackboard_id="own") as again:  # the same file, opened again
        assert again.get(NS, "k").value == {"v": 1}

    with BlackboardStore(store.board, blackboard_id=store.blackboard_id):
        pass
    assert store.get(NS, "k") is None  # the shared Blackboard is still open


def test_a_filtered_search_reads_in_the_database_and_keeps_the_store_s_rule(store):
    """A filter's string fields narrow the board's read (its limit too); every hit is still the store's
    filter's: 1 is True and 1.0, a missing field is None, a value that is no object is {"value": it}."""
    board, bid = store.board, store.blackboard_id
    for n in range(30):
        store.put(NS, f"k{n:02}", {"kind": "even" if n % 2 == 0 else "odd", "n": n % 3 == 1 or 1.0})
    board.write(entry_key(NS, "raw"), "even", blackboard_id=bid, author="ps-cli")  # no object

    def keys(**given) -> list[str]:
        return [i.key for i in store.search(NS, limit=4, **given)]

    assert keys(filter={"kind": "odd"}) == ["k01", "k03", "k05", "k07"]
    assert keys(filter={"kind": "odd"}, offset=13) == ["k27", "k29"]
    assert keys(filter={"kind": "even", "n": 1}) == ["k00", "k02", "k04", "k06"]  # True == 1 == 1.0
    assert keys(filter={"kind": "odd", "n": True}, offset=1) == ["k03", "k05", "k07", "k09"]
    assert keys(filter={"value": "even"}) == ["raw"]
    assert keys(filter={"kind": "even", "gone": None}, offset=14) == ["k28"]
    assert keys(filter={"kind": "none"}) == []


def test_reads_and_puts_see_the_items_the_log_holds_while_the_read_model_is_behind_it(store):
    """The store goes through the board's entry reads, which catch the read model up first: items put
    while the log is ahead of the rows (a bare append, an import), or after the rows were cleared (an
    interrupted rebuild), read back at once, and a compare-and-set put decides on their version."""
    on = Container()
    on.engine.override(providers.Object(store.board._parts.engine))
    bare, signal = f"bare-{store.blackboard_id}", uuid.uuid4().int % 2**31  # a signal id of its own
    try:
        store.put(NS, "prefs", {"theme": "dark"})
        SqlAlchemyEventStore(store.board._parts.engine).append(bare, 0, posts(bare, 1, first=signal))
        assert on.read_model().position() < store.position()
        store.put(NS, "plan", {"step": 1})
        assert store.get(NS, "plan").value == {"step": 1}
        assert [i.key for i in store.search(NS)] == ["plan", "prefs"]
        assert store.list_namespaces() == [NS]

        on.read_model().reset()
        assert store.get(NS, "prefs").value == {"theme": "dark"}
        on.read_model().reset()
        with pytest.raises(VersionConflict):
            store.put(NS, "plan", {"step": 2}, expected_version=0)
        store.put(NS, "plan", {"step": 2}, expected_version=1)
        on.read_model().reset()
        assert [i.value for i in store.search(NS, query="plan")] == [{"step": 2}]
    finally:
        on.projector().catch_up()


def test_a_search_prefix_matches_labels_case_and_all(store):
    """LangGraph's rule, as InMemoryStore keeps it: `("foo",)` is not `("Foo",)` (SQLite's LIKE ignored case)."""
    for namespace, key in [
        (("foo",), "a"),
        (("Foo",), "b"),
        (("FOO", "x"), "c"),
        (("foo_",), "d"),
    ]:  # `_` too
        store.put(namespace, key, {"note": "tea"})

    assert [(i.namespace, i.key) for i in store.search(("foo",))] == [(("foo",), "a")]
    assert [(i.namespace, i.key) for i in store.search(("Foo",))] == [(("Foo",), "b")]
    assert [i.key for i in store.search(("foo",), query="tea")] == ["a"]  # the text search's prefix too
    assert store.list_namespaces(prefix=("foo",)) == [("foo",)]
    assert store.list_namespaces(prefix=("FOO",)) == [("FOO", "x")]


def test_a_value_shaped_like_a_serialized_object_reads_back_as_the_data_it_is(store):
    """Items are JSON entries, never handed to a deserializer: what names a constructor is data."""
    shapes = {
        "lc1": {"lc": 1, "type": "constructor", "id": ["os", "system"], "kwargs": {"command": "touch x"}},
        "lc2": {"lc": 2, "type": "constructor", "id": ["os", "system"], "args": ["touch x"]},
    }
    for key, value in shapes.items():
        store.put(NS, key, value)
    assert {key: store.get(NS, key).value for key in shapes} == shapes
    assert {i.key: i.value for i in store.search(NS)} == shapes


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda s: s.put(("n\ud800",), "k", {"v": 1}), "namespace"),
        (lambda s: s.put(NS, "k\ud800", {"v": 1}), "key"),
        (lambda s: s.put(NS, "k", {"v": "\ud800"}), "value"),
        (lambda s: s.put(NS, "k", {"\ud800": 1}), "value"),
        (lambda s: s.put(NS, "k", {"v": 1}, author="\ud800"), "author"),
        (lambda s: s.delete(NS, "\ud800"), "key"),
        (lambda s: s.get(("\ud800",), "k"), "namespace"),
        (lambda s: s.search(("\ud800",)), "namespace"),
        (lambda s: s.list_namespaces(prefix=("\ud800",)), "namespace"),
        (lambda s: s.history(NS, "\ud800"), "key"),
        (lambda s: s.version(NS, "\ud800"), "key"),
        (lambda s: BlackboardStore(s.board, blackboard_id="b\ud800").get(NS, "k"), "blackboard_id"),
    ],
)
def test_a_lone_surrogate_in_any_text_is_invalid_input_naming_it_and_writes_nothing(store, call, field):
    before = store.position()
    with pytest.raises(InvalidInput) as refused:
        call(store)
    assert refused.value.field == field
    assert store.position() == before
