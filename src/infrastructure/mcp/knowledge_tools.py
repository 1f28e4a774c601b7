"""The knowledge tools: write, read, list, resolve, topic, summary, and search for a person's server and a run."""

from __future__ import annotations

import time
from typing import Any, Literal

from pydantic import Field

from blackboard.application.errors import WaitTimedOut
from blackboard.application.fields import Seconds
from blackboard.application.knowledge.commands import (
    Key,
    ListEntries,
    Position,
    ReadEntry,
    ResolveEntry,
    SearchEntries,
    SummarizeBoard,
    WriteEntry,
)
from blackboard.domain.errors import InvalidInput, RuleViolation
from blackboard.domain.knowledge.entries import KeyInConflict
from blackboard.infrastructure import documents
from blackboard.infrastructure.mcp.schemas import derive, named, same
from blackboard.infrastructure.mcp.session import Progress, Session, build
from blackboard.infrastructure.mcp.tools import Tool

TOPIC = {
    "action": (
        Literal["subscribe", "poll"],
        Field(description="subscribe: start from now; poll: entries since"),
    ),
    "topic": (Key, Field(description="the topic (an entry key's characters)")),
    "since": (
        Position | None,
        Field(
            default=None,
            description="a log position (default: where this server's "
            "last subscribe or poll of the topic got to, else now)",
        ),
    ),
    "timeout_seconds": (Seconds, Field(default=0.0, description="wait this long for one")),
}


class KeptAsCandidate(RuleViolation):
    """The CLI's exit 3 on a conflict: the message names the key's holder; the entry goes with it."""

    def __init__(self, conflict: KeyInConflict) -> None:
        super().__init__(str(conflict))
        self.document = documents.jsonable(documents.entry(conflict.entry))


def write(session: Session, given: dict[str, Any], progress: Progress) -> Any:
    given.update(
        blackboard_id=session.board(given),
        author=session.agent or given.get("author"),
        token=session.token(given.get("signal_id")),
    )
    try:
        return documents.entry(session.knowledge.write(build(WriteEntry, {}, **given)))
    except KeyInConflict as conflict:
        raise KeptAsCandidate(conflict) from None


def read(session: Session, given: dict[str, Any], progress: Progress) -> Any:
    reader = given.pop("author", None)  # without --agent: who reads under a signal
    if given.get("signal_id") is not None and (session.agent or reader) is None:
        raise InvalidInput(
            "author", "is required with signal_id: the reader, who must be the signal's claimer"
        )
    if (
        given.get("signal_id") is not None or reader is not None
    ):  # the model refuses an author without a signal
        given.update(reader=session.agent or reader, token=session.token(given.get("signal_id")))
    given["blackboard_id"] = session.board(given)
    query = build(ReadEntry, {}, **given)
    if query.history:
        return [documents.history_version(r) for r in session.knowledge_queries.history(query)]
    return documents.entry(session.knowledge_queries.read(query))


def entries(session: Session, given: dict[str, Any], progress: Progress) -> Any:
    query = ListEntries(**{**given, "blackboard_id": session.board(given)})
    return documents.entries(session.knowledge_queries.entries(query))


def search(session: Session, given: dict[str, Any], progress: Progress) -> Any:
    query = SearchEntries(**{**given, "blackboard_id": session.board(given)})
    return documents.search_hits(session.knowledge_queries.search(query))


def search_run_board(session: Session, given: dict[str, Any], progress: Progress) -> Any:
    """A bound session's search: its run's board (the claimed signal's), whatever the server's --blackboard."""
    query = SearchEntries(**{**given, "blackboard_id": session.caller.board})
    return documents.search_hits(session.knowledge_queries.search(query))


def resolve(session: Session, given: dict[str, Any], progress: Progress) -> Any:
    given.update(blackboard_id=session.board(given), author=session.agent or given.get("author"))
    return documents.entry(session.knowledge.resolve(build(ResolveEntry, {}, **given)))


def summary(session: Session, given: dict[str, Any], progress: Progress) -> Any:
    return documents.summary(
        session.knowledge_queries.summary(SummarizeBoard(blackboard_id=session.board(given)))
    )


def topic(session: Session, given: dict[str, Any], progress: Progress) -> Any:
    """subscribe: remember now as the topic's position. poll: the entry versions published to the topic
    after `since`, waiting up to timeout_seconds for one, and the position to poll from next."""
    board, name = session.board(given), given["topic"]
    heading = {"blackboard_id": board, "topic": name}
    now = session.watcher.position(board)  # a board the session may not reach: refused here
    if given["action"] == "subscribe":
        session.positions[board, name] = now
        return {**heading, "position": now}
    since = given.get("since")
    since = since if since is not None else session.positions.get((board, name), now)
    timeout, started, found = given.get("timeout_seconds", 0.0), time.monotonic(), []
    while not found:
        left, seen = timeout - (time.monotonic() - started), session.watcher.position(board)
        try:
            found = session.watcher.watch_topic(board, name, since, max(0.0, min(left, 1.0)))
        except WaitTimedOut:
            if left <= 1.0:  # nothing published by the deadline: the log read up to `seen` held none
                since = max(since, seen)
                break
            progress(time.monotonic() - started, timeout, f"waiting for an entry on topic {name}")
    position = found[-1].position if found else since
    session.positions[board, name] = position
    return {**heading, "entries": [documents.published(r) for r in found], "position": position}


