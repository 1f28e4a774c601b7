"""A compiled LangGraph graph given `BlackboardStore` as its store: its nodes' puts and searches are the
board's entries, through `invoke` and `ainvoke`."""

from __future__ import annotations

import asyncio
from typing import TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime


class State(TypedDict):
    user: str
    said: str
    found: int


def remember(state: State, runtime: Runtime) -> dict:
    namespace = ("users", state["user"])
    runtime.store.put(namespace, state["said"], {"text": state["said"]})
    return {"found": len(runtime.store.search(namespace, query="tea"))}


async def aremember(state: State, runtime: Runtime) -> dict:
    namespace = ("users", state["user"])
    await runtime.store.aput(namespace, state["said"], {"text": state["said"]})
    return {"found": len(await runtime.store.asearch(namespace, query="tea"))}


def test_a_graphs_nodes_remember_on_the_board(store):
    graph = (
        StateGraph(State).add_node("remember", remember).add_edge(START, "remember").add_edge("remember", END)
    )
    app = graph.compile(store=store)
    agraph = StateGraph(State).add_node("remember", aremember)
    aapp = agraph.add_edge(START, "remember").add_edge("remember", END).compile(store=store)

    assert app.invoke({"user": "ana", "said": "green tea", "found": 0})["found"] == 1
    assert app.invoke({"user": "ana", "said": "coffee", "found": 0})["found"] == 1
    assert asyncio.run(aapp.ainvoke({"user": "ana", "said": "more tea!", "found": 0}))["found"] == 2

    entries = store.board.entries(blackboard_id=store.blackboard_id)
    assert [(e.key, e.value, e.author) for e in entries] == [
        ("users/ana/coffee", {"text": "coffee"}, "ps-agent"),
        ("users/ana/green:20tea", {"text": "green tea"}, "ps-agent"),
        ("users/ana/more:20tea:21", {"text": "more tea!"}, "ps-agent"),
    ]
