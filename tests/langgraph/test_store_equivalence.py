"""The same scenario against LangGraph's own `InMemoryStore` and against `BlackboardStore` (SQLite and
PostgreSQL, sync and async): puts, overwrites, gets, deletes, a batch, searches with filters, limits and
offsets, and namespace listings with prefixes, suffixes, wildcards and depths give equal results.

The items go in in entry key order, so InMemoryStore's order (insertion) and the board's (entry key) agree;
the scenario leaves out InMemoryStore's quirks that are no part of BaseStore's contract (a get of an unknown
namespace lists it; a namespace whose last item was deleted stays listed)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langgraph.store.base import BaseStore, GetOp, Item, PutOp
from langgraph.store.memory import InMemoryStore

from blackboard.infrastructure.langgraph import store as store_module
from blackboard.infrastructure.langgraph.store import entry_key
from blackboard.langgraph import BlackboardStore

ITEMS: list[tuple[tuple[str, ...], str, dict[str, Any]]] = [
    (
        ("docs", "a"),
        "k1",
        {"type": "article", "status": "published", "n": 1, "tags": ["x", "y"], "meta": {"lang": "en"}},
    ),
    (
        ("docs", "a"),
        "k2",
        {"type": "article", "status": "draft", "n": 2, "tags": ["x"], "meta": {"lang": "fr"}},
    ),
    (("docs", "a"), "k3", {"type": "note", "n": 3, "meta": {"lang": "en", "by": "ana"}}),
    (("docs", "b", "c"), "k1", {"type": "article", "status": "published", "n": 5}),
    (("docs", "b"), "k1", {"type": "article", "status": "published", "n": 4.5}),
    (("docs", "b"), "k2", {"type": "note", "n": None, "status": "draft"}),
    (("users", "alice"), "prefs", {"theme": "dark", "langs": ["en", "de"]}),
    (("users", "alice"), "prefs/old", {"theme": "light"}),
    (("users", "bob"), "prefs", {"theme": "light", "n": 7}),
    (("users", "bob:x/y z"), "a b", {"theme": "dark", "n": 8}),
    (("users", "zoë"), "prefs", {"theme": "dark", "emoji": "🙂"}),
]


def shown(result: Any) -> Any:
    """A result as plain data: an item is its namespace, key and value (timestamps are each store's own)."""
    if isinstance(result, Item):
        return (tuple(result.namespace), result.key, result.value)
    if isinstance(result, list):
        return [shown(r) for r in result]
    return result


async def scenario(store: BaseStore, asynchronous: bool) -> list[Any]:
    seen: list[Any] = []

    async def call(name: str, *args: Any, **kwargs: Any) -> Any:
        if asynchronous:
            return await getattr(store, "a" + name)(*args, **kwargs)
        return getattr(store, name)(*args, **kwargs)

    async def note(name: str, *args: Any, **kwargs: Any) -> None:
        seen.append((name, args, kwargs, shown(await call(name, *args, **kwargs))))

    for namespace, key, value in sorted(ITEMS, key=lambda i: entry_key(i[0], i[1])):
        await call("put", namespace, key, value)
    for namespace, key, _ in ITEMS:
        await note("get", namespace, key)
    await note("get", ("docs", "a"), "missing")

    await call("put", ("docs", "a"), "k2", {**ITEMS[1][2], "status": "published", "n": 2.5})  # overwrite
    await note("get", ("docs", "a"), "k2")

    for prefix in [("docs",), (), ("docs", "a"), ("docs", "b"), ("do",), ("users",), ("nothing",)]:
        await note("search", prefix)
        await note("search", prefix, limit=100)
    # numeric comparisons where every item has a number (InMemoryStore raises on a missing one)
    for where in [
        {"n": {"$gt": 1, "$lte": 2.5}},
        {"n": {"$gte": 2.5}},
        {"n": {"$lt": 3}},
        {"n": {"$ne": 2.5}},
    ]:
        await note("search", ("docs", "a"), filter=where, limit=100)
    for where in [
        {"type": "article"},
        {"type": "article", "status": "published"},
        {"n": {"$eq": None}},
        {"n": None},
        {"n": 4.5},
        {"status": {"$ne": "draft"}},
        {"meta": {"lang": "en"}},
        {"meta": {"lang": "en", "by": "ana"}},
        {"tags": ["x", "y"]},
        {"tags": ["x"]},
        {"theme": "dark"},
        {"missing": "field"},
    ]:
        await note("search", ("docs",), filter=where, limit=100)
        await note("search", (), filter=where, limit=100)
    for limit, offset in [(1, 0), (2, 1), (3, 3), (10, 5), (5, 20), (0, 0)]:
        await note("search", ("docs",), limit=limit, offset=offset)
        await note("search", (), filter={"theme": "dark"}, limit=limit, offset=offset)

    await call("delete", ("docs", "a"), "k3")
    await call("delete", ("docs", "a"), "never-written")  # deleting nothing is no error
    await note("get", ("docs", "a"), "k3")
    await note("search", ("docs", "a"))
    await call("put", ("docs", "a"), "k3", {"type": "note", "n": 33})  # back after a delete
    await note("get", ("docs", "a"), "k3")

    for kwargs in [
        {},
        {"prefix": ("docs",)},
        {"prefix": ("users",)},
        {"prefix": ("docs", "b")},
        {"prefix": ("do",)},
        {"suffix": ("c",)},
        {"suffix": ("alice",)},
        {"prefix": ("users", "*")},
        {"prefix": ("*", "b")},
        {"suffix": ("*", "c")},
        {"prefix": ("docs",), "suffix": ("b",)},
        {"max_depth": 1},
        {"max_depth": 2},
        {"prefix": ("docs",), "max_depth": 2},
        {"limit": 2},
        {"limit": 2, "offset": 2},
        {"offset": 4},
        {"max_depth": 1, "limit": 1, "offset": 1},
    ]:
        await note("list_namespaces", **kwargs)

    # one batch: the get sees the item as it was before the batch, the last put of an item wins
    batch = [PutOp(("batch",), "k", {"v": 1}), GetOp(("batch",), "k"), PutOp(("batch",), "k", {"v": 2})]
    seen.append(("batch", shown(await store.abatch(batch) if asynchronous else store.batch(batch))))
    await note("get", ("batch",), "k")
    await note("get", ("never", "seen"), "k")  # last: InMemoryStore lists a namespace once a get names it
    return seen


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_the_board_store_answers_as_langgraphs_in_memory_store(
    store: BlackboardStore, asynchronous: bool, monkeypatch
):
    monkeypatch.setattr(
        store_module, "SEARCH_PAGE", 2
    )  # searches read 2, 8, 32... entries: pages are crossed
    expected = asyncio.run(scenario(InMemoryStore(), asynchronous))
    got = asyncio.run(scenario(store, asynchronous))

    assert len(got) == len(expected)
    for mine, theirs in zip(got, expected, strict=True):
        assert mine == theirs
    # the scenario saw something: items, filtered searches, pages and listings
    assert any(step[0] == "search" and len(step[-1]) > 3 for step in got)
    assert any(step[0] == "list_namespaces" and len(step[-1]) > 3 for step in got)


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_timestamps_come_from_the_entries(store: BlackboardStore, asynchronous: bool):
    async def run() -> tuple[Any, ...]:
        if asynchronous:
            await store.aput(("t",), "k", {"v": 1})
            first = await store.aget(("t",), "k")
            await store.aput(("t",), "k", {"v": 2})
            return first, await store.aget(("t",), "k"), await store.asearch(("t",))
        store.put(("t",), "k", {"v": 1})
        first = store.get(("t",), "k")
        store.put(("t",), "k", {"v": 2})
        return first, store.get(("t",), "k"), store.search(("t",))

    first, second, found = asyncio.run(run())
    versions = store.history(("t",), "k")

    assert first.created_at == first.updated_at == versions[0].written_at
    assert second.created_at == first.created_at  # created once; each put is a new updated_at
    assert second.updated_at == versions[1].written_at > first.updated_at
    assert (found[0].created_at, found[0].updated_at) == (second.created_at, second.updated_at)