def knowledge_tools(with_agent: bool) -> list[Tool]:
    who = () if with_agent else ("author",)
    board = {"blackboard_id": "default: the server's --blackboard"}
    optional = ("blackboard_id", *who)
    return [
        Tool(
            "blackboard_write",
            "Write a new version of an entry key. A value that disagrees with the key's holder "
            "is kept as a conflict candidate: a tool error naming the holder. `signal_id`: the signal whose work "
            "it is (its key permissions apply).",
            derive(
                "WriteArguments",
                WriteEntry,
                same(
                    "key",
                    "value",
                    "entry_type",
                    "section",
                    "role",
                    "label",
                    "confidence",
                    "depends_on",
                    "topics",
                    "meta",
                    "replaces",
                    "signal_id",
                    "blackboard_id",
                    "correlation_id",
                    *who,
                ),
                optional=("blackboard_id",),
                notes=board,
            ),
            write,
        ),
        Tool(
            "blackboard_read",
            "Read an entry key's current version and its conflict candidates "
            "(`history`: every version; `at`: as it was right after that log position).",
            derive(
                "ReadArguments",
                ReadEntry,
                named(
                    "key", "history", "at", "signal_id", "blackboard_id", *(() if with_agent else ("reader",))
                ),
                optional=optional,
                notes=board,
            ),
            read,
        ),
        Tool(
            "blackboard_list",
            "List a board's current entries, filtered, in key order.",
            derive(
                "ListArguments",
                ListEntries,
                same(
                    "section",
                    "role",
                    "author",
                    "label",
                    "entry_type",
                    "topic",
                    "prefix",
                    "conflicts",
                    "at",
                    "limit",
                    "blackboard_id",
                ),
                optional=("blackboard_id",),
                notes=board,
            ),
            entries,
        ),
        Tool(
            "blackboard_resolve",
            "End a key's conflict with one candidate (`pick`) or a merged `value`, saying why.",
            derive(
                "ResolveArguments",
                ResolveEntry,
                same("key", "rationale", "pick", "value", "blackboard_id", "correlation_id", *who),
                optional=("blackboard_id",),
                notes=board,
            ),
            resolve,
        ),
        Tool(
            "blackboard_topic",
            "subscribe: start following a topic from now. poll: the entry versions published to "
            "it since then (or `since`), waiting up to timeout_seconds for one, and the position to poll from next.",
            derive(
                "TopicArguments",
                SummarizeBoard,
                same("blackboard_id"),
                optional=("blackboard_id",),
                own=TOPIC,
                notes=board,
            ),
            topic,
            waits=True,
        ),
        Tool(
            "blackboard_summary",
            "Count a board's entries by type and author and its signals by status; list its "
            "open conflicts; show its latest entry.",
            derive(
                "SummaryArguments",
                SummarizeBoard,
                same("blackboard_id"),
                optional=("blackboard_id",),
                notes=board,
            ),
            summary,
        ),
    ]


def search_tools(bound: bool = False) -> list[Tool]:
    """A person's server's search, and a bound session's (a runner's run): scoped to its run's board, the
    board it does not name. An agent's own server leaves it out: its tool list is at its cap of characters
    of JSON (tools.MAX_TOOLS_JSON; every request carries it); that agent searches with `blackboard search`
    (docs/mcp.md)."""
    fields = ("text", "section", "role", "author", "label", "entry_type", "topic", "prefix", "conflicts")
    fields += ("filter", "limit", "offset")
    if bound:
        return [
            Tool(
                "blackboard_search",
                "Find the current entries of this run's board holding every word of `text` (in the key, value "
                "strings, topics, author), best first, filtered as blackboard_list filters; `filter`: "
                "top-level value fields, each equal to the scalar given.",
                derive("BoundSearchArguments", SearchEntries, same(*fields)),
                search_run_board,
            )
        ]
    return [
        Tool(
            "blackboard_search",
            "Find a board's current entries holding every word of `text` (in the key, value strings, "
            "topics, author), best first, filtered as blackboard_list filters; `filter`: top-level "
            "value fields, each equal to the scalar given.",
            derive(
                "SearchArguments",
                SearchEntries,
                same(*fields, "blackboard_id"),
                optional=("blackboard_id",),
                notes={"blackboard_id": "default: the server's --blackboard"},
            ),
            search,
        )
    ]
